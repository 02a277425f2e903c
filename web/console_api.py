"""The operators' REST API: calls, transcripts, threads, search, takeover, the audit log.

Every route needs a signed-in operator (`web.auth`). Reads are plain `def`
routes, which FastAPI runs in its thread pool, so the database never blocks the
event loop; takeover is async because it drives the live call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from sqlmodel import Session as DbSession
from sqlmodel import col, select

from models import privacy
from models.calls import (
    AuditRow,
    CallFilter,
    CallRow,
    Channel,
    EventRow,
    Outcome,
    call_events,
    call_messages,
    call_orders,
    call_turns,
    last_event_id,
    list_audit,
    list_calls,
    search_transcripts,
)
from models.tables import MessageRow, ThreadMessageRow, ThreadRow
from swarm import AgentChanged, ErrorOccurred, Rescued, event_name
from web.auth import Operator, audit, require_operator
from web.call_events import (
    CallEnded,
    CallStarted,
    HandedBack,
    OperatorSaid,
    TakenOver,
    TransferRequested,
    TurnTaken,
)
from web.deps import GatewayDep
from web.gateway import Gateway
from web.ids import MAX_ROW_ID, valid_call_id, valid_client_id
from web.live import CallNotLive, LiveCalls, NotTakenOver

router = APIRouter(prefix="/api", tags=["console"], dependencies=[Depends(require_operator)])

# Journal kinds the transcript shows beside the messages (messages come from their table).
TRANSCRIPT_EVENTS = (
    *(event_name(kind) for kind in (AgentChanged, Rescued, ErrorOccurred)),
    *(
        kind.kind
        for kind in (
            TakenOver,
            OperatorSaid,
            HandedBack,
            TransferRequested,
            TurnTaken,
            CallStarted,
            CallEnded,
        )
    ),
)


def database(gateway: GatewayDep) -> Iterator[DbSession]:
    with DbSession(gateway.db) as db:
        yield db


Db = Annotated[DbSession, Depends(database)]
Limit = Annotated[int, Query(ge=1, le=200)]
Offset = Annotated[int, Query(ge=0, le=MAX_ROW_ID)]


def _call(db: DbSession, call_id: str) -> CallRow:
    # Ids are checked before they reach a query or a file name.
    row = db.get(CallRow, call_id) if valid_call_id(call_id) else None
    if row is None:
        raise HTTPException(404, "no such call")
    return row


def call_json(row: CallRow, live: LiveCalls) -> dict[str, Any]:
    out = row.model_dump(exclude={"agents", "first_seq", "last_seq"})
    out["agents"] = [a for a in row.agents.split(",") if a]
    call = live.find(row.id)
    # Live on any gateway sharing the database; `instance` says which one holds it
    # (takeover works on that gateway only).
    out["live"] = row.ended_at is None
    if call is not None:
        out["operator"], out["turns"] = call.operator, call.turns
    out["recording"] = f"/api/calls/{row.id}/recording" if row.recording else None
    return out


@router.get("/calls")
def calls(
    gateway: GatewayDep,
    db: Db,
    caller: str | None = Query(None, max_length=200, description="Part of a number or id."),
    channel: Channel | None = None,
    agent: str | None = Query(None, max_length=100, description="An agent the call reached."),
    outcome: Outcome | None = None,
    live: bool | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Calls, newest first, filtered and paginated."""
    where = CallFilter(caller, channel, agent, outcome, live, since, until)
    rows, total = list_calls(db, where, limit=limit, offset=offset)
    calls_live = gateway.calls
    return {
        "total": total,
        "limit": limit,
        "offset": offset,
        "items": [call_json(r, calls_live) for r in rows],
    }


@router.get("/calls/{call_id}")
def one_call(gateway: GatewayDep, call_id: str, db: Db) -> dict[str, Any]:
    return call_json(_call(db, call_id), gateway.calls)


