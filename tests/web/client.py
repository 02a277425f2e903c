"""A Python caller for the voice socket: what a browser does, minus the browser."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from web.callers import COOKIE

# Each (gateway, caller id)'s cookie, as one browser per caller keeps it: a test that
# calls again as the same caller resumes their session, as their browser would.
_JAR: dict[tuple[str, str], str] = {}


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


async def caller_cookie(url: str, client_id: str) -> str:
    """The signed cookie for `client_id` (`POST /api/v1/caller`), the one this "browser"
    already holds if it is still good. Fails if the gateway gave another id."""
    http = url.replace("ws://", "http://", 1)
    held = _JAR.get((http, client_id))
    async with httpx.AsyncClient(base_url=http, cookies={COOKIE: held} if held else None) as c:
        response = await c.post("/api/v1/caller", json={"client_id": client_id})
    response.raise_for_status()
    given = response.json()["client_id"]
    assert given == client_id, f"the gateway gave {given}, not {client_id}"
    _JAR[(http, client_id)] = response.cookies[COOKIE]
    return response.cookies[COOKIE]


@asynccontextmanager
async def signed(url: str, path: str, client_id: str) -> AsyncIterator[ClientConnection]:
    """A caller socket opened as `client_id`'s own browser: with its cookie."""
    cookie = await caller_cookie(url, client_id)
    headers = {"Cookie": f"{COOKIE}={cookie}"}
    async with connect(f"{url}{path}/{client_id}", max_size=None, additional_headers=headers) as ws:
        yield ws


def caller(url: str, client_id: str) -> Any:
    """The voice socket, as `client_id`'s browser."""
    return signed(url, "/ws/voice", client_id)


def typed(url: str, client_id: str) -> Any:
    """The text socket, as `client_id`'s browser."""
    return signed(url, "/api/v1/session", client_id)
