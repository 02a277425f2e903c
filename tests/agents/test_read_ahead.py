"""A prepared shop reads what a caller's first turn would otherwise read (agents/plugin.py):
the first turn after a start took 0.7 s more than the next (benchmarks/first_turn.py)."""

from __future__ import annotations

import logging
import threading

from agents import plugin
from models import make_engine, sounds


def _read_ahead_done() -> None:
    for thread in threading.enumerate():
        if thread.name == "read-ahead":
            thread.join()


def test_preparing_the_shop_reads_the_word_lists_and_searches_once(tmp_path, caplog) -> None:
    caplog.set_level(logging.INFO, logger="callswarm.app")
    sounds.everyday.cache_clear()
    db = make_engine(f"sqlite:///{tmp_path / 'shop.db'}")
    try:
        plugin.AGENCY.prepare(db)
        _read_ahead_done()
    finally:
        db.dispose()
    assert "read_ahead_done" in caplog.text, caplog.text
    assert "read_ahead_failed" not in caplog.text
    # The search asked wordfreq about the line's words, as a caller's turn would have.
    assert sounds.everyday.cache_info().currsize > 1


def test_a_read_ahead_that_fails_is_logged_and_goes_no_further(caplog) -> None:
    """A database with no catalogue to read: the first caller's turn reads it instead."""
    caplog.set_level(logging.INFO, logger="callswarm.app")
    db = make_engine("sqlite://", migrate=False)  # no tables
    try:
        plugin._read_ahead(db)
    finally:
        db.dispose()
    assert "read_ahead_failed" in caplog.text, caplog.text
    assert "read_ahead_done" not in caplog.text
