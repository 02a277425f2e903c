"""What a call's pyVoIP threads hand the event loop, waiting to be read.

Audio is bounded: when the loop is far behind, the oldest packets are dropped, since
they are the least useful. A key press, a hold and the end of the call never are: a
caller who pressed 0 for a person, or put the call on hold, must not be lost because
the audio before it piled up.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

Audio = TypeVar("Audio")


@dataclass(frozen=True, slots=True)
class Key:
    """A DTMF key the caller pressed."""

    key: str


@dataclass(frozen=True, slots=True)
class Hold:
    """The caller put the call on hold (`on`) or took it off."""

    on: bool


@dataclass(frozen=True, slots=True)
class LineEnded:
    """Nothing more will come: the call is over."""


# What is never dropped, and does not count towards the bound.
_CONTROL = (Key, Hold, LineEnded)


class Inbound(Generic[Audio]):
    """A queue of audio and control events, read by one task on the event loop. Only
    `put` and `get` touch it, both on the loop; `get` may be cancelled (a timeout)
    without losing an item."""

    def __init__(self, most_audio: int) -> None:
        self._items: deque[Audio | Key | Hold | LineEnded] = deque()
        self._most_audio = most_audio
        self._audio = 0
        self._ready = asyncio.Event()
        self.dropped = 0  # audio dropped to stay within `most_audio`

    def put(self, item: Audio | Key | Hold | LineEnded) -> None:
        if not isinstance(item, _CONTROL):
            if self._audio >= self._most_audio:
                self._drop_oldest_audio()
            self._audio += 1
        self._items.append(item)
        self._ready.set()

    async def get(self) -> Audio | Key | Hold | LineEnded:
        while not self._items:
            self._ready.clear()
            await self._ready.wait()
        item = self._items.popleft()
        if not isinstance(item, _CONTROL):
            self._audio -= 1
        return item

    def empty(self) -> bool:
        return not self._items

    def _drop_oldest_audio(self) -> None:
        for i, item in enumerate(self._items):
            if not isinstance(item, _CONTROL):
                del self._items[i]
                self._audio -= 1
                self.dropped += 1
                return
