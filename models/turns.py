"""Per-turn voice latency: stored with each turn, summarised in SQL.

Percentiles are read with ORDER BY ... OFFSET, which SQLite and PostgreSQL both
run on an index-free column in one pass each, so a summary never loads the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func
from sqlmodel import Session, col, select

from models.tables import TurnRow

STAGES = ("stt_s", "first_token_s", "first_audio_s", "voice_to_voice_s")


@dataclass(frozen=True, slots=True)
class StageSummary:
    count: int
    p50: float | None
    p95: float | None
    mean: float | None


def record_turn(db: Session, row: TurnRow) -> TurnRow:
    db.add(row)
    db.commit()
    db.refresh(row)
    return row


def latency_summary(
    db: Session, *, client_id: str | None = None, since: datetime | None = None
) -> dict[str, StageSummary]:
    """p50, p95 and mean of each stage over the turns that reached it."""
    out: dict[str, StageSummary] = {}
    for stage in STAGES:
        column = col(getattr(TurnRow, stage))
        where: list[ColumnElement[bool]] = [column.is_not(None)]
        if client_id is not None:
            where.append(col(TurnRow.client_id) == client_id)
        if since is not None:
            where.append(col(TurnRow.created_at) >= since)
        count, mean = db.exec(select(func.count(), func.avg(column)).where(*where)).one()

        def at(
            q: float,
            column: Any = column,
            where: list[ColumnElement[bool]] = where,
            count: int = count,
        ) -> float | None:
            if not count:
                return None
            # Nearest rank: the smallest value with at least q of the values at or below it.
            offset = max(0, math.ceil(q * count) - 1)
            query = select(column).where(*where).order_by(column).offset(offset).limit(1)
            value: float | None = db.exec(query).one()
            return value

        out[stage] = StageSummary(
            count=count, p50=at(0.5), p95=at(0.95), mean=float(mean) if count else None
        )
    return out
