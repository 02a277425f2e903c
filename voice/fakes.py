"""Speech engines that load nothing: for tests of the loop, the transports and the
gateway that are not about recognition or synthesis (those keep the real engines).

`FakeTTS` speaks a voiced buzz, as long as the text would take to say, that the VAD
hears as speech; `FakeSTT` hears whatever it is told to, in order. A test of the
loop can then speak `FakeTTS` audio as its caller and script what was "heard".
`loud_is_speech` is the second opinion on speech (`voice.voiced.SpeechGauge`) for the
same buzz, which Silero rightly takes for no speech.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence

import numpy as np

from voice.speech import SpeechPart, SpeechToText, TextToSpeech, Transcript, Word

RATE = 16000
# Speech runs near 13 characters a second; a reply's length in the fake follows it.
SECONDS_PER_CHAR = 1 / 13


def loud_is_speech(pcm16: bytes) -> float:
    """A `SpeechGauge` that loads nothing: anything louder than a quiet line is speech."""
    samples = np.frombuffer(pcm16[: len(pcm16) // 2 * 2], "<i2").astype(np.float64)
    return 1.0 if samples.size and np.abs(samples).max() > 1000 else 0.0


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

    async def speak(self, text: str) -> AsyncGenerator[SpeechPart, None]:
        """What `synthesize` says, in two parts as Piper's are: an odd-sized first
        quarter, then the rest."""
        pcm = await self.synthesize(text, urgent=True)
        cut = len(pcm) // 8 * 2 + 2
        yield SpeechPart(pcm[:cut], done=cut / len(pcm), last=False)
        yield SpeechPart(pcm[cut:], done=1.0, last=True)


class FakeSTT:
    """Hears the next of `lines` for each new utterance; then nothing (an empty
    transcript, as a recogniser gives a cough). Audio that is, or extends, or is the
    start of audio it heard before is the same utterance, heard the same way: a
    speculative decode at a pause, the turn's decode after it, and a second reading
    of an aside (primed or plain) all get one line. `heard` keeps each new
    utterance's audio."""

    def __init__(self, lines: Iterable[str] = (), *, confidence: float = 0.9) -> None:
        self._lines = deque(lines)
        self.confidence = confidence
        self.on_decode: Callable[[float], None] | None = None
        self.heard: list[bytes] = []
        self._said: list[str] = []  # what each of `heard` was heard as

    def say(self, *lines: str) -> None:
        """More for it to hear, after what it has."""
        self._lines.extend(lines)

    def _text_of(self, pcm16: bytes) -> str:
        for i in range(len(self.heard) - 1, -1, -1):
            before = self.heard[i]
            if before and pcm16 and (pcm16.startswith(before) or before.startswith(pcm16)):
                if len(pcm16) > len(before):
                    self.heard[i] = pcm16  # the utterance went on
                return self._said[i]
        text = self._lines.popleft() if self._lines else ""
        self.heard.append(pcm16)
        self._said.append(text)
        return text

    async def transcribe(
        self,
        pcm16: bytes,
        sample_rate: int = RATE,
        *,
        plain: bool = False,
        primer: str | None = None,
    ) -> Transcript:
        text = self._text_of(pcm16)
        if self.on_decode is not None:
            self.on_decode(0.0)
        return Transcript(
            text=text,
            confidence=self.confidence if text else 0.0,
            audio_s=len(pcm16) / 2 / sample_rate,
            decode_s=0.0,
            no_speech=0.0 if text else 1.0,
        )

    async def score(self, pcm16: bytes, texts: Sequence[str]) -> list[float]:
        """What this audio was heard as reads it best (0); anything else reads it badly."""
        said = self._text_of(pcm16)
        return [0.0 if text.strip() == said.strip() else -5.0 for text in texts]

    async def words(self, pcm16: bytes, text: str) -> list[Word]:
        """As Whisper gives them: a space before each word, punctuation a word of its
        own, spread evenly over the audio."""
        pieces = [
            (" " if piece[0].isalnum() else "") + piece
            for piece in re.findall(r"[\w'-]+|[^\w\s]", text)
        ]
        seconds = len(pcm16) / 2 / RATE
        step = seconds / len(pieces) if pieces else 0.0
        return [Word(w, i * step, (i + 1) * step) for i, w in enumerate(pieces)]


def engines(lines: Iterable[str] = ()) -> tuple[SpeechToText, TextToSpeech]:
    """A fresh pair, typed as the ports: mypy holds the fakes to them here."""
    return FakeSTT(lines), FakeTTS()
