"""What the web layer is handed by the wiring: it builds none of it itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine as Database

from swarm import Engine
from voice.events import TurnMetricsEvent
from voice.session import Responder
from voice.stt import WhisperSTT
from voice.tts import PiperTTS
from voice.turn import EndOfTurn
from web.auth import OperatorAuth
from web.journal import Journal
from web.live import LiveCalls
from web.metrics import Metrics


@dataclass(frozen=True)
class Gateway:
    engine: Engine
    swarm: str
    db: Database
    greeting: str
    stt: WhisperSTT | None
    tts: PiperTTS | None
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
    # Judges whether a caller who paused is done; None: a fixed silence ends the turn.
    turn: EndOfTurn | None = None

    async def aclose(self) -> None:
        """After the server has stopped: the last calls' events saved, metrics stopped."""
        await self.journal.aclose()
        await self.metrics.aclose()
