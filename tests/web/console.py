"""Helpers for the console tests: a signed-in operator, text calls, SSE reading."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from .client import typed
from .conftest import Running


@asynccontextmanager
async def operator(running: Running, name: str = "alice") -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client signed in with the gateway's token: it holds the session cookie."""
    async with httpx.AsyncClient(base_url=running.url, timeout=60) as client:
        response = await client.post(
            "/api/auth/login", json={"operator": name, "token": running.gateway.auth.token}
        )
        assert response.status_code == 200, response.text
        yield client


async def journaled(listener, kind: str, client_id: str) -> dict[str, Any]:
    """Wait for the journal to report `kind` for `client_id` (the timeout is a net)."""
    while True:
        entry = await asyncio.wait_for(listener.get(), 60)
        assert entry is not None, "the journal stopped"
        if entry.kind == kind and entry.client_id == client_id:
            return entry.to_json()


async def call_ended(running: Running, client_id: str, listener) -> dict[str, Any]:
    """The end of `client_id`'s call, once it is saved."""
    return await journaled(listener, "call_ended", client_id)


async def text_call(running: Running, client_id: str, *lines: str) -> list[str]:
    """One text-socket call: each line gets the swarm's reply; returns once the call is
    closed and saved."""
    hub = running.gateway.journal.hub
    listener = hub.listen()
    try:
        replies = []
        async with typed(running.ws, client_id) as ws:
            for line in lines:
                await ws.send(line)
                replies.append(await asyncio.wait_for(ws.recv(), 60))
        await call_ended(running, client_id, listener)
        return replies
    finally:
        hub.leave(listener)


class Sse:
    """Reads an open SSE response event by event; comments come out as {"comment": ...}."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()

    async def take(self, count: int, *, comments: bool = False) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        event: dict[str, Any] = {}
        while len(out) < count:
            line = await asyncio.wait_for(anext(self._lines), 60)
            if line.startswith(":"):
                if comments:
                    out.append({"comment": line[1:].strip()})
            elif line.startswith("id: "):
                event["id"] = int(line[4:])
            elif line.startswith("data: "):
                event.update(json.loads(line[6:]))
            elif line == "" and event:
                out.append(event)
                event = {}
        return out

    async def until(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        """Events up to and including the first of `kind` whose data holds `match`."""
        seen = []
        while True:
            [event] = await self.take(1)
            seen.append(event)
            if event["kind"] == kind and all(event["data"].get(k) == v for k, v in match.items()):
                return seen
