"""Reading a voice session's events in tests."""

from __future__ import annotations

import asyncio

from voice.session import VoiceSession


async def next_of(voice: VoiceSession, kind: type, collected: list) -> object:
    """Events up to the first of `kind`; the timeout is a safety net, not a synchronisation."""
    while True:
        event = await asyncio.wait_for(voice.events.get(), timeout=120)
        collected.append(event)
        if isinstance(event, kind):
            return event
