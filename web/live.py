"""Live calls: each caller's connection as a `calls` row, its recording, and takeover.

Every transport (a phone call, a browser's voice or text socket) opens a call
when the caller connects and closes it when they leave. While it is live an
operator may take it over: the caller's words are then recorded but not answered
by the agents, and the operator's typed replies are spoken in their place until
the call is handed back.

Over ~400 lines on purpose: opening, settling, recording, takeover and the calls a
lost gateway left all change the same live record, and the takeover rule must see
every one of those changes.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine as Database
from sqlmodel import Session as DbSession

from models.calls import (
    CallRow,
    Channel,
    call_messages,
    call_orders,
    end_lost_calls,
    settle,
)
from swarm import Engine, EventBus, Session
from voice.events import TurnMetricsEvent
from voice.recording import Recording
from voice.session import Anticipator, Responder, VoiceSession
from web.call_events import (
    CallEnded,
    CallEvent,
    CallStarted,
    HandedBack,
    OperatorSaid,
    TakenOver,
    TransferRequested,
    TurnTaken,
)

log = logging.getLogger("web.calls")

# An ended call whose row the database refused is written again after this, doubling.
SETTLE_RETRY_S = 1.0
SETTLE_RETRY_MAX_S = 60.0

OPERATOR_AGENT = "operator"  # the author of an operator's words in the history


class CallNotLive(LookupError):
    pass


class NotTakenOver(RuntimeError):
    pass


@dataclass
class LiveCall:
    id: str
    client_id: str
    channel: Channel
    caller: str
    started_at: datetime
    first_seq: int
    session: Session
    instance: str = ""
    # How the call's caller hears text: spoken on voice calls, sent on text sockets.
    speak: Callable[[str], Awaitable[None]] | None = None
    voice: VoiceSession | None = None
    # A text call's turn in progress: an operator who takes over stops it.
    turn: asyncio.Task[str] | None = None
    operator: str | None = None  # who holds the call now
    taken_over_by: str | None = None  # the last operator who held it, kept after hand-back
    transfer_requested: bool = False
    turns: int = 0
    recording: Recording | None = field(default=None, repr=False)
    # The disk would not take the recording (at the start, during or at the end).
    recording_lost: bool = False

    def row(self) -> CallRow:
        return CallRow(
            id=self.id,
            client_id=self.client_id,
            channel=self.channel.value,
            caller=self.caller,
            started_at=self.started_at,
            first_seq=self.first_seq,
            instance=self.instance,
        )

    def summary(self) -> dict[str, object]:
        return {
            "id": self.id,
            "client_id": self.client_id,
            "channel": self.channel.value,
            "caller": self.caller,
            "started_at": self.started_at.isoformat(),
            "instance": self.instance,
            "operator": self.operator,
        }


@dataclass(frozen=True)
class CallOptions:
    recordings: Path | None  # None: calls are not recorded
    max_recording_s: float = 3600
    # Tools whose call means the caller asked for a person: the call counts as transferred.
    transfer_tools: frozenset[str] = frozenset()
    instance: str = ""  # this gateway's name in `calls.instance`


class LiveCalls:
    def __init__(self, db: Database, engine: Engine, swarm: str, options: CallOptions) -> None:
        self._db = db
        self._engine = engine
        self._swarm = swarm
        self.options = options
        if options.recordings is not None:
            options.recordings.mkdir(parents=True, exist_ok=True)
        self._by_id: dict[str, LiveCall] = {}
        self._by_client: dict[str, LiveCall] = {}
        # (client id, call id, start, end) of calls that ended lately: the journal may
        # reach a call's last events only after the call is closed.
        self._ended: deque[tuple[str, str, float, float]] = deque(maxlen=2000)
        self._settling: set[asyncio.Task[None]] = set()  # ended calls the database missed

    @property
    def bus(self) -> EventBus:
        return self._engine.bus

    def __iter__(self) -> Iterator[LiveCall]:
        return iter(list(self._by_id.values()))

    def find(self, call_id: str) -> LiveCall | None:
        return self._by_id.get(call_id)

    def get(self, call_id: str) -> LiveCall:
        call = self._by_id.get(call_id)
        if call is None:
            raise CallNotLive(call_id)
        return call

    def call_of(self, client_id: str, at: float) -> str | None:
        """The call a caller was on at time `at` (a Unix time), if any."""
        call = self._by_client.get(client_id)
        if call is not None and call.started_at.timestamp() <= at:
            return call.id
        for client, call_id, start, end in reversed(self._ended):
            if client == client_id and start <= at <= end:
                return call_id
        return None

    def end_lost_calls(self) -> int:
        """At start-up (blocking): end the calls this instance left open when it last
        stopped without closing them. Returns how many."""
        with DbSession(self._db, expire_on_commit=False) as db:
            lost = end_lost_calls(db, self.options.instance, self.options.transfer_tools)
        self.announce_lost(lost)
        return len(lost)

    def announce_lost(self, lost: list[CallRow]) -> None:
        """Tell the console and the metrics of calls ended for a gateway that died
        (this one before a restart, or a peer, `web.peers`)."""
        for call in lost:
            log.warning(
                "call_lost call_id=%s client_id=%s instance=%s outcome=%s",
                call.id,
                call.client_id,
                call.instance,
                call.outcome,
            )
            self._tell(
                call.client_id,
                call.id,
                CallEnded,
                ended_by=call.ended_by,
                outcome=call.outcome,
                agents=tuple(_agents(call.agents)),
                instance=call.instance,
            )

    # --- a call's life -----------------------------------------------------------------------

    async def open(
        self,
        client_id: str,
        channel: Channel,
        *,
        caller: str = "",
        voice: VoiceSession | None = None,
        speak: Callable[[str], Awaitable[None]] | None = None,
    ) -> LiveCall:
        session = self._engine.session(client_id, self._swarm)
        session.hold()
        try:
            history = await session.get_raw_history()
        except BaseException:
            session.release()
            raise
        call = LiveCall(
            id=uuid.uuid4().hex,
            client_id=client_id,
            channel=channel,
            caller=caller or client_id,
            started_at=datetime.now(UTC),
            first_seq=history[-1].seq if history else 0,
            session=session,
            instance=self.options.instance,
            voice=voice,
            speak=speak or (voice.say if voice is not None else None),
        )
        if voice is not None and self.options.recordings is not None:
            try:
                call.recording = voice.recording = Recording(
                    max_s=self.options.max_recording_s, folder=self.options.recordings
                )
            except OSError as exc:  # a full or unwritable disk loses the recording only
                log.error("recording_unavailable call_id=%s error=%r", call.id, exc)
                call.recording_lost = True
        self._by_id[call.id] = call
        self._by_client[client_id] = call
        await self._save(call.row(), call.id)
        self._publish(
            call,
            CallStarted,
            channel=call.channel.value,
            caller=call.caller,
            started_at=call.started_at.isoformat(),
            instance=call.instance,
            operator=call.operator,
        )
        log.info("call_opened call_id=%s client_id=%s channel=%s", call.id, client_id, channel)
        return call

    async def close(self, call: LiveCall, *, ended_by: str) -> None:
        """The caller left: settle the row (outcome, agents, recording) and forget the call."""
        if self._by_id.pop(call.id, None) is None:
            return
        call.session.release()
        ended_at = datetime.now(UTC)
        # Before the call stops being current: the journal may still be saving its last
        # events, and must find them a call either way.
        self._ended.append(
            (call.client_id, call.id, call.started_at.timestamp(), ended_at.timestamp())
        )
        if self._by_client.get(call.client_id) is call:
            del self._by_client[call.client_id]
            # A caller may type and talk at once: their other call is the current one.
            others = [c for c in self._by_id.values() if c.client_id == call.client_id]
            if others:
                self._by_client[call.client_id] = others[-1]
        history = await call.session.get_raw_history()
        last_seq = history[-1].seq if history else 0
        recording = None
        if call.recording is not None and call.recording.failed is not None:
            log.error("recording_lost call_id=%s error=%r", call.id, call.recording.failed)
            call.recording_lost = True
        elif call.recording is not None and call.recording.duration > 0:
            assert self.options.recordings is not None
            recording = f"{call.id}.wav"
            path = self.options.recordings / recording
            try:
                await asyncio.to_thread(call.recording.save, path)
            except OSError as exc:
                log.error("recording_unsaved call_id=%s error=%r", call.id, exc)
                recording = None
                call.recording_lost = True
                with suppress(OSError):
                    path.with_suffix(".part").unlink(missing_ok=True)
        if call.recording is not None:
            call.recording.close()
        try:
            row = await asyncio.to_thread(
                self._finish, call, last_seq, ended_at, ended_by, recording
            )
        except Exception as exc:
            log.error("call_unsaved call_id=%s error=%r", call.id, exc)
            self._settle_later(
                call.id, partial(self._finish, call, last_seq, ended_at, ended_by, recording)
            )
            outcome: str | None = None
            agents: tuple[str, ...] | None = None
        else:
            outcome, agents = row.outcome, tuple(_agents(row.agents))
        self._publish(
            call,
            CallEnded,
            ended_by=ended_by,
            outcome=outcome,
            agents=agents,
            recording_lost=call.recording_lost,
        )
        log.info(
            "call_closed call_id=%s client_id=%s by=%s outcome=%s",
            call.id,
            call.client_id,
            ended_by,
            outcome,
        )
        if not any(c.client_id == call.client_id for c in self._by_id.values()):
            # The caller's next call may reach another gateway sharing the database: it
            # reads the whole conversation from there, and this one keeps no stale copy
            # to append to if they call back here.
            session = self._engine.sessions.get(call.client_id)
            if session is not None:
                await session.dispose(unless_held=True)

    def _settle_later(self, call_id: str, finish: Callable[[], CallRow]) -> None:
        """The call's row, which the database refused at its end, written again until it
        takes it: left as it was, the console showed the call live until a restart."""

        async def retry() -> None:
            delay = SETTLE_RETRY_S
            while True:
                await asyncio.sleep(delay)  # the backoff between real writes
                try:
                    await asyncio.to_thread(finish)
                except Exception as exc:
                    delay = min(delay * 2, SETTLE_RETRY_MAX_S)
                    log.error("call_unsaved call_id=%s error=%r retry_s=%g", call_id, exc, delay)
                    continue
                log.info("call_settled_late call_id=%s", call_id)
                return

        task = asyncio.get_running_loop().create_task(retry(), name=f"settle-{call_id}")
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def aclose(self) -> None:
        """At shutdown: rows still unsettled stay open, and the next start of this
        instance ends them (`end_lost_calls`)."""
        for task in list(self._settling):
            task.cancel()
        await asyncio.gather(*self._settling, return_exceptions=True)

    def _finish(
        self,
        call: LiveCall,
        last_seq: int,
        ended_at: datetime,
        ended_by: str,
        recording: str | None,
    ) -> CallRow:
        with DbSession(self._db, expire_on_commit=False) as db:
            row = db.get(CallRow, call.id) or call.row()
            row.last_seq, row.ended_at, row.ended_by = last_seq, ended_at, ended_by
            row.turns, row.recording = call.turns, recording
            row.operator, row.transfer_requested = call.taken_over_by, call.transfer_requested
            settle(row, call_messages(db, row), call_orders(db, row), self.options.transfer_tools)
            db.add(row)
            db.commit()
            return row

    async def _save(self, row: CallRow, call_id: str) -> None:
        def write() -> None:
            with DbSession(self._db) as db:
                db.add(row)
                db.commit()

        try:
            await asyncio.to_thread(write)
        except Exception as exc:
            # The call goes on; closing it writes the whole row again.
            log.error("call_unsaved call_id=%s error=%r", call_id, exc)

    # --- what happens during a call ----------------------------------------------------------

    def turn(self, client_id: str, event: TurnMetricsEvent) -> None:
        call = self._by_client.get(client_id)
        if call is None:
            return
        call.turns += 1
        self._publish(call, TurnTaken, transcript=event.transcript, metrics=event.metrics)

    def transfer_requested(self, client_id: str) -> None:
        call = self._by_client.get(client_id)
        if call is not None and not call.transfer_requested:
            call.transfer_requested = True
            self._publish(call, TransferRequested)

    def responder(self, client_id: str, agents: Responder) -> Responder:
        """The agents' replies, unless an operator holds the caller's live call."""
        return _Guarded(self, client_id, agents)

    def held(self, client_id: str) -> LiveCall | None:
        """The caller's call an operator holds, of any the caller has open (a text and a
        voice socket may share one conversation)."""
        return next(
            (c for c in self._by_id.values() if c.client_id == client_id and c.operator), None
        )

    async def to_operator(self, client_id: str, text: str) -> bool:
        """The takeover rule, for every transport: while an operator holds the caller's
        call, the caller's words wait in the history for them and no agent answers.
        True if the words went to the operator."""
        call = self.held(client_id)
        if call is None:
            return False
        await call.session.commit_user_message(text)
        return True

    # --- operator takeover -------------------------------------------------------------------

    async def take_over(self, call_id: str, operator: str) -> LiveCall:
        call = self.get(call_id)
        call.operator = call.taken_over_by = operator
        if call.voice is not None:
            await call.voice.interrupt()  # the agents' reply stops; the operator speaks next
        if call.turn is not None and not call.turn.done():
            # A text turn held the session's lock until the model was done, and its reply
            # still reached the caller after the takeover.
            call.turn.cancel()
            await asyncio.wait({call.turn})
        await call.session.commit_system_message(
            f"A member of staff ({operator}) took over the call and speaks to the caller."
        )
        self._publish(call, TakenOver, operator=operator)
        return call

    async def say(self, call_id: str, operator: str, text: str) -> None:
        call = self.get(call_id)
        if call.operator is None:
            raise NotTakenOver(call_id)
        await call.session.emit(text, author=OPERATOR_AGENT)
        self._publish(call, OperatorSaid, operator=operator, text=text)
        if call.speak is not None:
            await call.speak(text)

    async def hand_back(self, call_id: str, operator: str) -> LiveCall:
        call = self.get(call_id)
        if call.operator is None:
            raise NotTakenOver(call_id)
        call.operator = None
        await call.session.commit_system_message(
            f"The member of staff ({operator}) handed the call back to you."
        )
        self._publish(call, HandedBack, operator=operator)
        return call

    def _publish(self, call: LiveCall, kind: type[CallEvent], **fields: Any) -> None:
        self._tell(call.client_id, call.id, kind, **fields)

    def _tell(self, client_id: str, call_id: str, kind: type[CallEvent], **fields: Any) -> None:
        self.bus.publish(
            kind(
                session_id=client_id,
                agent="",
                seq=0,
                time=datetime.now(UTC).timestamp(),
                call_id=call_id,
                **fields,
            )
        )


class _Guarded:
    def __init__(self, calls: LiveCalls, client_id: str, agents: Responder) -> None:
        self._calls, self._client_id, self._agents = calls, client_id, agents

    async def reply(self, text: str) -> AsyncIterator[str]:
        if await self._calls.to_operator(self._client_id, text):
            return
        async for piece in self._agents.reply(text):
            yield piece

    async def interrupted(self, spoken: str) -> None:
        await self._agents.interrupted(spoken)

    async def anticipate(self, text: str) -> None:
        # An operator's call: no agent will read these words.
        if self._calls.held(self._client_id) is None and isinstance(self._agents, Anticipator):
            await self._agents.anticipate(text)


def _agents(joined: str) -> list[str]:
    return [a for a in joined.split(",") if a]
