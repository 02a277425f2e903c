"""Calls, the journal of live events, and the operators' audit log.

A call is one connection of a caller (a phone call, a browser's voice or text
socket) to their swarm session. Its transcript is the session's messages between
`first_seq` and `last_seq`; the journal keeps everything else the console shows
(agent changes, rescues, latencies) with an id that doubles as the SSE event id.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, DateTime, Text, delete, func, or_
from sqlmodel import Field, Session, SQLModel, col, select

from models.queries import contains
from models.shop import Customer, Order, OrderStatus
from models.tables import MessageRow, TurnRow, timestamp


class Channel(StrEnum):
    SIP = "sip"
    WEB = "web"


class Outcome(StrEnum):
    ORDER_PLACED = "order_placed"
    TRANSFERRED = "transferred"
    # The caller left while a reply was pending, or before saying anything.
    ABANDONED = "abandoned"
    COMPLETED = "completed"


class CallRow(SQLModel, table=True):
    __tablename__ = "calls"

    id: str = Field(primary_key=True, max_length=32)
    client_id: str = Field(index=True, max_length=200)
    channel: str = Field(index=True, max_length=10)
    # The gateway that answered, when several share the database.
    instance: str = Field(default="", index=True, max_length=100)
    caller: str = Field(default="", index=True, max_length=200)
    started_at: datetime = Field(sa_type=DateTime(timezone=True), index=True)
    ended_at: datetime | None = timestamp(nullable=True)
    ended_by: str | None = Field(default=None, max_length=20)
    outcome: str | None = Field(default=None, index=True, max_length=20)
    # ",triage,sales,": every agent that spoke or was entered, searchable with LIKE.
    agents: str = Field(default=",", max_length=500)
    first_seq: int = 0  # the session's messages after this one belong to the call
    last_seq: int | None = None
    turns: int = 0
    transfer_requested: bool = False
    operator: str | None = Field(default=None, max_length=100)  # who has taken it over
    recording: str | None = Field(default=None, max_length=100)  # a file name, never a path


# Everything the console streams, in one order; `id` is the SSE event id.
class EventRow(SQLModel, table=True):
    __tablename__ = "call_events"

    id: int | None = Field(default=None, primary_key=True)
    call_id: str | None = Field(default=None, index=True, max_length=32)
    client_id: str = Field(default="", index=True, max_length=200)
    kind: str = Field(max_length=40)
    agent: str = Field(default="", max_length=100)
    at: datetime = timestamp()
    data: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class AuditRow(SQLModel, table=True):
    __tablename__ = "audit_log"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = timestamp()
    operator: str = Field(max_length=100, index=True)
    action: str = Field(max_length=40, index=True)
    target: str = Field(default="", max_length=200)
    address: str = Field(default="", max_length=100)
    detail: str = Field(default="", sa_type=Text)


# A signed-out operator cookie, by its nonce, until it would have expired anyway: every
# gateway sharing the database then refuses it.
class RevokedCookie(SQLModel, table=True):
    __tablename__ = "revoked_cookies"

    nonce: str = Field(primary_key=True, max_length=100)
    expires_at: datetime = Field(sa_type=DateTime(timezone=True), index=True)


@dataclass(frozen=True, slots=True)
class CallFilter:
    caller: str | None = None
    channel: Channel | None = None
    agent: str | None = None
    outcome: Outcome | None = None
    live: bool | None = None
    since: datetime | None = None
    until: datetime | None = None


def list_calls(
    db: Session, where: CallFilter, *, limit: int, offset: int
) -> tuple[list[CallRow], int]:
    """One page of calls, newest first, and how many match in all."""
    clauses: list[Any] = []
    if where.caller:
        clauses.append(contains(where.caller, CallRow.caller, CallRow.client_id))
    if where.channel is not None:
        clauses.append(col(CallRow.channel) == where.channel.value)
    if where.agent:
        clauses.append(contains(f",{where.agent},", CallRow.agents))
    if where.outcome is not None:
        clauses.append(col(CallRow.outcome) == where.outcome.value)
    if where.live is not None:
        clauses.append(
            col(CallRow.ended_at).is_(None) if where.live else col(CallRow.ended_at).is_not(None)
        )
    if where.since is not None:
        clauses.append(col(CallRow.started_at) >= where.since)
    if where.until is not None:
        clauses.append(col(CallRow.started_at) < where.until)
    total = db.exec(select(func.count()).select_from(CallRow).where(*clauses)).one()
    rows = db.exec(
        select(CallRow)
        .where(*clauses)
        .order_by(col(CallRow.started_at).desc(), col(CallRow.id))
        .offset(offset)
        .limit(limit)
    ).all()
    return list(rows), total


def call_messages(db: Session, call: CallRow) -> list[MessageRow]:
    query = select(MessageRow).where(
        MessageRow.client_id == call.client_id, col(MessageRow.seq) > call.first_seq
    )
    if call.last_seq is not None:
        query = query.where(col(MessageRow.seq) <= call.last_seq)
    return list(db.exec(query.order_by(col(MessageRow.seq))).all())


def call_turns(db: Session, call: CallRow) -> list[TurnRow]:
    query = select(TurnRow).where(
        TurnRow.client_id == call.client_id, col(TurnRow.created_at) >= call.started_at
    )
    if call.ended_at is not None:
        query = query.where(col(TurnRow.created_at) <= call.ended_at)
    return list(db.exec(query.order_by(col(TurnRow.id))).all())


def call_orders(db: Session, call: CallRow) -> list[Order]:
    """Orders the call's customer created or confirmed while it lasted."""
    started, ended = call.started_at, call.ended_at
    query = select(Order).where(
        Order.customer_id == Customer.id,
        Customer.client_id == call.client_id,
        or_(col(Order.created_at) >= started, col(Order.confirmed_at) >= started),
    )
    if ended is not None:
        query = query.where(col(Order.created_at) <= ended)
    return list(db.exec(query.order_by(col(Order.id))).all())


