"""What a voice session tells its transport. Frozen; each says whether it is urgent.

Urgent events (speech started, interrupted) must be acted on at once, ahead of
queued audio: on `InterruptedEvent` a transport drops the reply audio it still holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from voice.frames import AudioFrame
from voice.turn import TurnEnd


@dataclass(frozen=True, slots=True, kw_only=True)
class VoiceEvent:
    session_id: str
    time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechStartedEvent(VoiceEvent):
    """Urgent: the caller started speaking (confirmed, not a cough)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SpeechEndedEvent(VoiceEvent):
    duration: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TranscriptEvent(VoiceEvent):
    text: str
    confidence: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnJudgedEvent(VoiceEvent):
    """A pause was judged: the turn ends now, at the usual stop, or is held for more words.

    `probability` is the end-of-turn model's (None when it failed); `words` what the
    caller had said by the pause. `again`: a held pause judged once more at the usual
    stop, which ends it now or leaves it held."""

    end: TurnEnd
    probability: float | None
    words: str
    again: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyTextEvent(VoiceEvent):
    """Ordered: the sentence whose audio starts now."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyAudioEvent(VoiceEvent):
    """Ordered: one frame of reply audio, paced in real time."""

    frame: AudioFrame = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class InterruptedEvent(VoiceEvent):
    """Urgent: the reply was cut; drop queued audio. `spoken` is what the caller heard."""

    spoken: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyHeldEvent(VoiceEvent):
    """Urgent: the caller spoke over the reply; no more of it comes until they are heard.
    The gap that follows is meant, not an underrun."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyResumedEvent(VoiceEvent):
    """What the caller said over the reply was not for it (`heard`: "mm-hmm", a cough,
    the reply's own echo): it goes on where it stopped."""

    heard: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyDoneEvent(VoiceEvent):
    text: str


@dataclass(frozen=True, slots=True)
class TurnMetrics:
    """Seconds between the stages of one turn; None where a stage did not happen."""

    speech_s: float
    stt_s: float | None = None  # end of speech → transcript
    first_token_s: float | None = None  # transcript → first reply text
    first_audio_s: float | None = None  # first reply text → first reply audio
    voice_to_voice_s: float | None = None  # last voiced sample in → first reply audio out
    interrupted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnMetricsEvent(VoiceEvent):
    transcript: str
    metrics: TurnMetrics


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(VoiceEvent):
    message: str


def event_name(event: VoiceEvent | type[VoiceEvent]) -> str:
    cls = event if isinstance(event, type) else type(event)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__.removesuffix("Event")).lower()
