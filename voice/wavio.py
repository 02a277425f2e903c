"""Reading and writing WAV files as mono PCM16."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np


def read_wav(path: Path) -> tuple[bytes, int]:
    """PCM16 mono and its rate; stereo is mixed down, 8-bit and 32-bit are converted."""
    with wave.open(str(path), "rb") as w:
        channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
        raw = w.readframes(w.getnframes())
    if width == 1:
        samples = (np.frombuffer(raw, np.uint8).astype(np.int32) - 128) << 8
    elif width == 2:
        samples = np.frombuffer(raw, "<i2").astype(np.int32)
    elif width == 4:
        samples = np.frombuffer(raw, "<i4").astype(np.int64) >> 16
    else:
        raise ValueError(f"{path}: {8 * width}-bit WAV is not supported")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes(), rate


def write_wav(path: Path, pcm: bytes, rate: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
