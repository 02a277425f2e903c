"""How likely any moment of a clip is to be speech, by a second model: Silero VAD.

webrtcvad, which cuts the caller's utterances, takes a cough, a sneeze or a door for
voice, and Whisper then writes words for them ("What?", "I don't know."). Silero is
trained to tell speech from such sounds. It ships inside the faster-whisper wheel
(`faster_whisper/assets/silero_vad_v6.onnx`), so it costs no download and no
dependency of its own. It only gives a second opinion on speech said over a reply
(`voice.overlap`): through the phone band in noise it misses short words that
webrtcvad and Whisper hear ("Sorry?" at 5 dB), so it never decides alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# Silero's window at 16 kHz.
WINDOW = 512

# The highest speech probability Silero gives any window of a clip of 16 kHz 16-bit PCM.
SpeechGauge = Callable[[bytes], float]


def silero_voiced(pcm16: bytes) -> float:
    """The highest speech probability of any 32 ms window of `pcm16` (16 kHz), by the
    Silero model faster-whisper ships. The model is loaded once; each call starts from
    a fresh state, so calls from several sessions do not mix."""
    from faster_whisper.vad import get_vad_model  # heavy: only where Whisper is loaded

    samples = np.frombuffer(pcm16[: len(pcm16) // 2 * 2], "<i2").astype(np.float32) / 32768
    if samples.size == 0:
        return 0.0
    padded = np.pad(samples, (0, -samples.size % WINDOW))
    return float(np.max(get_vad_model()(padded)))


def always_voiced(pcm16: bytes) -> float:
    """A gauge that takes everything for speech: the rule without a second opinion, for
    fakes and for tests of the words alone."""
    return 1.0
