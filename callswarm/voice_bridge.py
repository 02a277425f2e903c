"""The one place voice meets the swarm and the database.

`SwarmResponder` makes a caller's swarm session a voice `Responder`;
`TurnRecorder` stores each voice turn's latencies with the caller's session;
`phone_hooks` gives a phone call the same session, keyed by the caller's number.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from sqlalchemy.engine import Engine as Database
from sqlmodel import Session as DbSession

from models.calls import Channel
from models.redact import REDACT, Redaction
from models.tables import TurnRow
from models.turns import record_turn
from swarm import Engine, Session, StoreWriter
from telephony import CallHooks
from voice.call import Finish
from voice.events import TurnMetricsEvent
from voice.session import VoiceSession
from web.live import LiveCalls

log = logging.getLogger("callswarm.voice")


class SwarmResponder:
    def __init__(self, session: Session) -> None:
        self.session = session

    async def reply(self, text: str) -> AsyncIterator[str]:
        async for piece in self.session.stream(text):
            yield piece

    async def interrupted(self, spoken: str) -> None:
        await self.session.revise_reply(spoken)

    async def anticipate(self, text: str) -> None:
        await self.session.anticipate(text)


class TurnRecorder:
    """Writes a turn's metrics; a database hiccup is retried, then kept for the next write."""

    def __init__(
        self, db: Database, client_id: str | None = None, redaction: Redaction = REDACT
    ) -> None:
        self._db = db
        self._redaction = redaction
        # Without a client id, each event's session id (the caller's client id) is used:
        # one recorder then serves a whole gateway.
        self.client_id = client_id
        self._writer = StoreWriter(client_id or "*", self._failed)

    async def record(self, event: TurnMetricsEvent) -> None:
        client_id = self.client_id or event.session_id
        metrics = dataclasses.asdict(event.metrics)
        transcript = self._redaction.text(event.transcript)
        row = TurnRow(client_id=client_id, transcript=transcript, **metrics)
        log.info(
            "turn_metrics client_id=%s v2v=%s stt=%s interrupted=%s",
            client_id,
            metrics["voice_to_voice_s"],
            metrics["stt_s"],
            metrics["interrupted"],
        )
        await self._writer.write(asyncio.to_thread, self._write, row)

    async def flush(self) -> bool:
        return await self._writer.flush()

    def _write(self, row: TurnRow) -> None:
        with DbSession(self._db, expire_on_commit=False) as db:
            record_turn(db, row.model_copy())

    def _failed(self, error: Exception) -> None:
        log.error("turn_metrics_unsaved client_id=%s error=%r", self.client_id or "*", error)


def turn_sink(
    recorder: TurnRecorder, calls: LiveCalls
) -> Callable[[str, TurnMetricsEvent], Awaitable[None]]:
    """Where a voice turn's metrics go: the caller's live call (the console shows them
    as they happen) and the turns table."""

    async def record(client_id: str, event: TurnMetricsEvent) -> None:
        calls.turn(client_id, event)
        await recorder.record(event)

    return record


def phone_hooks(
    engine: Engine,
    swarm: str,
    greeting: str,
    transfer_words: str,
    recorder: TurnRecorder,
    calls: LiveCalls,
) -> CallHooks:
    """A phone call's view of the caller's swarm session (keyed by their number), and
    its place among the console's live calls."""

    async def greet(client_id: str) -> str:
        # Every call is answered with the greeting, and it is part of the conversation.
        await engine.session(client_id, swarm).emit(greeting)
        return greeting

    async def operator(client_id: str) -> str:
        session = engine.session(client_id, swarm)
        await session.commit_system_message("The caller pressed 0: transfer to a person requested.")
        await session.emit(transfer_words)
        calls.transfer_requested(client_id)
        return transfer_words

    async def started(client_id: str, voice: VoiceSession) -> Finish:
        call = await calls.open(client_id, Channel.SIP, voice=voice)

        async def finish(ended_by: str) -> None:
            await calls.close(call, ended_by=ended_by)

        return finish

    return CallHooks(
        responder=lambda client_id: calls.responder(
            client_id, SwarmResponder(engine.session(client_id, swarm))
        ),
        greet=greet,
        operator=operator,
        record_turn=turn_sink(recorder, calls),
        started=started,
    )
