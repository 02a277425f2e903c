import warnings

import numpy as np
import pytest

from voice.codecs import alaw_to_pcm16, pcm16_to_alaw, pcm16_to_ulaw, ulaw_to_pcm16
from voice.frames import AudioFrame
from voice.resample import StreamResampler, resample

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import audioop  # the reference implementation, still in Python 3.11

EVERY_SAMPLE = np.arange(-32768, 32768, dtype="<i2").tobytes()


def test_ulaw_matches_the_reference_for_every_sample() -> None:
    assert pcm16_to_ulaw(EVERY_SAMPLE) == audioop.lin2ulaw(EVERY_SAMPLE, 2)
    every_byte = bytes(range(256))
    assert ulaw_to_pcm16(every_byte) == audioop.ulaw2lin(every_byte, 2)


def test_alaw_matches_the_reference_for_every_sample() -> None:
    assert pcm16_to_alaw(EVERY_SAMPLE) == audioop.lin2alaw(EVERY_SAMPLE, 2)
    every_byte = bytes(range(256))
    assert alaw_to_pcm16(every_byte) == audioop.alaw2lin(every_byte, 2)


def test_frames_check_their_invariants() -> None:
    with pytest.raises(ValueError, match="even"):
        AudioFrame(b"\x00\x01\x02", 16000)
    with pytest.raises(ValueError, match="sample rate"):
        AudioFrame(b"\x00\x00", 11025)
    frame = AudioFrame(b"\x00\x00" * 320, 16000)
    assert frame.duration == pytest.approx(0.02)


def test_streamed_resampling_equals_one_shot_without_clicks_at_boundaries() -> None:
    t = np.arange(8000 * 2) / 8000
    tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype("<i2").tobytes()
    whole = resample(tone, 8000, 16000)
    stream = StreamResampler(8000, 16000)
    chunks = [tone[i : i + 320] for i in range(0, len(tone), 320)]
    pieces = b"".join(stream.process(c, last=(i == len(chunks) - 1)) for i, c in enumerate(chunks))
    a = np.frombuffer(whole, "<i2").astype(int)
    b = np.frombuffer(pieces, "<i2").astype(int)
    n = min(len(a), len(b))
    assert abs(len(a) - len(b)) <= 2
    # Chunked output is the same signal: no discontinuity at 20 ms boundaries.
    assert np.max(np.abs(a[100 : n - 100] - b[100 : n - 100])) <= 2
    # The steepest step of a 440 Hz tone of amplitude 8000 at 16 kHz is 2π·440·8000/16000;
    # a click at a boundary would exceed it.
    steepest = 2 * np.pi * 440 * 8000 / 16000
    assert np.max(np.abs(np.diff(b[100 : n - 100]))) <= steepest * 1.02
