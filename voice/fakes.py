"""Speech engines that load nothing: for tests of the loop, the transports and the
gateway that are not about recognition or synthesis (those keep the real engines).

`FakeTTS` speaks a voiced buzz, as long as the text would take to say, that the VAD
hears as speech; `FakeSTT` hears whatever it is told to, in order. A test of the
loop can then speak `FakeTTS` audio as its caller and script what was "heard".
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from voice.speech import Transcript, Word

RATE = 16000
# Speech runs near 13 characters a second; a reply's length in the fake follows it.
SECONDS_PER_CHAR = 1 / 13


def buzz(seconds: float, sample_rate: int = RATE, pitch: float = 140.0) -> bytes:
    """A voiced sound: a pitch with its harmonics under a syllable-rate swell, loud
    enough for webrtcvad to call speech."""
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    wave = sum(np.sin(2 * math.pi * pitch * k * t) / k for k in range(1, 12))
    swell = 0.55 + 0.45 * np.sin(2 * math.pi * 4.0 * t) ** 2  # ~4 syllables a second
    pcm = np.asarray(wave * swell, dtype=np.float64)
    peak = float(np.max(np.abs(pcm))) if len(pcm) else 1.0
    return (pcm / (peak or 1.0) * 12000).astype("<i2").tobytes()


class FakeTTS:
    def __init__(self, sample_rate: int = 22050) -> None:
        self.sample_rate = sample_rate
        self.on_synthesis: Callable[[float], None] | None = None
        self.spoken: list[str] = []  # every text asked for, in order

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        self.spoken.append(text)
        if self.on_synthesis is not None:
            self.on_synthesis(0.0)
        return buzz(max(0.2, len(text) * SECONDS_PER_CHAR), self.sample_rate)


class FakeSTT:
    """Hears the next of `lines` for each utterance; then nothing (an empty transcript,
    as a recogniser gives for a cough). `heard` keeps each utterance's audio."""

    def __init__(self, lines: Iterable[str] = (), *, confidence: float = 0.9) -> None:
        self._lines = deque(lines)
        self.confidence = confidence
        self.on_decode: Callable[[float], None] | None = None
        self.heard: list[bytes] = []

    def say(self, *lines: str) -> None:
        """More for it to hear, after what it has."""
        self._lines.extend(lines)

    async def transcribe(
        self,
        pcm16: bytes,
        sample_rate: int = RATE,
        *,
        plain: bool = False,
        primer: str | None = None,
    ) -> Transcript:
        self.heard.append(pcm16)
        text = self._lines.popleft() if self._lines else ""
        if self.on_decode is not None:
            self.on_decode(0.0)
        seconds = len(pcm16) / 2 / sample_rate
        return Transcript(
            text=text,
            confidence=self.confidence if text else 0.0,
            audio_s=seconds,
            decode_s=0.0,
            no_speech=0.0 if text else 1.0,
        )

    async def score(self, pcm16: bytes, texts: Sequence[str]) -> list[float]:
        # No reading is better than another: the loop's rules decide, not the fake.
        return [-1.0 for _ in texts]

    async def words(self, pcm16: bytes, text: str) -> list[Word]:
        """The words spread evenly over the audio."""
        said = text.split()
        seconds = len(pcm16) / 2 / RATE
        step = seconds / len(said) if said else 0.0
        return [Word(w, i * step, (i + 1) * step) for i, w in enumerate(said)]
