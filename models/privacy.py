"""Erasing a caller: their words, recordings, calls and customer row go; the books keep
their orders, on an anonymous customer.

A pharmacy's calls hold health data (what a caller takes, what they asked about), so
a caller may ask to be forgotten. Everything keyed by the caller goes: the session,
its messages and agent threads, turn timings, the journal's events, the calls and
their recordings, the customer row. An order stays for the books (its lines, prices
and total), moved to the one customer named `ERASED`; one never placed is cancelled. Operators' audit rows about the
caller's calls keep what was done and lose what was said (`detail`).

On SQLite the erasure overwrites what it deletes (`secure_delete`) and empties the
write-ahead log; `vacuum()` then rewrites the file, which may still hold copies of
rows moved before. PostgreSQL keeps dead rows until its vacuum; `vacuum()` runs it
on the tables touched.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Engine as Database
from sqlmodel import Session, col, delete, select, update

from models.calls import AuditRow, CallRow, EventRow
from models.shop import Customer, Order, OrderStatus
from models.tables import MessageRow, SessionRow, ThreadMessageRow, ThreadRow, TurnRow

log = logging.getLogger("models.privacy")

# The customer every erased caller's orders move to. Outside the alphabet of client ids
# (web/ids.py), so no caller can be given it: as "erased", a browser could ask for it
# and read every erased caller's orders.
ERASED = "(erased)"
TOUCHED = (
    "thread_messages",
    "threads",
    "messages",
    "turns",
    "call_events",
    "audit_log",
    "calls",
    "sessions",
    "customers",
    "orders",
)


class CallerInCall(Exception):
    """The caller is on a call: erase them after it ends."""


@dataclass(frozen=True, slots=True)
class Erasure:
    """What an erasure removed; it names no caller, so it may be logged."""

    callers: int  # client ids erased (a number may also be a customer's phone elsewhere)
    calls: int
    messages: int
    recordings: tuple[str, ...]  # file names removed from the recordings folder
    orders_kept: int  # moved to the anonymous customer

    def summary(self) -> str:
        return (
            f"callers={self.callers} calls={self.calls} messages={self.messages} "
            f"recordings={len(self.recordings)} orders_kept={self.orders_kept}"
        )


def callers_named(db: Session, who: str) -> list[str]:
    """The client ids `who` names: the id itself (a phone caller's is their number,
    with or without its +), and any customer whose phone it is."""
    spellings = {who, who.removeprefix("+")}
    if who.isdigit():
        spellings.add(f"+{who}")
    ids = {s for s in spellings if db.get(SessionRow, s) or _has_calls(db, s)}
    ids |= set(db.exec(select(Customer.client_id).where(col(Customer.phone).in_(spellings))).all())
    ids |= set(
        db.exec(select(Customer.client_id).where(col(Customer.client_id).in_(spellings))).all()
    )
    ids.discard(ERASED)
    return sorted(ids)


def _has_calls(db: Session, client_id: str) -> bool:
    return db.exec(select(CallRow.id).where(CallRow.client_id == client_id)).first() is not None


def erase(db: Session, who: str, recordings: Path | None) -> Erasure:
    """Remove everything of the caller `who` names, in one transaction, then their
    recording files. Raises CallerInCall while one of their calls is open."""
    _overwrite_deletes(db)
    ids = callers_named(db, who)
    calls = db.exec(select(CallRow).where(col(CallRow.client_id).in_(ids))).all() if ids else []
    if any(call.ended_at is None for call in calls):
        raise CallerInCall("the caller is on a call; erase them after it ends")
    call_ids = [call.id for call in calls]
    files = tuple(call.recording for call in calls if call.recording)
    threads = select(ThreadRow.id).where(col(ThreadRow.client_id).in_(ids))
    db.exec(delete(ThreadMessageRow).where(col(ThreadMessageRow.thread_id).in_(threads)))
    db.exec(delete(ThreadRow).where(col(ThreadRow.client_id).in_(ids)))
    messages = db.exec(delete(MessageRow).where(col(MessageRow.client_id).in_(ids))).rowcount
    db.exec(delete(TurnRow).where(col(TurnRow.client_id).in_(ids)))
    db.exec(
        delete(EventRow).where(
            col(EventRow.client_id).in_(ids) | col(EventRow.call_id).in_(call_ids)
        )
    )
    # What operators did stays on the record; what they said to the caller does not.
    db.exec(update(AuditRow).where(col(AuditRow.target).in_(call_ids)).values(detail=""))
    db.exec(delete(CallRow).where(col(CallRow.id).in_(call_ids)))
    customers = db.exec(select(Customer.id).where(col(Customer.client_id).in_(ids))).all()
    kept = 0
    if customers:
        # An order never placed is no one's books: it ends here, not on the anonymous row.
        db.exec(
            update(Order)
            .where(col(Order.customer_id).in_(customers), col(Order.status) == OrderStatus.PENDING)
            .values(status=OrderStatus.CANCELLED)
        )
        anonymous = _anonymous(db)
        kept = db.exec(
            update(Order).where(col(Order.customer_id).in_(customers)).values(customer_id=anonymous)
        ).rowcount
    db.exec(delete(SessionRow).where(col(SessionRow.client_id).in_(ids)))
    # Another session the caller was identified in keeps its words, not their name.
    db.exec(
        update(SessionRow)
        .where(col(SessionRow.customer_id).in_(customers))
        .values(customer_id=None)
    )
    db.exec(delete(Customer).where(col(Customer.id).in_(customers)))
    db.commit()
    if db.get_bind().dialect.name == "sqlite":
        # The deleted pages' old images may still be in the write-ahead log.
        db.exec(text("PRAGMA wal_checkpoint(TRUNCATE)"))  # type: ignore[call-overload]
    removed = _remove_recordings(recordings, files)
    return Erasure(len(ids), len(call_ids), messages or 0, removed, kept or 0)


def _overwrite_deletes(db: Session) -> None:
    """SQLite: deleted rows are zeroed in the file, not only unlinked (Debian's build
    does it by default; others may not)."""
    if db.get_bind().dialect.name == "sqlite":
        db.exec(text("PRAGMA secure_delete = ON"))  # type: ignore[call-overload]


def _anonymous(db: Session) -> int:
    found = db.exec(select(Customer.id).where(Customer.client_id == ERASED)).first()
    if found is not None:
        return found
    customer = Customer(client_id=ERASED)
    db.add(customer)
    db.flush()
    assert customer.id is not None
    return customer.id


def _remove_recordings(folder: Path | None, names: tuple[str, ...]) -> tuple[str, ...]:
    if folder is None:
        return ()
    removed = []
    for name in names:
        path = folder / Path(name).name  # a file name, never a path (models/calls.py)
        try:
            path.unlink()
            removed.append(path.name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            log.error("recording_not_erased file=%s error=%r", path.name, exc)
    return tuple(removed)


def vacuum(database: Database) -> None:
    """Rewrite what an erasure touched, so no page holds the words: PostgreSQL keeps
    dead rows until a vacuum, and SQLite may hold old copies of rows that were moved
    or rewritten before the erasure in its free pages."""
    with database.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        if database.dialect.name == "postgresql":
            for table in TOUCHED:
                conn.execute(text(f"VACUUM {table}"))
        elif database.dialect.name == "sqlite":
            conn.execute(text("VACUUM"))
            conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))


@dataclass(frozen=True, slots=True)
class Retention:
    """How long each kind of record is kept; None: for ever."""

    transcripts: timedelta | None = None  # messages, threads, turns, events, calls
    recordings: timedelta | None = None
    audit: timedelta | None = None

    @property
    def keeps_all(self) -> bool:
        return self.transcripts is None and self.recordings is None and self.audit is None


@dataclass(frozen=True, slots=True)
class Purged:
    messages: int = 0
    events: int = 0
    calls: int = 0
    sessions: int = 0
    recordings: int = 0
    audit: int = 0

    def summary(self) -> str:
        return " ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


def purge(
    db: Session, keep: Retention, recordings: Path | None, now: datetime | None = None
) -> Purged:
    """Delete what is older than `keep` allows. Open calls, and the sessions of callers
    who still have a message or a call, are never touched."""
    current = now or datetime.now(UTC)
    _overwrite_deletes(db)
    messages = events = calls = sessions = files = audits = 0
    if keep.recordings is not None:
        cutoff = current - keep.recordings
        expired = (
            col(CallRow.recording).is_not(None),
            col(CallRow.ended_at).is_not(None),
            col(CallRow.started_at) < cutoff,
        )
        names = tuple(n for n in db.exec(select(CallRow.recording).where(*expired)).all() if n)
        db.exec(update(CallRow).where(*expired).values(recording=None))
        db.commit()
        files = len(_remove_recordings(recordings, names))
    if keep.transcripts is not None:
        cutoff = current - keep.transcripts
        # Predicates, not lists of ids: the first purge of a big database may cover more
        # rows than a statement takes parameters.
        ended = (col(CallRow.ended_at).is_not(None), col(CallRow.ended_at) < cutoff)
        names = tuple(n for n in db.exec(select(CallRow.recording).where(*ended)).all() if n)
        # A caller on a call keeps their threads: their live session writes into them.
        on_call = select(CallRow.client_id).where(col(CallRow.ended_at).is_(None))
        db.exec(delete(ThreadMessageRow).where(col(ThreadMessageRow.created_at) < cutoff))
        emptied = select(ThreadMessageRow.thread_id).distinct()
        db.exec(
            delete(ThreadRow).where(
                col(ThreadRow.created_at) < cutoff,
                col(ThreadRow.id).not_in(emptied),
                col(ThreadRow.client_id).not_in(on_call),
            )
        )
        messages = db.exec(delete(MessageRow).where(col(MessageRow.created_at) < cutoff)).rowcount
        db.exec(delete(TurnRow).where(col(TurnRow.created_at) < cutoff))
        events = db.exec(delete(EventRow).where(col(EventRow.at) < cutoff)).rowcount
        calls = db.exec(delete(CallRow).where(*ended)).rowcount
        # A session with nothing left says only that the number once called.
        left = select(MessageRow.client_id).distinct()
        calling = select(CallRow.client_id).distinct()
        threaded = select(ThreadRow.client_id).distinct()
        timed = select(TurnRow.client_id).distinct()
        sessions = db.exec(
            delete(SessionRow).where(
                col(SessionRow.updated_at) < cutoff,
                col(SessionRow.client_id).not_in(left),
                col(SessionRow.client_id).not_in(calling),
                col(SessionRow.client_id).not_in(threaded),
                col(SessionRow.client_id).not_in(timed),
            )
        ).rowcount
        db.commit()
        files += len(_remove_recordings(recordings, names))
    if keep.audit is not None:
        audits = db.exec(delete(AuditRow).where(col(AuditRow.at) < current - keep.audit)).rowcount
        db.commit()
    return Purged(messages or 0, events or 0, calls or 0, sessions or 0, files, audits or 0)
