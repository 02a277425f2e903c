"""A conversation's messages in order: the caller's, or one agency thread's.

Both number what they append, stamp it, persist it and announce it; they differ in
where it is stored and which event tells of it, which the owner passes in. A log
never reaches back into its owner.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import overload

from swarm._messages import Message

Persist = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ThreadView:
    """A thread as the console and the agency's readers see it."""

    id: str
    sender: str
    recipient: str
    messages: tuple[Message, ...]


Announce = Callable[[Message], None]


class ConversationLog(Sequence[Message]):
    """Append-only, but for `revise`: the one edit a barge-in needs."""

    def __init__(
        self, messages: Iterable[Message], *, persist: Persist, announce: Announce
    ) -> None:
        self._messages = list(messages)
        self._persist, self._announce = persist, announce

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        return self._messages[index]

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    @property
    def last_seq(self) -> int:
        return self._messages[-1].seq if self._messages else 0

    async def append(self, message: Message) -> Message:
        """Numbered after the last, stamped now; persisted before it is announced."""
        message = replace(message, seq=self.last_seq + 1, time=time.time())
        self._messages.append(message)
        await self._persist(message)
        self._announce(message)
        return message

    def revise(self, index: int, content: str) -> Message:
        """Replace the content of the message at `index`, in memory; the owner stores it."""
        message = replace(self._messages[index], content=content)
        self._messages[index] = message
        return message
