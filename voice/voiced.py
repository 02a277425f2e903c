"""How likely any moment of a clip is to be speech, by a second model: Silero VAD.

webrtcvad, which cuts the caller's utterances, takes a cough, a sneeze or a door for
voice, and Whisper then writes words for them ("What?", "I don't know."). Silero is
trained to tell speech from such sounds. It ships inside the faster-whisper wheel
(`faster_whisper/assets/silero_vad_v6.onnx`), so it costs no download and no
dependency of its own. It only gives a second opinion: on speech said over a reply
and on short turns (`voice.noise`), and on quiet stretches of a turn that webrtcvad
holds on through (`voice.vad`). Through the phone band in noise it misses short words
that webrtcvad and Whisper hear ("Sorry?" at 5 dB), so it is asked only about what the
other evidence already doubts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

# Silero's window at 16 kHz: the model takes no other size.
WINDOW = 512

# A gauge gives a speech probability for a clip (16 kHz PCM16): the highest of any window
# (`silero_voiced`), or the last window's (`silero_latest`, for the turn detector); a
# port, so tests and other recognisers can give their own.
SpeechGauge = Callable[[bytes], float]

_model: Any = None
# Two sessions' first asides at once must not each build an onnxruntime session.
_loading = threading.Lock()


def load_silero() -> Any:
    """The model, loaded once per process. The gateway loads it with Whisper at start,
    so no caller's first aside waits for it."""
    global _model
    with _loading:
        if _model is None:
            from faster_whisper.vad import get_vad_model  # heavy: only where Whisper is

            _model = get_vad_model()
        return _model


def silero_voiced(pcm16: bytes) -> float:
    """The highest speech probability of any 32 ms window of `pcm16` (16 kHz). Each call
    starts from a fresh state, so calls from several sessions do not mix."""
    samples = np.frombuffer(pcm16[: len(pcm16) // 2 * 2], "<i2").astype(np.float32) / 32768
    if samples.size == 0:
        return 0.0
    padded = np.pad(samples, (0, -samples.size % WINDOW))
    return float(np.max(load_silero()(padded)))


# How many windows `silero_latest` reads: one alone, Silero scored a steady hum 0.44 to
# 0.51 (90th percentile) and missed 14 % of speech below 0.15; read after three more,
# 0.05 at most, and no speech window below 0.15 (one sentence, hum and road at 10 and
# 5 dB SNR).
LATEST_WINDOWS = 4


def silero_latest(pcm16: bytes) -> float:
    """The speech probability of the last 32 ms window of `pcm16` (16 kHz), read after
    the windows before it (up to `LATEST_WINDOWS` in all): whether the line holds speech
    now. A fresh state each call, as `silero_voiced`."""
    tail = pcm16[-LATEST_WINDOWS * WINDOW * 2 :]
    samples = np.frombuffer(tail[: len(tail) // 2 * 2], "<i2").astype(np.float32) / 32768
    if samples.size == 0:
        return 0.0
    padded = np.pad(samples, (-samples.size % WINDOW, 0))  # whole windows, ending now
    return float(np.asarray(load_silero()(padded)).reshape(-1)[-1])
