"""The gateway's heap, settled after start-up: full collections walk only what calls make."""

from __future__ import annotations

import gc

from callswarm.heap import settle_heap, unsettle_heap


def test_a_settled_heap_leaves_full_collections_only_what_came_after() -> None:
    tracked = len(gc.get_objects())
    try:
        frozen = settle_heap()
        assert frozen == gc.get_freeze_count() and frozen > tracked // 2
        made_after = [[n] for n in range(1000)]
        assert len(gc.get_objects()) < len(made_after) + tracked // 10
    finally:
        unsettle_heap()
    assert gc.get_freeze_count() == 0
    assert len(gc.get_objects()) > tracked // 2  # given back to the collector
