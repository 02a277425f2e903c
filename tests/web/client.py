"""A Python caller for the voice socket: what a browser does, minus the browser."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


@dataclass
class Caller:
    ws: ClientConnection
    events: list[dict[str, Any]] = field(default_factory=list)
    audio: bytearray = field(default_factory=bytearray)

    async def send(self, payload: dict[str, Any] | str | bytes) -> None:
        await self.ws.send(json.dumps(payload) if isinstance(payload, dict) else payload)

    async def until(self, kind: str, *, within: float = 120) -> dict[str, Any]:
        """Read until an event of `kind`; the timeout is a safety net, not a synchronisation."""
        while True:
            message = await asyncio.wait_for(self.ws.recv(), within)
            if isinstance(message, bytes):
                self.audio += message
                continue
            event = json.loads(message)
            self.events.append(event)
            if event["type"] == kind:
                return event

    async def greeted(self, rate: int = 16000) -> dict[str, Any]:
        """Connect as a new caller: ready, start, then the whole greeting. Returns `ready`."""
        ready = await self.until("ready")
        await self.send({"type": "start", "sample_rate": rate})
        await self.until("reply_done")
        self.audio.clear()
        return ready

    async def until_audio(self, nbytes: int, *, within: float = 120) -> None:
        """Read until at least `nbytes` of reply audio have arrived."""
        while len(self.audio) < nbytes:
            message = await asyncio.wait_for(self.ws.recv(), within)
            if isinstance(message, bytes):
                self.audio += message
            else:
                self.events.append(json.loads(message))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def speak(self, pcm16: bytes, rate: int = 16000, *, realtime: bool = False) -> None:
        """Stream speech in 20 ms messages, then let go of the button. `realtime` paces
        them as a microphone would (they go out as fast as possible otherwise)."""
        step = rate // 50 * 2
        loop = asyncio.get_running_loop()
        start = loop.time()
        for n, i in enumerate(range(0, len(pcm16), step)):
            if realtime:
                # Pacing a simulated microphone, not waiting for the server.
                await asyncio.sleep(max(0.0, start + n * 0.02 - loop.time()))
            await self.ws.send(pcm16[i : i + step].ljust(step, b"\0"))
        await self.send({"type": "release"})


def caller(url: str, client_id: str) -> Any:
    return connect(f"{url}/ws/voice/{client_id}", max_size=None)
