"""Server-Sent Events: `/api/events` (every call) and `/api/calls/{id}/events`.

Each event is `id: <journal id>` plus one JSON `data:` line. A client that
reconnects sends `Last-Event-ID` (browsers do it by themselves) or `?after=`, and
first gets what it missed, read from the database, then the live stream. A
comment line every `heartbeat_s` keeps proxies from closing a quiet stream and
tells the server when the client has gone.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import StreamingResponse
from sqlmodel import Session as DbSession

from models.calls import call_events
from web.auth import Operator
from web.deps import GatewayDep
from web.gateway import Gateway
from web.ids import MAX_ROW_ID, valid_call_id
from web.journal import Entry

router = APIRouter(tags=["events"])

REPLAY_PAGE = 500


def _start(request: Request, after: int | None) -> int | None:
    header = request.headers.get("last-event-id")
    if header is not None:
        # ASCII digits only: str.isdigit() takes "²", which int() refuses.
        if not re.fullmatch(r"[0-9]{1,10}", header.strip()) or int(header) > MAX_ROW_ID:
            raise HTTPException(400, "Last-Event-ID is a journal id (an integer)")
        return int(header)
    return after


async def _stream(gateway: Gateway, after: int | None, call_id: str | None) -> AsyncIterator[str]:
    journal = gateway.journal
    listener = journal.hub.listen(call_id)
    try:
        yield "retry: 2000\n\n"
        cursor = after
        if after is not None:
            # Subscribed first, so nothing falls between the replay and the live stream;
            # what arrives twice is skipped by id.
            while True:
                rows = await asyncio.to_thread(_replay, gateway, cursor or 0, call_id)
                for missed in rows:
                    yield missed.sse
                    cursor = missed.id
                if len(rows) < REPLAY_PAGE:
                    break
        while True:
            try:
                async with asyncio.timeout(gateway.heartbeat_s):
                    entries = await listener.batch()
            except TimeoutError:
                yield ": heartbeat\n\n"
                continue
            out = []
            for entry in entries:
                if entry is None:
                    break  # lagging or shutting down: the client resumes from its last id
                if cursor is None or entry.id > cursor:
                    cursor = entry.id
                    out.append(entry.sse)
            if out:
                yield "".join(out)
            if entries[-1] is None:
                return
    finally:
        journal.hub.leave(listener)


def _replay(gateway: Gateway, after: int, call_id: str | None) -> list[Entry]:
    with DbSession(gateway.db) as db:
        rows = call_events(db, after=after, call_id=call_id, limit=REPLAY_PAGE)
        return [Entry.of(row) for row in rows]


def _response(
    request: Request, gateway: Gateway, after: int | None, call_id: str | None
) -> StreamingResponse:
    return StreamingResponse(
        _stream(gateway, _start(request, after), call_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


AFTER = Query(
    default=None, ge=0, le=MAX_ROW_ID, description="Replay events after this id, then go live."
)


@router.get("/api/events", response_class=StreamingResponse)
async def all_events(
    request: Request, gateway: GatewayDep, _: Operator, after: int | None = AFTER
) -> StreamingResponse:
    """Every call's events, live."""
    return _response(request, gateway, after, None)


@router.get("/api/calls/{call_id}/events", response_class=StreamingResponse)
async def one_call_events(
    request: Request, gateway: GatewayDep, call_id: str, _: Operator, after: int | None = AFTER
) -> StreamingResponse:
    """One call's events, live."""
    if not valid_call_id(call_id):
        raise HTTPException(404, "no such call")
    return _response(request, gateway, after, call_id)
