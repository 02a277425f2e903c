"""Audio frames: what every transport converts to and from at its edge."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SUPPORTED_RATES = frozenset({8000, 16000, 22050, 24000, 32000, 44100, 48000})


@dataclass(frozen=True, slots=True)
class AudioFrame:
    """Mono PCM16 little-endian audio with its rate and stream time (seconds).

    An ordered frame: an interruption drops the frames of a reply still queued.
    """

    pcm: bytes
    sample_rate: int
    timestamp: float = 0.0

    def __post_init__(self) -> None:
        if self.sample_rate not in SUPPORTED_RATES:
            raise ValueError(f"unsupported sample rate {self.sample_rate}")
        if len(self.pcm) % 2:
            raise ValueError(f"PCM16 needs an even number of bytes, got {len(self.pcm)}")

    @property
    def samples(self) -> np.ndarray:
        return np.frombuffer(self.pcm, dtype="<i2")

    @property
    def duration(self) -> float:
        return len(self.pcm) / 2 / self.sample_rate

    @classmethod
    def from_samples(
        cls, samples: np.ndarray, sample_rate: int, timestamp: float = 0.0
    ) -> AudioFrame:
        clipped = np.clip(samples, -32768, 32767).astype("<i2")
        return cls(clipped.tobytes(), sample_rate, timestamp)
