"""The reply's echo on the caller's line is told apart from the caller, frame by frame."""

from __future__ import annotations

import numpy as np
import pytest

from voice.degrade import telephone
from voice.echo import EchoGate
from voice.vad import SpeechStarted, TurnDetector

from .speech import espeak, frames, piper, silence

REPLY = "We have three options for a headache. Paracetamol costs 2 dollars 99 for sixteen tablets."
FRAME = 640  # 20 ms at 16 kHz


def line(
    reply: bytes, caller: bytes, *, delay: int, gain: float, phone: bool, extra: int = 0
) -> list[bytes]:
    """The caller's line while `reply` plays: its echo, `delay` frames and `extra` samples
    late, plus `caller`."""
    out = []
    late = bytes(2 * extra) + reply
    for i, said in enumerate(frames(caller.ljust(len(reply), b"\0"))):
        j = i - delay
        echo = late[j * FRAME : (j + 1) * FRAME].ljust(FRAME, b"\0") if j >= 0 else silence(0.02)
        if phone:
            echo = telephone(echo)
        mixed = np.frombuffer(said.ljust(FRAME, b"\0"), "<i2") + gain * np.frombuffer(echo, "<i2")
        out.append(mixed.clip(-32768, 32767).astype("<i2").tobytes())
    return out


def judge(reply: bytes, heard: list[bytes]) -> list[bool]:
    gate = EchoGate(16000)
    judged = []
    for i, frame in enumerate(heard):
        gate.played(reply[i * FRAME : (i + 1) * FRAME], i * 0.02)
        gate.heard(frame)
        judged.append(gate.is_echo(i * 0.02))
    return judged


def loud(frame: bytes, level: float = 300.0) -> bool:
    samples = np.frombuffer(frame, "<i2").astype(float)
    return float(np.sqrt(np.mean(samples * samples))) >= level


@pytest.mark.parametrize(
    ("delay", "gain", "phone", "extra"),
    [
        (2, 0.5, False, 0),
        (12, 0.3, True, 0),
        (35, 0.4, False, 0),
        (12, 0.4, False, 1),
        (6, 0.4, True, 7),
    ],
)
def test_the_replys_echo_is_taken_for_echo(delay, gain, phone, extra) -> None:
    """Any delay: one of an odd number of samples falls between the 8 kHz samples."""
    reply = piper(REPLY)
    heard = line(reply, b"", delay=delay, gain=gain, phone=phone, extra=extra)
    judged = judge(reply, heard)
    echoed = [j for f, j in zip(heard, judged, strict=True) if loud(f)]
    assert len(echoed) > 100 and sum(echoed) >= 0.97 * len(echoed)
    # With the echo taken, the VAD hears no speech over the whole reply.
    detector = TurnDetector()
    events = [
        e for f, j in zip(heard, judged, strict=True) for e in detector.feed(f, echo=lambda j=j: j)
    ]
    assert not any(isinstance(e, SpeechStarted) for e in events)


@pytest.mark.parametrize("voice", ["en-us", "en-gb+f3"])
def test_the_caller_is_heard_alone_and_over_the_echo(voice) -> None:
    reply = piper(REPLY)
    caller = silence(0.6) + espeak("No, wait, I wanted ibuprofen instead.", voice)
    for gain in (0.0, 0.4):
        heard = line(reply, caller, delay=6, gain=gain, phone=False)
        judged = judge(reply, heard)
        said = [
            j
            for f, j in zip(frames(caller.ljust(len(reply), b"\0")), judged, strict=False)
            if loud(f)
        ]
        if gain == 0.0:
            assert not any(said)  # alone, never taken for the reply
        detector = TurnDetector()
        events = [
            e
            for f, j in zip(heard, judged, strict=True)
            for e in detector.feed(f, echo=lambda j=j: j)
        ]
        started = [e for e in events if isinstance(e, SpeechStarted)]
        assert started and 0.5 <= started[0].at <= 0.9  # heard, and from its start


def test_no_reply_lately_nothing_is_echo() -> None:
    gate = EchoGate(16000)
    reply = piper(REPLY)
    gate.played(reply[:FRAME], 0.0)
    # The same sound, but long after the reply stopped going out: the caller, not an echo.
    gate.heard(reply[:FRAME])
    assert not gate.is_echo(5.0)


def test_the_line_band_passed_when_asked_is_the_line_filtered_as_it_came() -> None:
    """The gate keeps the caller's line raw and band-passes its last window only when
    asked: the same samples as filtering every frame as it comes, whatever the frames'
    sizes, from the line's first frame on."""
    from voice.echo import _Band

    rng = np.random.default_rng(7)
    gate, band = EchoGate(16000), _Band()
    filtered = np.zeros(0)
    for n in range(400):
        size = 320 if n % 5 else int(rng.integers(1, 700))
        frame = rng.integers(-20000, 20000, size, dtype=np.int16).tobytes()
        gate.heard(frame)
        filtered = np.concatenate((filtered, band.process(frame)))[-int(16000 * 0.08) :]
        assert np.array_equal(gate._near(), filtered), n


def test_half_a_sample_is_refused_and_the_line_read_on_as_before() -> None:
    gate = EchoGate(16000)
    gate.heard(silence(0.02))
    with pytest.raises(ValueError, match="even number of bytes"):
        gate.heard(b"\x01\x02\x03")
    gate.heard(silence(0.02))
    assert gate._near().size == 640
