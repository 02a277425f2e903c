"""Catalogue search time per caller sentence: the screen and the tools search on most turns.

    .venv/bin/python benchmarks/search.py [--repeat 5]

Sentences: every caller line and STT variant of the pharmacy's bench scenarios, the
same joined three at a time (a caller who says a lot at once), and random text like
the socket fuzzer's. Two calls, each in a database session of its own, as a tool's
work is: `search_products` (one search), and `several_products` (the screen's "does
this line name several products?", which searches each item and asks for brands).
Prints p50 and p95 per set, in milliseconds, on a warm cache, and the p50 of the
thread's CPU time, which other processes on a shared host do not add to (both still
move by a quarter or more from run to run here).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import yaml
from _harness import REPO
from sqlmodel import Session

from agents.tools.catalogue import several_products
from callswarm.app import open_database
from callswarm.settings import Settings
from models.search import search_products

BENCH = REPO / "agents" / "bench"


def sentences() -> dict[str, list[str]]:
    said: list[str] = []
    for path in sorted(BENCH.glob("*/*.yaml")):
        for turn in yaml.safe_load(path.read_text())["turns"]:
            said += [turn["say"], *turn.get("variants", [])]
    rng = random.Random(4)
    alphabet = "abcdefghij klmnop qrstuvwxyz0123456789 .,?!'"
    noise = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(20, 200))) for _ in range(60)
    ]
    joined = [" ".join(said[i : i + 3]) for i in range(0, len(said) - 2, 3)]
    return {"scenario lines": said, "three lines at once": joined, "random text": noise}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    db = open_database(Settings(data_dir=Path(tempfile.mkdtemp())))
    print(f"{'call':<18}{'set':<22}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'CPU p50':>10}")
    for call in (search_products, several_products):
        for name, texts in sentences().items():
            for text in texts:  # warm: the sounds and word caches, as a running gateway has
                with Session(db) as session:
                    call(session, text)
            times, cpu = [], []
            for _ in range(args.repeat):
                for text in texts:
                    start, used = time.perf_counter(), time.thread_time()
                    with Session(db) as session:
                        call(session, text)
                    times.append((time.perf_counter() - start) * 1000)
                    cpu.append((time.thread_time() - used) * 1000)
            p95 = statistics.quantiles(times, n=20)[-1]
            print(
                f"{call.__name__:<18}{name:<22}{len(texts):>6}{statistics.median(times):>10.1f}"
                f"{p95:>10.1f}{statistics.median(cpu):>10.1f}"
            )


if __name__ == "__main__":
    main()
