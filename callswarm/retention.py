"""How long callers' records are kept, from the settings, and the gateway's purge job.

A pharmacy's transcripts and recordings hold health data: they are kept only as long
as the operator's rules allow (`CALLSWARM_KEEP_TRANSCRIPTS_DAYS`, `..._RECORDINGS_DAYS`,
`..._AUDIT_DAYS`). Each gateway purges at start and then every `purge_every_s`; gateways
sharing a database purge the same rows, which is harmless (a delete of what is gone).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sqlalchemy.engine import Engine as Database
from sqlmodel import Session

from callswarm.settings import Settings
from models.privacy import Purged, Retention, purge

log = logging.getLogger("callswarm.retention")


def retention(settings: Settings) -> Retention:
    def days(value: float | None) -> timedelta | None:
        return None if value is None else timedelta(days=value)

    return Retention(
        transcripts=days(settings.keep_transcripts_days),
        recordings=days(settings.keep_recordings_days),
        audit=days(settings.keep_audit_days),
    )


def purge_once(database: Database, keep: Retention, recordings: Path | None) -> Purged:
    """Blocking: one purge, logged."""
    with Session(database) as db:
        purged = purge(db, keep, recordings)
    log.info("purged %s", purged.summary())
    return purged


async def purge_periodically(
    database: Database,
    keep: Retention,
    recordings: Path | None,
    every_s: float,
    on_purged: Callable[[Purged], None] | None = None,
) -> None:
    """Purge now, then every `every_s`, until cancelled. A failed purge (the database
    away) is logged and tried again at the next round; calls are not affected."""
    while True:
        try:
            purged = await asyncio.to_thread(purge_once, database, keep, recordings)
        except Exception as exc:
            log.error("purge_failed error=%r", exc)
        else:
            if on_purged is not None:
                on_purged(purged)
        await asyncio.sleep(every_s)  # the schedule itself, not a wait for anything