@router.get("/calls/{call_id}/transcript")
def transcript(gateway: GatewayDep, call_id: str, db: Db) -> dict[str, Any]:
    """Every message with role and agent; tool calls with arguments and outputs; agent
    changes, rescues, operator actions and each voice turn's latency."""
    row = _call(db, call_id)
    messages = call_messages(db, row)
    outputs = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    called = {c.get("id") for m in messages for c in m.tool_calls}
    # An output is shown inside its call; one whose call is outside the call's window
    # stays a message of its own.
    items = [
        _message(m, outputs)
        for m in messages
        if not (m.role == "tool" and m.tool_call_id in called)
    ]
    events = [
        e for e in call_events(db, call_id=row.id, limit=10_000) if e.kind in TRANSCRIPT_EVENTS
    ]
    return {
        "call": call_json(row, gateway.calls),
        "messages": items,
        "events": [_event(e) for e in events],
        "turns": [t.model_dump(exclude={"client_id"}) for t in call_turns(db, row)],
        "orders": [o.model_dump() for o in call_orders(db, row)],
        "last_event_id": last_event_id(db),
    }


def _utc(at: datetime) -> datetime:
    # SQLite hands timestamps back without their zone; they were written in UTC.
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def _message(m: MessageRow, outputs: dict[str, MessageRow]) -> dict[str, Any]:
    out = m.model_dump(exclude={"id", "client_id", "tool_calls"})
    out["created_at"] = _utc(m.created_at)
    out["t"] = _utc(m.created_at).timestamp()  # one clock for messages and events
    out["tool_calls"] = [
        {**call, "output": outputs[call["id"]].content if call.get("id") in outputs else None}
        for call in m.tool_calls
    ]
    return out


def _event(e: EventRow) -> dict[str, Any]:
    at = _utc(e.at)
    return {
        "id": e.id,
        "kind": e.kind,
        "agent": e.agent,
        "at": at,
        "t": at.timestamp(),
        "data": e.data,
    }


@router.get("/calls/{call_id}/recording", response_class=FileResponse)
def recording(gateway: GatewayDep, call_id: str, db: Db) -> FileResponse:
    """The call's audio as a stereo WAV: the caller left, the assistant right."""
    row = _call(db, call_id)
    folder = gateway.calls.options.recordings
    if not row.recording or folder is None:
        raise HTTPException(404, "this call has no recording")
    path = (folder / row.recording).resolve()
    if path.parent != folder.resolve() or not path.is_file():
        raise HTTPException(404, "this call has no recording")
    return FileResponse(path, media_type="audio/wav", filename=f"call-{row.id}.wav")


@router.get("/calls/{call_id}/threads")
def threads(call_id: str, db: Db) -> list[dict[str, Any]]:
    """The agency's threads of the call's session: the caller's (user → agents), then
    each agent → agent thread, with their messages."""
    row = _call(db, call_id)
    spoken = [
        m
        for m in call_messages(db, row)
        if m.role in ("user", "assistant") and m.content and m.mode == "user"
    ]
    out = [
        {
            "id": "user",
            "sender": "user",
            "recipient": spoken[-1].agent if spoken else "",
            "messages": [_brief(m) for m in spoken],
        }
    ]
    during = [col(ThreadMessageRow.created_at) >= row.started_at]
    if row.ended_at is not None:
        during.append(col(ThreadMessageRow.created_at) <= row.ended_at)
    for thread in db.exec(
        select(ThreadRow)
        .where(ThreadRow.client_id == row.client_id)
        .order_by(col(ThreadRow.created_at))
    ).all():
        messages = db.exec(
            select(ThreadMessageRow)
            .where(ThreadMessageRow.thread_id == thread.id, *during)
            .order_by(col(ThreadMessageRow.seq))
        ).all()
        if messages:
            out.append(
                {
                    "id": thread.id.rsplit("/", 1)[-1],
                    "sender": thread.sender,
                    "recipient": thread.recipient,
                    "messages": [_brief(m) for m in messages],
                }
            )
    return out


def _brief(m: MessageRow | ThreadMessageRow) -> dict[str, Any]:
    return {
        "seq": m.seq,
        "role": m.role,
        "agent": m.agent,
        "content": m.content,
        "at": m.created_at,
    }


class Text(BaseModel):
    text: str = Field(min_length=1, max_length=2000)


@router.post("/calls/{call_id}/threads/{thread}/messages")
async def send_into_thread(
    request: Request,
    gateway: GatewayDep,
    call_id: str,
    thread: str,
    body: Text,
    operator: Operator,
) -> dict[str, str]:
    """Write into a thread where the user is the sender, as in the agency model: the
    agents answer the operator as they would the caller. Agent → agent threads are
    the agents' own."""
    if thread != "user":
        raise HTTPException(403, "only threads where the user is the sender take messages")
    row = await _call_async(gateway, call_id)
    if gateway.calls.held(row.client_id) is not None:
        raise HTTPException(409, "you hold this call: speak to the caller with /say")
    await audit(request, operator, "thread_message", row.id, body.text)
    session = gateway.engine.session(row.client_id, gateway.swarm)
    reply = await session.complete(body.text)
    agent = await session.get_agent_name()
    # On an ended call no call holds the session: kept, it blocked erasing the caller
    # until the idle timeout, and another gateway would not see it. Closed as a call is.
    await session.dispose(unless_held=True)
    return {"reply": reply, "agent": agent}


