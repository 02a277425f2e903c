"""Events the swarm publishes, and the bus that carries them.

One frozen dataclass per kind. Subscribers dispatch with `match`/`isinstance`;
where a wire format needs a name (SSE), `event_name()` derives it from the class.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("swarm.events")


@dataclass(frozen=True, slots=True, kw_only=True)
class SwarmEvent:
    session_id: str
    agent: str
    seq: int
    time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessageEvent(SwarmEvent):
    content: str
    message_seq: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessageEvent(SwarmEvent):
    content: str
    message_seq: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(SwarmEvent):
    tool: str
    call_id: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput(SwarmEvent):
    tool: str
    call_id: str
    output: str
    failed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentChanged(SwarmEvent):
    previous: str
    current: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Rescued(SwarmEvent):
    reason: str
    strategy: str
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorOccurred(SwarmEvent):
    error: str
    where: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadMessageEvent(SwarmEvent):
    thread_id: str
    sender: str
    recipient: str
    content: str


def event_name(event: SwarmEvent | type[SwarmEvent]) -> str:
    """`ToolCalled` → `tool_called`: the one place a class becomes a string."""
    cls = event if isinstance(event, type) else type(event)
    name = cls.__name__.removesuffix("Event")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Subscription:
    """An async iterator over events; a slow reader loses its oldest events, never blocks the swarm."""

    def __init__(self, bus: EventBus, maxsize: int) -> None:
        self._bus = bus
        self._queue: asyncio.Queue[SwarmEvent | None] = asyncio.Queue(maxsize)
        self.dropped = 0

    def offer(self, event: SwarmEvent) -> None:
        """From the bus: keep `event`, dropping the oldest if this subscriber lags."""
        if self._queue.full():
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(event)

    async def get(self) -> SwarmEvent:
        event = await self._queue.get()
        if event is None:
            raise StopAsyncIteration
        return event

    @property
    def empty(self) -> bool:
        return self._queue.empty()

    def drain(self) -> list[SwarmEvent]:
        """Every event already delivered, without waiting."""
        out: list[SwarmEvent] = []
        while not self._queue.empty():
            event = self._queue.get_nowait()
            if event is not None:
                out.append(event)
        return out

    def __aiter__(self) -> AsyncIterator[SwarmEvent]:
        return self

    async def __anext__(self) -> SwarmEvent:
        return await self.get()

    def close(self) -> None:
        self._bus.unsubscribe(self)
        if self._queue.full():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    def __init__(self) -> None:
        self._subscriptions: set[Subscription] = set()

    def subscribe(self, maxsize: int = 1000) -> Subscription:
        subscription = Subscription(self, maxsize)
        self._subscriptions.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscriptions.discard(subscription)

    def publish(self, event: SwarmEvent) -> None:
        for subscription in list(self._subscriptions):
            subscription.offer(event)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscriptions)
