"""Keeping the cyclic garbage collector out of live calls.

A full collection walks every object the collector tracks, and the event loop stands
still while it runs. Once the models, SQLAlchemy, pydantic and the app are loaded that
walk is long, and a pause longer than the audio queued ahead of a caller's ear (0.2 s
on a phone line) is a gap the caller hears: ~0.17-0.19 s in a started gateway, and
0.2-0.9 s in the test suite's bigger process (docs/performance.md, "Collector pauses").

What is alive once the gateway has started lives as long as the process, so it is moved
out of the collections (`gc.freeze()`); later collections walk only what calls create.
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger("callswarm.heap")


def settle_heap() -> int:
    """Collect what start-up left behind, then freeze the rest; returns the objects frozen.

    Call once start-up is done (models loaded and warmed) and before the first caller."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("heap_settled frozen=%d ms=%.0f", frozen, (time.perf_counter() - started) * 1000)
    return frozen


def unsettle_heap() -> None:
    """Give the frozen objects back to the collector: for a process that goes on after
    the gateway stops (tests), so that what the gateway leaves in cycles is reclaimed."""
    gc.unfreeze()
