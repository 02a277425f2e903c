"""How long the cyclic collector stops the event loop in a started gateway, with and
without `callswarm.heap.settle_heap()`.

    .venv/bin/python benchmarks/gc_pause.py [--provider local] [--callers 20] [--repeat 15]

The gateway is built as `callswarm serve` builds it (services, Whisper and Piper warmed,
the console's journal and metrics, the FastAPI app), then `--callers` text callers each
take two scripted turns, so the heap holds what serving leaves behind, and a full
collection (what Python runs now and then on its own, in whichever call happens to
allocate) is timed `--repeat` times. Then settle_heap(), as `serve` does before its
first caller, `--callers` more callers, and the same measure.
Every live call's audio is queued at most 0.2 s ahead of the caller's ear: a pause longer
than that is a gap the caller hears.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import time
from pathlib import Path

from _harness import pct

from callswarm.app import Services, build_services
from callswarm.heap import settle_heap
from callswarm.serve import make_gateway, voice_engines
from callswarm.settings import Settings
from web import create_app

LINES = ["Do you have any ibuprofen?", "Two packs, please."]


def pauses(repeat: int) -> list[float]:
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        gc.collect()
        timings.append(time.perf_counter() - started)
    return timings


def row(label: str, repeat: int) -> str:
    ms = [t * 1000 for t in pauses(repeat)]
    return (
        f"| {label} | {len(gc.get_objects()):,} | {gc.get_freeze_count():,} "
        f"| {statistics.median(ms):.1f} | {pct(ms, 0.95):.1f} |"
    )


async def serve_callers(services: Services, first: int, count: int, lines: list[str]) -> None:
    for n in range(first, first + count):
        session = services.engine.session(f"gc-{n}", services.swarm)
        for line in lines:
            await session.complete(line)


async def main(provider: str, callers: int, repeat: int) -> None:
    lines = LINES if provider == "scripted" else LINES[:1]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), provider=provider, idle_timeout=None)
        services = build_services(settings)
        await services.warm_up()
        gateway = make_gateway(services, voice_engines(services))
        create_app(gateway)  # not served: built for what it leaves on the heap, as in serve
        try:
            print(f"provider {provider}; {callers} text callers served before each measure")
            print("| heap | tracked objects | frozen | full collection p50 (ms) | p95 (ms) |")
            print("|---|---|---|---|---|")
            await serve_callers(services, 0, callers, lines)
            print(row("as started", repeat))
            settle_heap()
            await serve_callers(services, callers, callers, lines)
            print(row("settled at start-up", repeat))
        finally:
            gc.unfreeze()
            await gateway.aclose()
            await services.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--provider", default="scripted", choices=["scripted", "local"])
    parser.add_argument("--callers", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    asyncio.run(main(args.provider, args.callers, args.repeat))