async def _call_async(gateway: Gateway, call_id: str) -> CallRow:
    def read() -> CallRow:
        with DbSession(gateway.db) as db:
            return _call(db, call_id)

    return await asyncio.to_thread(read)


@router.post("/calls/{call_id}/takeover")
async def take_over(
    request: Request, gateway: GatewayDep, call_id: str, operator: Operator
) -> dict[str, Any]:
    """Hold a live call: the agents stop answering and the operator speaks."""
    calls = gateway.calls
    try:
        call = await calls.take_over(call_id, operator)
    except CallNotLive:
        raise HTTPException(409, "the call is not live on this gateway") from None
    await audit(request, operator, "takeover", call_id)
    return call.summary()


@router.post("/calls/{call_id}/say")
async def say(
    request: Request, gateway: GatewayDep, call_id: str, body: Text, operator: Operator
) -> dict[str, bool]:
    """Speak typed words to the caller of a call the operator holds."""
    try:
        await gateway.calls.say(call_id, operator, body.text)
    except CallNotLive:
        raise HTTPException(409, "the call is not live") from None
    except NotTakenOver:
        raise HTTPException(409, "take the call over first") from None
    await audit(request, operator, "say", call_id, body.text)
    return {"ok": True}


@router.post("/calls/{call_id}/handback")
async def hand_back(
    request: Request, gateway: GatewayDep, call_id: str, operator: Operator
) -> dict[str, Any]:
    """Give the call back to the agents."""
    try:
        call = await gateway.calls.hand_back(call_id, operator)
    except CallNotLive:
        raise HTTPException(409, "the call is not live") from None
    except NotTakenOver:
        raise HTTPException(409, "the call is not taken over") from None
    await audit(request, operator, "handback", call_id)
    return call.summary()


@router.delete("/callers/{who}")
async def erase_caller(
    request: Request, gateway: GatewayDep, who: str, operator: Operator
) -> dict[str, Any]:
    """Forget a caller, by their number or client id: their messages, recordings, calls
    and customer row. Their orders stay for the books, on an anonymous customer. 409
    while they are on a call. The audit log records that an erasure happened and what
    it removed, not whom."""
    if not valid_client_id(who):
        raise HTTPException(422, "a caller is a phone number or a client id")
    folder = gateway.calls.options.recordings

    def work() -> privacy.Erasure:
        with DbSession(gateway.db) as db:
            if any(i in gateway.engine.sessions for i in privacy.callers_named(db, who)):
                raise privacy.CallerInCall("the caller's session is live on this gateway")
            erased = privacy.erase(db, who, folder)
        if erased.callers:  # a vacuum rewrites tables: not for an unknown number
            privacy.vacuum(gateway.db)
        return erased

    try:
        erased = await asyncio.to_thread(work)
    except privacy.CallerInCall as exc:
        raise HTTPException(409, str(exc)) from None
    if not erased.callers:
        raise HTTPException(404, "no caller by that number or id")
    await audit(request, operator, "caller_erased", "", erased.summary())
    return {**dataclasses.asdict(erased), "recordings": len(erased.recordings)}


@router.get("/search")
def search(
    db: Db,
    q: str = Query(min_length=2, max_length=200, description="Words said or written."),
    limit: Limit = 50,
    offset: Offset = 0,
) -> list[dict[str, Any]]:
    """What callers and agents said, across every call's transcript."""
    return [
        dataclasses.asdict(hit) for hit in search_transcripts(db, q, limit=limit, offset=offset)
    ]


@router.get("/audit")
def audit_log(
    db: Db,
    operator: str | None = Query(None, max_length=100),
    action: str | None = Query(None, max_length=40),
    limit: Limit = 100,
    offset: Offset = 0,
) -> list[AuditRow]:
    """Who did what, newest first: sign-ins, takeovers, words spoken, thread messages."""
    return list_audit(db, operator=operator, action=action, limit=limit, offset=offset)
