"""The warm-up reads what a caller's first turn would otherwise read (`Agency.warm`, the
pharmacy's in agents/plugin.py): the first line after a start took 0.70 s to its reply
against 0.19 s for the same line later (benchmarks/first_turn.py)."""

from __future__ import annotations

import logging

from agents.plugin import AGENCY
from callswarm.app import build_services
from callswarm.settings import Settings
from models import make_engine, sounds


def _said(caplog, key: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(key)]


async def test_the_warm_up_reads_the_word_lists_and_searches_once(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="callswarm.app")
    sounds.everyday.cache_clear()
    services = build_services(
        Settings(data_dir=tmp_path, provider="scripted", safety_probe=False, idle_timeout=None)
    )
    try:
        assert _said(caplog, "first_turn_warmed") == []  # building the services reads nothing
        await services.warm_up()
        assert len(_said(caplog, "first_turn_warmed")) == 1, caplog.text  # done by then
    finally:
        await services.aclose()
    assert _said(caplog, "first_turn_warm_failed") == []
    # The search asked wordfreq about the line's words, as a caller's turn would have.
    assert sounds.everyday.cache_info().currsize > 1


async def test_closing_waits_for_the_warm_up_it_started(tmp_path, caplog) -> None:
    """Never a read of a database already disposed: closing right after the warm-up
    began still finds it done, and done well."""
    caplog.set_level(logging.INFO, logger="callswarm.app")
    services = build_services(
        Settings(data_dir=tmp_path, provider="scripted", safety_probe=False, idle_timeout=None)
    )
    services.begin_warm_up()
    await services.aclose()
    assert all(task.done() for task in services.agency_warming)
    assert len(_said(caplog, "first_turn_warmed")) == 1, caplog.text


def test_a_warm_up_that_fails_is_logged_and_goes_no_further(caplog) -> None:
    """A database with no catalogue to read: the first caller's turn reads it instead."""
    caplog.set_level(logging.INFO, logger="callswarm.app")
    db = make_engine("sqlite://", migrate=False)  # no tables
    try:
        assert AGENCY.warm is not None
        AGENCY.warm(db)
    finally:
        db.dispose()
    assert len(_said(caplog, "first_turn_warm_failed")) == 1, caplog.text
    assert _said(caplog, "first_turn_warmed") == []
