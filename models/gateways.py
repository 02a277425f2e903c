"""Gateways sharing one database, each known alive by a beat count it keeps raising.

A gateway that dies (killed, its machine gone) leaves its calls open. It ends them
itself when it comes back under the same name (`models.calls.end_lost_calls`); the
beats let another gateway do it sooner, and let a gateway that never comes back have
its calls ended at all.

A peer is judged by its count alone, never by comparing its clock with ours: a count
that has not moved while we beat for `lost_after` seconds is a peer that stopped. The
claim deletes the peer's row only if the count is still the one we saw, and ends its
calls in the same transaction, so of several survivors exactly one ends them, and a
peer that beat at the last moment is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import delete, update
from sqlmodel import Field, Session, SQLModel, col, select

from models.calls import CallRow, end_lost_calls
from models.tables import timestamp, utcnow


class GatewayRow(SQLModel, table=True):
    __tablename__ = "gateways"

    instance: str = Field(primary_key=True, max_length=100)
    beats: int = 0
    started_at: datetime = timestamp()
    seen_at: datetime = timestamp()  # for people reading the table; judging uses `beats`


def beat(db: Session, instance: str) -> bool:
    """Raise `instance`'s count. False when its row was missing and is made again: the
    gateway is new, or a peer judged it lost (then its open calls were ended)."""
    raised = db.exec(
        update(GatewayRow)
        .where(col(GatewayRow.instance) == instance)
        .values(beats=col(GatewayRow.beats) + 1, seen_at=utcnow())
    ).rowcount
    if not raised:
        db.add(GatewayRow(instance=instance, beats=1))
    db.commit()
    return bool(raised)


def peers(db: Session, instance: str) -> dict[str, int]:
    """Every other gateway's name and count."""
    rows = db.exec(select(GatewayRow).where(GatewayRow.instance != instance)).all()
    return {row.instance: row.beats for row in rows}


def claim_lost(
    db: Session, peer: str, beats: int, transfer_tools: frozenset[str]
) -> list[CallRow] | None:
    """End `peer`'s open calls if its count is still `beats`, and return them; None if it
    beat since, or another gateway claimed it first (its delete waits for ours, then
    finds nothing)."""
    gone = db.exec(
        delete(GatewayRow).where(col(GatewayRow.instance) == peer, col(GatewayRow.beats) == beats)
    ).rowcount
    if not gone:
        db.rollback()
        return None
    return end_lost_calls(db, peer, transfer_tools)  # commits the delete with the calls


def leave(db: Session, instance: str) -> None:
    """A clean stop: this gateway closed its calls, and is no one's to judge."""
    db.exec(delete(GatewayRow).where(col(GatewayRow.instance) == instance))
    db.commit()


@dataclass
class Judge:
    """Which peers stopped beating, from counts read at moments of our own clock.

    Pure: fed what was read and when (`time.monotonic()`), it answers. A round in which
    we could not read the database, or reads further apart than `max_gap` (a database
    that hung rather than failed, a round that waited for a thread), resets every
    judgement: the peers may have been held up as we were, and must have `lost_after`
    seconds of our own timely reads to beat."""

    lost_after: float
    max_gap: float
    # peer -> (the count last seen, when it was first seen at that count)
    _seen: dict[str, tuple[int, float]] = field(default_factory=dict)
    _last_read: float | None = None

    def read(self, counts: Mapping[str, int], now: float) -> list[tuple[str, int]]:
        """The peers to claim, with the count they stopped at."""
        if self._last_read is not None and now - self._last_read > self.max_gap:
            self._seen.clear()
        self._last_read = now
        for peer in list(self._seen):
            if peer not in counts:
                del self._seen[peer]  # it left, or was claimed
        lost = []
        for peer, beats in counts.items():
            seen = self._seen.get(peer)
            if seen is None or seen[0] != beats:
                self._seen[peer] = (beats, now)
            elif now - seen[1] >= self.lost_after:
                lost.append((peer, beats))
        return lost

    def unreadable(self) -> None:
        self._seen.clear()
        self._last_read = None
