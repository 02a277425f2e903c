"""What a phone line and a caller's room do to speech, for test callers and benchmarks.

Synthetic voices in clean audio are the easiest callers there are; real ones come
through 8 kHz G.711 with a television, a street or mains hum behind them. These
functions make that audio from clean 16 kHz PCM16, deterministically (seeded), so
a figure measured on it can be measured again.
"""

from __future__ import annotations

import numpy as np

from voice.codecs import pcm16_to_ulaw, ulaw_to_pcm16
from voice.resample import resample

RATE = 16000


def _samples(pcm16: bytes) -> np.ndarray:
    return np.frombuffer(pcm16, dtype="<i2").astype(np.float64)


def _pcm(samples: np.ndarray) -> bytes:
    return np.clip(np.round(samples), -32768, 32767).astype("<i2").tobytes()


def telephone(pcm16: bytes, rate: int = RATE) -> bytes:
    """Through the telephone band and back: down to 8 kHz, μ-law, up again."""
    narrow = resample(pcm16, rate, 8000)
    return resample(ulaw_to_pcm16(pcm16_to_ulaw(narrow)), 8000, rate)


def rms(pcm16: bytes) -> float:
    """Loudness of the voiced part: samples below 1 % of full scale are the pauses."""
    samples = _samples(pcm16)
    loud = samples[np.abs(samples) > 328]
    return float(np.sqrt(np.mean(loud * loud))) if loud.size else 0.0


def mix_at_snr(speech: bytes, noise: bytes, snr_db: float) -> bytes:
    """Speech with `noise` under it at `snr_db` (the noise looped or cut to length)."""
    s, n = _samples(speech), _samples(noise)
    if not n.size or not s.size:
        return speech
    n = np.resize(n, s.size)
    noise_rms = float(np.sqrt(np.mean(n * n))) or 1.0
    gain = rms(speech) / (noise_rms * 10 ** (snr_db / 20))
    return _pcm(s + gain * n)


def hum(seconds: float, mains: float = 50.0, seed: int = 0) -> bytes:
    """Mains hum: the fundamental and its odd harmonics, with a little hiss."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(RATE * seconds)) / RATE
    wave = sum(np.sin(2 * np.pi * mains * k * t) / k for k in (1, 3, 5, 7))
    return _pcm(3000 * wave + rng.normal(0, 100, t.size))


def street(seconds: float, seed: int = 0) -> bytes:
    """Traffic: brown noise (a rumble) with slow swells, as a passing car makes."""
    rng = np.random.default_rng(seed)
    n = int(RATE * seconds)
    brown = np.cumsum(rng.normal(0, 1, n))
    brown -= np.convolve(brown, np.ones(4001) / 4001, mode="same")  # no DC drift
    swell = 0.6 + 0.4 * np.sin(2 * np.pi * np.arange(n) / RATE / 3.7 + rng.uniform(0, 6))
    out = brown * swell
    return _pcm(out / (np.max(np.abs(out)) or 1.0) * 12000)


def babble(voices: list[bytes], seconds: float, seed: int = 0) -> bytes:
    """Several people talking at once: the given speech summed at random offsets."""
    rng = np.random.default_rng(seed)
    n = int(RATE * seconds)
    out = np.zeros(n)
    for pcm in voices:
        s = np.resize(_samples(pcm), n)
        out += np.roll(s, int(rng.integers(0, n)))
    return _pcm(out / (np.max(np.abs(out)) or 1.0) * 12000)
