"""Writes through the persistence port, so that a database hiccup loses nothing.

Each write is retried with a short backoff. One that still fails stays queued,
in order, and is retried before the next write and at dispose: the session
lives on, and an `ErrorOccurred` event tells the operators.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("swarm.store")

Write = tuple[Callable[..., Awaitable[None]], tuple[Any, ...], dict[str, Any]]


class StoreWriter:
    def __init__(
        self, client_id: str, on_failure: Callable[[Exception], None], *, attempts: int = 3
    ) -> None:
        self._client_id = client_id
        self._on_failure = on_failure
        self._attempts = attempts
        self._queue: list[Write] = []
        # One flush at a time: two at once both wrote the queue's head, then both popped,
        # so a write was done twice and the next one never (measured: a gateway's shared
        # turn recorder under 20 calls, "pop from empty list").
        self._flushing = asyncio.Lock()

    @property
    def pending(self) -> int:
        return len(self._queue)

    async def write(self, op: Callable[..., Awaitable[None]], *args: Any, **kwargs: Any) -> None:
        self._queue.append((op, args, kwargs))
        await self.flush()

    async def flush(self) -> bool:
        """Try every queued write in order; True when nothing is left unsaved."""
        async with self._flushing:
            return await self._flush()

    async def _flush(self) -> bool:
        while self._queue:
            op, args, kwargs = self._queue[0]
            for attempt in range(self._attempts):
                try:
                    await op(*args, **kwargs)
                    break
                except Exception as exc:
                    if attempt + 1 < self._attempts:
                        # A backoff between retries of a real write, not a test synchronisation.
                        await asyncio.sleep(0.02 * 4**attempt)
                        continue
                    log.error(
                        "store_failed client_id=%s pending=%d error=%r",
                        self._client_id,
                        len(self._queue),
                        exc,
                    )
                    self._on_failure(exc)
                    return False
            self._queue.pop(0)
        return True
