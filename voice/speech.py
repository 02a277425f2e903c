"""The speech engines' ports: what the voice loop and the transports need of a
recogniser and a voice, and what they hand back.

`voice.stt.WhisperSTT` and `voice.tts.PiperTTS` are the real engines; `voice.fakes`
has stand-ins that load nothing, for tests that are not about the engines.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class Transcript:
    text: str
    confidence: float  # mean token probability, 0 to 1
    audio_s: float
    decode_s: float
    # The beam's other readings, best first (`WhisperSTT(alternatives=N)`).
    alternatives: tuple[str, ...] = ()
    # Whisper's own probability that the audio holds no speech at all.
    no_speech: float = 0.0


@dataclass(frozen=True, slots=True)
class Word:
    """A word of a transcript and where the recogniser placed it, in seconds from the
    audio's start. Punctuation is a word of its own."""

    text: str
    start: float
    end: float


class SpeechToText(Protocol):
    """Hears 16 kHz PCM16 mono."""

    # Told each decode's seconds (the gateway's metrics); may be called from a thread.
    on_decode: Callable[[float], None] | None

    async def transcribe(
        self,
        pcm16: bytes,
        sample_rate: int = 16000,
        *,
        plain: bool = False,
        primer: str | None = None,
    ) -> Transcript:
        """`plain`: no biasing towards the vocabulary; `primer`: words to expect."""
        ...

    async def score(self, pcm16: bytes, texts: Sequence[str]) -> list[float]:
        """How well each text reads the audio (log-probability per token, higher is
        better), in the order given."""
        ...

    async def words(self, pcm16: bytes, text: str) -> list[Word]:
        """Where each word of `text` lies in the audio; [] when it cannot say."""
        ...


class TextToSpeech(Protocol):
    """Speaks PCM16 mono at `sample_rate`."""

    sample_rate: int
    # Told each synthesis' seconds, cache hits aside; may be called from a thread.
    on_synthesis: Callable[[float], None] | None

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        """`urgent`: the first piece of a reply, wanted sooner."""
        ...


@dataclass(frozen=True, slots=True)
class SpeechPart:
    """Some of a piece's audio, in order: PCM16 mono at the engine's `sample_rate`."""

    pcm: bytes
    done: float  # the share of the piece's audio said by the end of this part
    last: bool


@runtime_checkable
class PartedSpeech(Protocol):
    """A voice that can hand out a piece's first audio before the rest is made."""

    def speak(self, text: str) -> AsyncGenerator[SpeechPart, None]:
        """The piece in parts, the first as soon as it is ready (so, urgently)."""
        ...
