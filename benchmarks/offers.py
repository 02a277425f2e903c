"""What the search tool answers to transcripts already made: issue 19's wrong products.

`product_names.py --dump FILE` writes each transcript it makes (a minute or two of
Whisper per set); this replays them through the agents' search decision
(`agents.tools.catalogue.answer_search`) in seconds, so a change to that decision is
measured on the same transcripts before and after. Run it from a copy of the code
before the change for the baseline.

    .venv/bin/python benchmarks/product_names.py --set S --voices all --dump /tmp/S.jsonl
    .venv/bin/python benchmarks/offers.py /tmp/S.jsonl [...] [--show]

A reply is one product offered, one asked about first ("did you say ...?"), a list
holding the product said or not, or nothing found; *wrong* is another product than
the one the sentence names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import REPO, pct  # noqa: E402

sys.path.insert(0, str(REPO))

KINDS = ("offered right", "offered wrong", "asked right", "asked wrong", "listed, holding it",
         "listed, without it", "nothing")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dumps", nargs="+", type=Path)
    parser.add_argument("--show", action="store_true", help="print every wrong offer")
    args = parser.parse_args()

    from sqlmodel import Session

    from agents.tools.catalogue import answer_search
    from models import make_engine
    from models.catalogue import load_catalogue

    db = make_engine("sqlite:///:memory:")
    load_catalogue(db)
    print(
        f"{'transcripts':<28} {'condition':<9} {'n':>4} "
        + " ".join(f"{k:>{len(k)}}" for k in KINDS)
    )
    took: list[float] = []
    for path in args.dumps:
        counts: dict[str, Counter[str]] = {}
        for line in path.read_text().splitlines():
            record = json.loads(line)
            with Session(db) as session:
                started = time.perf_counter()
                answer = answer_search(session, record["heard"], record["heard"], "USD")
                took.append(time.perf_counter() - started)
            shown = [p.name for p in answer.products]
            right = set(record["right"])
            if len(shown) == 1:
                way = "asked" if answer.asked else "offered"
                kind = f"{way} {'right' if shown[0] in right else 'wrong'}"
            elif shown:
                kind = "listed, holding it" if right & set(shown) else "listed, without it"
            else:
                kind = "nothing"
            counts.setdefault(record["condition"], Counter())[kind] += 1
            if args.show and kind == "offered wrong":
                print(f"  {record['condition']} {record['voice']:<18} {record['text']!r} -> "
                      f"{record['heard']!r} -> {shown[0]}")  # fmt: skip
        for condition, seen in counts.items():
            print(
                f"{path.name:<28} {condition:<9} {sum(seen.values()):>4} "
                + " ".join(f"{seen[k]:>{len(k)}}" for k in KINDS)
            )
    db.dispose()
    # The first answers warm the caches; the rest are what a turn pays.
    warm = sorted(took[50:] or took)
    print(
        f"answer_search per transcript: p50 {1000 * pct(warm, 0.5):.2f} ms, "
        f"p95 {1000 * pct(warm, 0.95):.2f} ms ({len(warm)} after 50 to warm up)"
    )


if __name__ == "__main__":
    main()
