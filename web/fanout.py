"""Live events across gateways that share one PostgreSQL database.

Each gateway's journal writes its batch of events under one advisory lock and sends
`NOTIFY callswarm_events` in the same transaction, so journal ids are committed in
id order across every instance. Each gateway LISTENs, and on each notice reads the
rows after the last id it has handed out: its hub then carries every instance's
events, in id order, and a `Last-Event-ID` means the same on every instance. A
notice carries no data: a lost connection loses nothing, it only delays; once back,
the gateway reads everything after its cursor.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress

import psycopg
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.engine import Engine as Database
from sqlmodel import Session as DbSession

from models.calls import EventRow, call_events, last_event_id

log = logging.getLogger("web.fanout")

CHANNEL = "callswarm_events"
# Any fixed number, distinct from models.migrate's: journal writers take turns on it.
_WRITE_LOCK = 0x6A726E6C
PAGE = 500


def write_in_order(connection: Connection) -> None:
    """First thing in a journal transaction: writers queue here, so ids commit in order."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _WRITE_LOCK})


def announce(connection: Connection) -> None:
    """Last thing in a journal transaction: PostgreSQL delivers it only on commit."""
    connection.execute(text(f"NOTIFY {CHANNEL}"))


class Fanout:
    """Hands `publish` every instance's saved events, a page at a time, in id order."""

    def __init__(
        self, db: Database, publish: Callable[[list[EventRow]], None], *, retry_s: float = 1.0
    ) -> None:
        self._db = db
        self._publish = publish
        self._retry_s = retry_s
        self._conninfo = db.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._cursor = 0
        self._moved = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """From the events saved after this moment on (a blocking read, at start-up)."""
        self._cursor = self._last_id()
        self._task = asyncio.get_running_loop().create_task(self._run(), name="fanout")

    async def _run(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._conninfo, autocommit=True
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    log.info("fanout_listening cursor=%d", self._cursor)
                    await self._catch_up()  # what was committed while nobody listened
                    async for _ in conn.notifies():
                        await self._catch_up()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.error("fanout_disconnected cursor=%d error=%r", self._cursor, exc)
            # A pause before reconnecting to a database that just failed, not a test sync.
            await asyncio.sleep(self._retry_s)

    async def _catch_up(self) -> None:
        while True:
            rows = await asyncio.to_thread(self._read, self._cursor)
            if rows:
                self._publish(rows)
                async with self._moved:
                    self._cursor = rows[-1].id or self._cursor
                    self._moved.notify_all()
            if len(rows) < PAGE:
                return

    def _last_id(self) -> int:
        with DbSession(self._db) as db:
            return last_event_id(db)

    def _read(self, after: int) -> list[EventRow]:
        with DbSession(self._db) as db:
            return call_events(db, after=after, limit=PAGE)

    async def reached(self, event_id: int) -> None:
        """Until every event up to `event_id` has been handed out here."""
        async with self._moved:
            await self._moved.wait_for(lambda: self._cursor >= event_id)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
