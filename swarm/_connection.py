"""Sessions for transports that push: replies leave through a `send` callback.

With `debounce`, messages that arrive within the window of each other are
merged into one turn, as when a caller's speech is cut into several pieces.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress

from swarm._handle import SessionHandle

log = logging.getLogger("swarm.connection")

Send = Callable[[str], Awaitable[None]]


class Connection:
    def __init__(
        self, session: SessionHandle, send: Send, *, debounce: float | None = None
    ) -> None:
        self.session = session
        self._send = send
        self._debounce = debounce
        self._buffer: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def client_id(self) -> str:
        return self.session.client_id

    def receive(self, text: str) -> None:
        """Take one message from the transport; its reply is sent when ready."""
        if self._debounce is None:
            self._start(text)
            return
        self._buffer.append(text)
        if self._timer:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self._debounce, self._release)

    def _release(self) -> None:
        merged, self._buffer, self._timer = " ".join(self._buffer), [], None
        self._start(merged)

    def _start(self, text: str) -> None:
        task = asyncio.get_running_loop().create_task(self._turn(text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _turn(self, text: str) -> None:
        try:
            reply = await self.session.complete(text)
            if reply:
                await self._send(reply)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("connection_turn_failed client_id=%s", self.client_id)

    async def execute(self, instruction: str) -> None:
        reply = await self.session.execute(instruction)
        if reply:
            await self._send(reply)

    async def emit(self, text: str) -> None:
        reply = await self.session.emit(text)
        if reply:
            await self._send(reply)

    async def drain(self) -> None:
        """Wait until every received message has been answered (debounced ones included)."""
        while self._tasks or self._timer is not None:
            if self._timer is not None and not self._tasks:
                self._timer.cancel()
                self._release()
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def dispose(self) -> None:
        if self._timer:
            self._timer.cancel()
            self._timer = None
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with suppress(asyncio.CancelledError):
                await task
        await self.session.dispose()
