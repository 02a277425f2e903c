"""The one place voice meets the swarm: a caller's swarm session as a voice `Responder`."""

from __future__ import annotations

from collections.abc import AsyncIterator

from swarm import Session


class SwarmResponder:
    def __init__(self, session: Session) -> None:
        self.session = session

    async def reply(self, text: str) -> AsyncIterator[str]:
        async for piece in self.session.stream(text):
            yield piece

    async def interrupted(self, spoken: str) -> None:
        await self.session.revise_reply(spoken)
