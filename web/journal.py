"""The console's event journal: every swarm and call event, saved, then fanned out.

One task reads the swarm's bus, writes each batch of events to `call_events`
and only then hands the saved rows to the SSE listeners: an event a listener
sees always has its id in the database, so `Last-Event-ID` can replay from there.
A listener that falls behind is cut off rather than slowing anyone down; its
client reconnects with the last id it saw and the database fills the gap.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from sqlalchemy.engine import Engine as Database
from sqlmodel import Session as DbSession

from models.calls import EventRow
from models.redact import REDACT, Redaction
from swarm import EventBus, SwarmEvent, event_name
from web.call_events import CallEvent
from web.fanout import Fanout, announce, write_in_order

log = logging.getLogger("web.journal")

# Events kept for the next batch while the database is failing; past that, the oldest go.
MAX_UNSAVED = 20_000
_BASE_FIELDS = {f.name for f in dataclasses.fields(SwarmEvent)}


@dataclass(frozen=True)
class Entry:
    """A saved event as listeners and the REST API see it."""

    id: int
    call_id: str | None
    client_id: str
    kind: str
    agent: str
    at: datetime
    data: dict[str, Any]

    @classmethod
    def of(cls, row: EventRow) -> Entry:
        assert row.id is not None
        at = row.at if row.at.tzinfo else row.at.replace(tzinfo=UTC)
        return cls(row.id, row.call_id, row.client_id, row.kind, row.agent, at, row.data)

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "at": self.at.isoformat()}

    @cached_property
    def sse(self) -> str:
        """The event as SSE sends it: encoded once, however many listeners there are."""
        return f"id: {self.id}\ndata: {json.dumps(self.to_json())}\n\n"


class Listener:
    def __init__(self, hub: Hub, call_id: str | None, maxsize: int) -> None:
        self._hub = hub
        self.call_id = call_id
        self._maxsize = maxsize
        # One place more than entries may take: the end marker always fits, after the
        # last entry delivered, so a client that resumes from its last id misses nothing.
        self._queue: asyncio.Queue[Entry | None] = asyncio.Queue(maxsize + 1)
        self._ended = False

    def offer(self, entry: Entry) -> None:
        if self._ended or (self.call_id is not None and entry.call_id != self.call_id):
            return
        if self._queue.qsize() >= self._maxsize:
            # Too slow: stop here, and let the client resume from the database.
            log.warning("sse_listener_lagging call_id=%s", self.call_id)
            self.end()
            return
        self._queue.put_nowait(entry)

    def end(self) -> None:
        self._hub._listeners.discard(self)
        if not self._ended:
            self._ended = True
            self._queue.put_nowait(None)

    async def get(self) -> Entry | None:
        """The next entry; None once the listener is ended (lagging or shutdown)."""
        return await self._queue.get()

    async def batch(self) -> list[Entry | None]:
        """The next entry and every one already waiting behind it (the journal hands
        them out a database batch at a time): one write to the client for them all."""
        out = [await self._queue.get()]
        while out[-1] is not None and not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out


class Hub:
    def __init__(self, maxsize: int = 1000) -> None:
        self._listeners: set[Listener] = set()
        self._maxsize = maxsize
        self._changed = asyncio.Event()

    def listen(self, call_id: str | None = None) -> Listener:
        listener = Listener(self, call_id, self._maxsize)
        self._listeners.add(listener)
        self._signal()
        return listener

    def leave(self, listener: Listener) -> None:
        self._listeners.discard(listener)
        self._signal()

    def publish(self, entry: Entry) -> None:
        for listener in list(self._listeners):
            listener.offer(entry)

    @property
    def listeners(self) -> int:
        return len(self._listeners)

    async def wait_listeners(self, count: int) -> None:
        """Until exactly `count` listeners are connected (tests, and shutdown)."""
        while len(self._listeners) != count:
            self._changed.clear()
            await self._changed.wait()

    def close(self) -> None:
        for listener in list(self._listeners):
            listener.end()
        self._signal()

    def _signal(self) -> None:
        self._changed.set()


class Journal:
    def __init__(
        self,
        db: Database,
        bus: EventBus,
        call_of: Callable[[str, float], str | None],
        *,
        maxsize: int = 20_000,
        redaction: Redaction = REDACT,
    ) -> None:
        self._db = db
        # Events carry the caller's words (messages, tool arguments): stored and shown
        # to operators without card numbers or dates of birth.
        self._redaction = redaction
        # On PostgreSQL, gateways may share the database: every instance's events reach
        # this hub through the fan-out, this one's included, so all see one order.
        self.fanout = Fanout(db, self._publish_rows) if db.dialect.name == "postgresql" else None
        self._last_saved = 0
        self._call_of = call_of
        self._subscription = bus.subscribe(maxsize)
        self.hub = Hub()
        self._task: asyncio.Task[None] | None = None
        self._unsaved: list[dict[str, Any]] = []
        self._dropped = 0
        self._busy = False
        self._closing = False
        self._idle = asyncio.Event()

    def start(self) -> None:
        """On the running loop, at start-up (the fan-out reads where the journal stands)."""
        if self._task is None:
            if self.fanout is not None:
                self.fanout.start()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="journal")

    async def _run(self) -> None:
        while not (self._closing and self._subscription.empty):
            try:
                first = await self._subscription.get()
            except StopAsyncIteration:
                return
            self._busy = True
            try:
                batch = [first, *self._subscription.drain()]
                await self._save([self._row(event) for event in batch])
            finally:
                self._busy = False
                self._idle.set()
            if self._subscription.dropped != self._dropped:
                self._dropped = self._subscription.dropped
                log.error("journal_behind dropped_events=%d", self._dropped)

    async def _save(self, rows: list[dict[str, Any]]) -> None:
        rows = self._unsaved + rows
        self._unsaved = []
        try:
            saved = await asyncio.to_thread(self._insert, rows)
        except Exception as exc:
            # A database hiccup: keep the rows for the next batch (bounded), go on.
            self._unsaved = rows[-MAX_UNSAVED:]
            log.error("journal_unsaved events=%d error=%r", len(rows), exc)
        else:
            if saved:
                self._last_saved = saved[-1].id
            if self.fanout is None:
                for entry in saved:
                    self.hub.publish(entry)

    def _publish_rows(self, rows: list[EventRow]) -> None:
        for row in rows:
            self.hub.publish(Entry.of(row))

    def _row(self, event: SwarmEvent) -> dict[str, Any]:
        """The row's fields; rows are built only inside a database session, so a batch
        whose commit failed is retried from plain data."""
        if isinstance(event, CallEvent):
            kind, data = event.kind, event.data()
            call_id = event.call_id or self._call_of(event.session_id, event.time)
        else:
            kind = event_name(event)
            data = {k: v for k, v in dataclasses.asdict(event).items() if k not in _BASE_FIELDS}
            call_id = self._call_of(event.session_id, event.time)
        return {
            "call_id": call_id,
            "client_id": event.session_id,
            "kind": kind,
            "agent": event.agent,
            "at": datetime.fromtimestamp(event.time, UTC),
            "data": self._redaction.data(data),
        }

    def _insert(self, fields: list[dict[str, Any]]) -> list[Entry]:
        rows = [EventRow(**f) for f in fields]
        with DbSession(self._db, expire_on_commit=False) as db:
            if self.fanout is not None:
                write_in_order(db.connection())
            db.add_all(rows)
            if self.fanout is not None:
                announce(db.connection())  # delivered at commit, wherever it stands in it
            db.commit()
            return [Entry.of(row) for row in rows]

    async def settled(self) -> None:
        """Until every event published so far is saved (or kept unsaved) and handed out."""
        while self._task is not None and (self._busy or not self._subscription.empty):
            self._idle.clear()
            await self._idle.wait()
        if self.fanout is not None:
            await self.fanout.reached(self._last_saved)

    async def aclose(self) -> None:
        """Save what is queued, then end every listener."""
        self._closing = True
        self._subscription.close()
        if self._task is not None:
            with suppress(asyncio.CancelledError):
                await self._task
        if self._unsaved:
            await self._save([])  # one last try for what a hiccup held back
        if self.fanout is not None:
            # This instance's last events out to its own listeners, at most a moment.
            with suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await self.fanout.reached(self._last_saved)
            await self.fanout.aclose()
        self.hub.close()
