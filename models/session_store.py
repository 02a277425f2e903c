"""The swarm's persistence port on SQLModel. Blocking database calls run in worker threads."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from models.redact import REDACT, Redaction
from models.tables import MessageRow, SessionRow, ThreadMessageRow, ThreadRow, utcnow
from swarm import Message, Mode, Role, SessionSnapshot, ThreadInfo, ToolCall


def _calls_to_json(calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    return [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]


def _calls_from_json(raw: list[dict[str, Any]] | None) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(id=c["id"], name=c["name"], arguments=c["arguments"]) for c in raw or ())


def _row(message: Message, redaction: Redaction) -> dict[str, Any]:
    """The columns a message and a thread message share, as they are stored."""
    return {
        "seq": message.seq,
        "role": message.role.value,
        "agent": message.agent,
        "content": redaction.text(message.content),
        "tool_name": message.tool_name,
        "tool_call_id": message.tool_call_id,
        "tool_calls": redaction.data(_calls_to_json(message.tool_calls)),
        "created_at": datetime.fromtimestamp(message.time, UTC),
    }


def _message(row: MessageRow | ThreadMessageRow, mode: str = "user") -> Message:
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    return Message(
        role=Role(row.role),
        content=row.content,
        agent=row.agent,
        mode=Mode(mode),
        tool_calls=_calls_from_json(row.tool_calls),
        tool_call_id=row.tool_call_id,
        tool_name=row.tool_name,
        seq=row.seq,
        time=created.timestamp(),
    )


class SqlSessionStore:
    def __init__(self, engine: Engine, redaction: Redaction = REDACT) -> None:
        self._engine = engine
        # Card numbers and dates of birth out of what is stored (models/redact.py).
        self._redaction = redaction

    # --- the port ---------------------------------------------------------------------------

    async def load(self, client_id: str) -> SessionSnapshot | None:
        return await asyncio.to_thread(self._load, client_id)

    async def save_state(
        self, client_id: str, *, swarm: str, active_agent: str, nav_stack: tuple[str, ...]
    ) -> None:
        await asyncio.to_thread(self._save_state, client_id, swarm, active_agent, nav_stack)

    async def append_message(self, client_id: str, message: Message) -> None:
        await asyncio.to_thread(self._append_message, client_id, message)

    async def revise_message(self, client_id: str, seq: int, content: str) -> None:
        await asyncio.to_thread(self._revise_message, client_id, seq, content)

    async def save_thread(self, client_id: str, thread: ThreadInfo) -> None:
        await asyncio.to_thread(self._save_thread, client_id, thread)

    async def append_thread_message(self, client_id: str, thread_id: str, message: Message) -> None:
        await asyncio.to_thread(self._append_thread_message, thread_id, message)

    # --- blocking parts ---------------------------------------------------------------------

    def _load(self, client_id: str) -> SessionSnapshot | None:
        with Session(self._engine) as db:
            row = db.get(SessionRow, client_id)
            if row is None:
                return None
            messages = db.exec(
                select(MessageRow)
                .where(MessageRow.client_id == client_id)
                .order_by(col(MessageRow.seq))
            ).all()
            threads = []
            for thread in db.exec(select(ThreadRow).where(ThreadRow.client_id == client_id)).all():
                thread_messages = db.exec(
                    select(ThreadMessageRow)
                    .where(ThreadMessageRow.thread_id == thread.id)
                    .order_by(col(ThreadMessageRow.seq))
                ).all()
                info = ThreadInfo(thread.id, thread.sender, thread.recipient)
                threads.append((info, tuple(_message(m) for m in thread_messages)))
            return SessionSnapshot(
                client_id=client_id,
                swarm=row.swarm,
                active_agent=row.active_agent,
                nav_stack=tuple(row.nav_stack),
                messages=tuple(_message(m, m.mode) for m in messages),
                threads=tuple(threads),
            )

    def _save_state(
        self, client_id: str, swarm: str, active_agent: str, nav_stack: tuple[str, ...]
    ) -> None:
        with Session(self._engine) as db:
            row = db.get(SessionRow, client_id)
            if row is None:
                row = SessionRow(client_id=client_id, swarm=swarm, active_agent=active_agent)
            row.swarm, row.active_agent = swarm, active_agent
            row.nav_stack = list(nav_stack)
            row.updated_at = utcnow()
            db.add(row)
            db.commit()

    def _insert_once(self, row: MessageRow | ThreadMessageRow, *where: Any) -> None:
        """Insert unless (log, seq) is there: a retried write may have reached the database."""
        with Session(self._engine) as db:
            if db.exec(select(type(row).id).where(*where)).first() is None:
                db.add(row)
                db.commit()

    def _append_message(self, client_id: str, message: Message) -> None:
        self._insert_once(
            MessageRow(
                client_id=client_id, mode=message.mode.value, **_row(message, self._redaction)
            ),
            MessageRow.client_id == client_id,
            MessageRow.seq == message.seq,
        )

    def _revise_message(self, client_id: str, seq: int, content: str) -> None:
        with Session(self._engine) as db:
            row = db.exec(
                select(MessageRow).where(MessageRow.client_id == client_id, MessageRow.seq == seq)
            ).first()
            if row is not None:
                row.content = self._redaction.text(content)
                db.add(row)
                db.commit()

    def _save_thread(self, client_id: str, thread: ThreadInfo) -> None:
        with Session(self._engine) as db:
            if db.get(ThreadRow, thread.id) is None:
                db.add(
                    ThreadRow(
                        id=thread.id,
                        client_id=client_id,
                        sender=thread.sender,
                        recipient=thread.recipient,
                    )
                )
                db.commit()

    def _append_thread_message(self, thread_id: str, message: Message) -> None:
        self._insert_once(
            ThreadMessageRow(thread_id=thread_id, **_row(message, self._redaction)),
            ThreadMessageRow.thread_id == thread_id,
            ThreadMessageRow.seq == message.seq,
        )
