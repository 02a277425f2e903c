"""What the web layer is handed by the wiring: it builds none of it itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict
from sqlalchemy.engine import Engine as Database

from swarm import Engine
from voice.events import TurnMetricsEvent
from voice.session import Responder
from voice.speech import SpeechToText, TextToSpeech
from voice.turn import EndOfTurn
from web.auth import OperatorAuth
from web.callers import CallerKeys
from web.journal import Journal
from web.live import LiveCalls
from web.metrics import Metrics


class Stage(StrEnum):
    WAITING = "waiting"
    WARMING = "warming"
    READY = "ready"
    FAILED = "failed"


class Readiness(BaseModel):
    """`/api/ready`: the gateway serves at once; this says what is still loading."""

    model_config = ConfigDict(frozen=True)

    ready: bool  # every stage is done (ready or failed): no caller waits for a warm-up
    voice: bool  # Whisper and Piper are loaded: voice callers are greeted
    stages: Mapping[str, Stage]
    seconds: float  # since the gateway started


@dataclass(frozen=True, slots=True)
class VoiceEngines:
    stt: SpeechToText
    tts: TextToSpeech
    # Judges whether a caller who paused is done; None: a fixed silence ends the turn.
    turn: EndOfTurn | None = None


class Warming(Protocol):
    """What loads after the socket is open: the voice engines, then the models."""

    @property
    def has_voice(self) -> bool:
        """Voice is enabled (its engines may still be loading)."""
        ...

    def readiness(self) -> Readiness: ...

    async def voice(self) -> VoiceEngines:
        """The loaded engines, once they are; raises RuntimeError if they failed to load."""
        ...


class Warm:
    """Everything loaded before serving: tests, benchmarks, a text-only gateway."""

    def __init__(self, engines: VoiceEngines | None = None) -> None:
        self._engines = engines

    @property
    def has_voice(self) -> bool:
        return self._engines is not None

    def readiness(self) -> Readiness:
        return Readiness(ready=True, voice=self._engines is not None, stages={}, seconds=0.0)

    async def voice(self) -> VoiceEngines:
        if self._engines is None:
            raise RuntimeError("voice is not enabled on this gateway")
        return self._engines


@dataclass(frozen=True)
class Gateway:
    engine: Engine
    swarm: str
    db: Database
    greeting: str
    # A caller's swarm session as a voice responder, and where a turn's metrics go.
    responder: Callable[[str], Responder]
    record_turn: Callable[[str, TurnMetricsEvent], Awaitable[None]]
    # The operator console: live calls, the event journal behind SSE, sign-in.
    calls: LiveCalls
    journal: Journal
    auth: OperatorAuth
    metrics: Metrics
    info: dict[str, Any] = field(default_factory=dict)
    heartbeat_s: float = 15.0
    # Input limits: one message of audio is at most this many bytes (1 s at 48 kHz).
    max_audio_message: int = 96_000
    max_text_message: int = 4_000
    # The voice engines (perhaps still loading) and `/api/ready`; Warm(): text only.
    warming: Warming = field(default_factory=Warm)
    # Browser callers' signed ids (web/callers.py); by default a secret of this run's.
    callers: CallerKeys = field(default_factory=CallerKeys)

    async def aclose(self) -> None:
        """After the server has stopped: the last calls' events saved, metrics stopped."""
        await self.calls.aclose()
        await self.journal.aclose()
        await self.metrics.aclose()
