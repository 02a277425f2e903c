"""What the benchmarks share: percentiles, and timing one caller turn with its events."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swarm import Engine, Session, SwarmEvent  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def pct(values: list[float], q: float) -> float:
    """The q-quantile by nearest rank: with few samples, no interpolation pretends precision."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def timed_turn(
    engine: Engine, session: Session, line: str
) -> tuple[float, str, list[SwarmEvent]]:
    """One caller line: seconds until the reply, the reply, and the events it published."""
    with engine.bus.subscribe() as events:
        started = time.perf_counter()
        reply = await session.complete(line)
        elapsed = time.perf_counter() - started
        return elapsed, reply, events.drain()