def settle(
    call: CallRow, messages: list[MessageRow], orders: list[Order], transfer_tools: frozenset[str]
) -> None:
    """What a finished call's messages and orders say about it: the agents it reached,
    whether the caller asked for a person, and its outcome."""
    if any(c.get("name") in transfer_tools for m in messages for c in m.tool_calls):
        call.transfer_requested = True
    agents = sorted({m.agent for m in messages if m.role == "assistant" and m.agent})
    call.agents = "," + "".join(f"{a}," for a in agents)
    spoken = [m for m in messages if m.role in ("user", "assistant") and m.content]
    said_nothing = not any(m.role == "user" and m.mode == "user" for m in spoken)
    unanswered = bool(spoken) and spoken[-1].role == "user"
    if any(o.status is OrderStatus.CONFIRMED for o in orders):
        call.outcome = Outcome.ORDER_PLACED
    elif call.transfer_requested or call.operator:
        call.outcome = Outcome.TRANSFERRED
    elif said_nothing or unanswered:
        call.outcome = Outcome.ABANDONED
    else:
        call.outcome = Outcome.COMPLETED


LOST = "gateway_lost"  # `ended_by` of a call whose gateway died with it open


def end_lost_calls(db: Session, instance: str, transfer_tools: frozenset[str]) -> list[CallRow]:
    """End the calls `instance` left open when it stopped without closing them (it was
    killed, or its machine died): by "gateway_lost", now, settled from what was saved.
    A gateway runs this as it starts, under the same instance name."""
    # FOR UPDATE (PostgreSQL): a gateway restarting under the name and a peer that saw it
    # die may end its calls at once; the second waits, then finds them ended.
    lost = db.exec(
        select(CallRow)
        .where(CallRow.instance == instance, col(CallRow.ended_at).is_(None))
        .with_for_update()
    ).all()
    for call in lost:
        # The call's messages end where the caller's next call (on any gateway) began.
        later = db.exec(
            select(func.min(CallRow.first_seq)).where(
                CallRow.client_id == call.client_id, col(CallRow.started_at) > call.started_at
            )
        ).one()
        top = db.exec(
            select(func.max(MessageRow.seq)).where(MessageRow.client_id == call.client_id)
        ).one()
        bounds = [seq for seq in (later, top) if seq is not None]
        call.last_seq = min(bounds) if bounds else call.first_seq
        call.ended_at, call.ended_by = datetime.now(UTC), LOST
        settle(call, call_messages(db, call), call_orders(db, call), transfer_tools)
        db.add(call)
    db.commit()
    return list(lost)


def call_events(
    db: Session, *, after: int = 0, call_id: str | None = None, limit: int = 1000
) -> list[EventRow]:
    query = select(EventRow).where(col(EventRow.id) > after)
    if call_id is not None:
        query = query.where(EventRow.call_id == call_id)
    return list(db.exec(query.order_by(col(EventRow.id)).limit(limit)).all())


def last_event_id(db: Session) -> int:
    return db.exec(select(func.max(EventRow.id))).one() or 0


@dataclass(frozen=True, slots=True)
class SearchHit:
    call_id: str
    client_id: str
    seq: int
    role: str
    agent: str
    content: str
    at: datetime


def search_transcripts(db: Session, text: str, *, limit: int, offset: int) -> list[SearchHit]:
    """Spoken and written words of every call that contain `text`, newest first."""
    rows = db.exec(
        select(MessageRow, CallRow)
        .where(
            MessageRow.client_id == CallRow.client_id,
            col(MessageRow.seq) > CallRow.first_seq,
            or_(col(CallRow.last_seq).is_(None), col(MessageRow.seq) <= CallRow.last_seq),
            col(MessageRow.role).in_(("user", "assistant")),
            contains(text, MessageRow.content),
        )
        .order_by(col(MessageRow.id).desc())
        .offset(offset)
        .limit(limit)
    ).all()
    return [
        SearchHit(c.id, m.client_id, m.seq, m.role, m.agent, m.content, m.created_at)
        for m, c in rows
    ]


def record_audit(db: Session, row: AuditRow) -> AuditRow:
    db.add(row)
    db.commit()
    db.refresh(row)
    return row


def revoke_cookie(db: Session, nonce: str, expires_at: datetime) -> None:
    """Record a sign-out (twice is once); forget the ones that have expired since."""
    db.exec(delete(RevokedCookie).where(col(RevokedCookie.expires_at) < datetime.now(UTC)))
    if db.get(RevokedCookie, nonce) is None:
        db.add(RevokedCookie(nonce=nonce, expires_at=expires_at))
    db.commit()


def is_revoked(db: Session, nonce: str) -> bool:
    return db.get(RevokedCookie, nonce) is not None


def failed_logins(db: Session, address: str, since: datetime) -> int:
    """Failed sign-ins from `address` since then, on any gateway sharing the database."""
    query = select(func.count()).where(
        AuditRow.action == "login_failed", AuditRow.address == address, AuditRow.at >= since
    )
    return db.exec(query).one()


def list_audit(
    db: Session, *, operator: str | None, action: str | None, limit: int, offset: int
) -> list[AuditRow]:
    query = select(AuditRow)
    if operator:
        query = query.where(AuditRow.operator == operator)
    if action:
        query = query.where(AuditRow.action == action)
    return list(db.exec(query.order_by(col(AuditRow.id).desc()).offset(offset).limit(limit)).all())
