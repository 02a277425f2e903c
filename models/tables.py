"""Tables of the swarm's state: sessions, their messages, threads between agents."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def timestamp(*, nullable: bool = False) -> Any:
    """A timezone-aware column; set to now unless nullable (then it starts empty).

    `sa_type`, not `sa_column`: a field declared once can then serve several tables.
    """
    if nullable:
        return Field(default=None, sa_type=DateTime(timezone=True))
    return Field(default_factory=utcnow, sa_type=DateTime(timezone=True))


# One row per caller (client id): which agent is active and the navigation stack.
class SessionRow(SQLModel, table=True):
    __tablename__ = "sessions"

    client_id: str = Field(primary_key=True, max_length=200)
    swarm: str = Field(max_length=100)
    active_agent: str = Field(max_length=100)
    nav_stack: list[str] = Field(default_factory=list, sa_type=JSON)
    # The caller behind the session, once the agency has identified them.
    customer_id: int | None = Field(default=None, foreign_key="customers.id", index=True)
    created_at: datetime = timestamp()
    updated_at: datetime = timestamp()


class _LoggedMessage(SQLModel):
    """What a message row holds, in the caller's log and in threads alike."""

    seq: int
    role: str = Field(max_length=20)
    agent: str = Field(max_length=100)
    content: str = Field(default="", sa_type=Text)
    tool_name: str | None = Field(default=None, max_length=100)
    tool_call_id: str | None = Field(default=None, max_length=100)
    # The calls an assistant message made: [{"id", "name", "arguments"}].
    tool_calls: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    created_at: datetime = timestamp()


# The append-only log of a session, markers included; (client_id, seq) orders it.
class MessageRow(_LoggedMessage, table=True):
    __tablename__ = "messages"
    __table_args__ = (UniqueConstraint("client_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    client_id: str = Field(foreign_key="sessions.client_id", index=True, max_length=200)
    mode: str = Field(default="user", max_length=10)


# A sender → recipient channel between agents of one session.
class ThreadRow(SQLModel, table=True):
    __tablename__ = "threads"

    id: str = Field(primary_key=True, max_length=300)
    client_id: str = Field(foreign_key="sessions.client_id", index=True, max_length=200)
    sender: str = Field(max_length=100)
    recipient: str = Field(max_length=100)
    created_at: datetime = timestamp()


class ThreadMessageRow(_LoggedMessage, table=True):
    __tablename__ = "thread_messages"
    __table_args__ = (UniqueConstraint("thread_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    thread_id: str = Field(foreign_key="threads.id", index=True, max_length=300)


# One row per voice turn: how long each stage took, for the console and for percentiles.
class TurnRow(SQLModel, table=True):
    __tablename__ = "turns"

    id: int | None = Field(default=None, primary_key=True)
    client_id: str = Field(foreign_key="sessions.client_id", index=True, max_length=200)
    created_at: datetime = timestamp()
    transcript: str = Field(default="", sa_type=Text)
    speech_s: float
    stt_s: float | None = None
    first_token_s: float | None = None
    first_audio_s: float | None = None
    voice_to_voice_s: float | None = None
    interrupted: bool = False
