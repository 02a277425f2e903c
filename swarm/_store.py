"""The persistence port the swarm writes through, and an in-memory implementation.

`models/` provides the SQL implementation. The session awaits every write, so a
message is stored before its turn is reported done.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

from swarm._messages import Message


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    id: str
    sender: str
    recipient: str


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    client_id: str
    swarm: str
    active_agent: str
    nav_stack: tuple[str, ...]
    messages: tuple[Message, ...]
    threads: tuple[tuple[ThreadInfo, tuple[Message, ...]], ...] = ()


class SessionStore(Protocol):
    async def load(self, client_id: str) -> SessionSnapshot | None:
        """The stored session, or None for a client never seen."""
        ...

    async def save_state(
        self, client_id: str, *, swarm: str, active_agent: str, nav_stack: tuple[str, ...]
    ) -> None:
        """Create or update the session row: which agent is active and the navigation stack."""
        ...

    async def append_message(self, client_id: str, message: Message) -> None: ...

    async def revise_message(self, client_id: str, seq: int, content: str) -> None:
        """Replace a message's text: only for a reply cut short, which keeps what was heard."""
        ...

    async def save_thread(self, client_id: str, thread: ThreadInfo) -> None: ...

    async def append_thread_message(
        self, client_id: str, thread_id: str, message: Message
    ) -> None: ...


@dataclass
class _Record:
    swarm: str = ""
    active_agent: str = ""
    nav_stack: tuple[str, ...] = ()
    messages: list[Message] = field(default_factory=list)
    threads: dict[str, tuple[ThreadInfo, list[Message]]] = field(default_factory=dict)


class MemoryStore:
    """Keeps sessions for the life of the process: the default, and the test double."""

    def __init__(self) -> None:
        self._records: dict[str, _Record] = {}

    async def load(self, client_id: str) -> SessionSnapshot | None:
        record = self._records.get(client_id)
        if record is None:
            return None
        return SessionSnapshot(
            client_id=client_id,
            swarm=record.swarm,
            active_agent=record.active_agent,
            nav_stack=record.nav_stack,
            messages=tuple(record.messages),
            threads=tuple((info, tuple(msgs)) for info, msgs in record.threads.values()),
        )

    async def save_state(
        self, client_id: str, *, swarm: str, active_agent: str, nav_stack: tuple[str, ...]
    ) -> None:
        record = self._records.setdefault(client_id, _Record())
        record.swarm, record.active_agent, record.nav_stack = swarm, active_agent, nav_stack

    async def append_message(self, client_id: str, message: Message) -> None:
        self._records.setdefault(client_id, _Record()).messages.append(message)

    async def revise_message(self, client_id: str, seq: int, content: str) -> None:
        messages = self._records[client_id].messages
        for index, message in enumerate(messages):
            if message.seq == seq:
                messages[index] = replace(message, content=content)

    async def save_thread(self, client_id: str, thread: ThreadInfo) -> None:
        record = self._records.setdefault(client_id, _Record())
        record.threads.setdefault(thread.id, (thread, []))

    async def append_thread_message(self, client_id: str, thread_id: str, message: Message) -> None:
        self._records[client_id].threads[thread_id][1].append(message)
