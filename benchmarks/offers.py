"""What the search tool answers to transcripts already made: issue 19's wrong products.

`product_names.py --dump FILE` writes each transcript it makes (a minute or two of
Whisper per set); this replays them through the agents' search decision
(`agents.tools.catalogue.answer_search`) in seconds, so a change to that decision is
measured on the same transcripts before and after. Run it from a copy of the code
before the change for the baseline.

    .venv/bin/python benchmarks/product_names.py --set S --voices all --dump /tmp/S.jsonl
    .venv/bin/python benchmarks/offers.py /tmp/S.jsonl [...] [--show]
    .venv/bin/python benchmarks/offers.py --absent

`--absent` asks instead for each drug in benchmarks/data/absent_drugs.txt, which the
catalogue does not hold, three ways: how many the search takes for a product it holds
(a name matched at 0.78 or more), and whether the agents offer one, ask about one, list
some, or say the drug is not stocked. `--blind FILE` adds sentences written without
the code (benchmarks/data/blind_drugs.yaml): drugs the catalogue lacks, and products
it holds named another way, which must be found and never said to be missing.

A reply is one product offered, one asked about first ("did you say ...?"), a list
holding the product said or not, or nothing found; *wrong* is another product than
the one the sentence names. *Found* and *top wrong* are `product_names.py`'s figures
(the transcript names the product or the search's top hit is it; the top hit is another
product), for a change to the search itself.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import REPO, pct  # noqa: E402
from sqlalchemy.engine import Engine  # noqa: E402

if TYPE_CHECKING:
    from agents.tools.catalogue import SearchAnswer

sys.path.insert(0, str(REPO))

KINDS = ("offered right", "offered wrong", "asked right", "asked wrong", "listed, holding it",
         "listed, without it", "nothing")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dumps", nargs="*", type=Path)
    parser.add_argument("--absent", action="store_true", help="drugs the catalogue lacks")
    parser.add_argument("--blind", type=Path, help="with --absent: a YAML of sentences")
    parser.add_argument("--show", action="store_true", help="print every wrong offer")
    args = parser.parse_args()

    from product_names import named
    from sqlmodel import Session

    from agents.tools.catalogue import answer_search
    from models import make_engine
    from models.catalogue import load_catalogue
    from models.search import search_products

    db = make_engine("sqlite:///:memory:")
    load_catalogue(db)
    if args.absent:
        absent(db, args.blind)
        return
    print(
        f"{'transcripts':<28} {'condition':<9} {'n':>4} {'found':>6} {'top wrong':>9} "
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
            seen = counts.setdefault(record["condition"], Counter())
            seen[kind] += 1
            with Session(db) as session:
                top = [h.product.name for h in search_products(session, record["heard"], limit=1)]
            seen["found"] += any(named(record["heard"], p) for p in right) or bool(right & set(top))
            seen["top wrong"] += bool(top) and top[0] not in right
            if args.show and kind == "offered wrong":
                print(f"  {record['condition']} {record['voice']:<18} {record['text']!r} -> "
                      f"{record['heard']!r} -> {shown[0]}")  # fmt: skip
        for condition, seen in counts.items():
            n = sum(seen[k] for k in KINDS)
            print(
                f"{path.name:<28} {condition:<9} {n:>4} {100 * seen['found'] / n:>5.1f}% "
                f"{seen['top wrong']:>9} " + " ".join(f"{seen[k]:>{len(k)}}" for k in KINDS)
            )
    db.dispose()
    # The first answers warm the caches; the rest are what a turn pays.
    warm = sorted(took[50:] or took)
    print(
        f"answer_search per transcript: p50 {1000 * pct(warm, 0.5):.2f} ms, "
        f"p95 {1000 * pct(warm, 0.95):.2f} ms ({len(warm)} after 50 to warm up)"
    )


# As callers ask for a drug: a question, an order, and a form said with it.
PHRASINGS = ("do you have {}?", "two boxes of {} please", "the {} tablets")


def absent(db: Engine, blind: Path | None) -> None:
    """Drugs the catalogue lacks, each said three ways (and the sentences of `blind`, a
    YAML of `absent: [{said, drug}]` and `held: [{said, product}]`): how many the search
    takes for a product it holds, and what the agents answer."""
    import yaml

    lines = (REPO / "benchmarks/data/absent_drugs.txt").read_text().splitlines()
    drugs = [line for line in lines if line and not line.startswith("#")]
    sets = {"absent_drugs.txt": [(p.format(d), d) for p in PHRASINGS for d in drugs]}
    held: list[tuple[str, str]] = []
    if blind is not None:
        data = yaml.safe_load(blind.read_text())
        sets[blind.name] = [(e["said"], e["drug"]) for e in data.get("absent", [])]
        held = [(e["said"], e["product"]) for e in data.get("held", [])]
    print(f"{'sentences':<24} {'n':>4} {'taken':>6} {'offered':>8} {'asked':>6} {'listed':>7} "
          f"{'not stocked':>12}")  # fmt: skip
    wrong: list[str] = []
    for name, cases in sets.items():
        seen: Counter[str] = Counter()
        for said, drug in cases:
            hits, answer = _answer(db, said)
            seen["taken"] += bool(hits)
            if f"don't stock {drug.lower()}" in answer.text:
                seen["not stocked"] += 1
            elif len(answer.products) == 1:
                seen["asked" if answer.asked else "offered"] += 1
                if not answer.asked:
                    wrong.append(f"{said!r} -> {answer.products[0].name}")
            elif answer.products:
                seen["listed"] += 1
        print(f"{name:<24} {len(cases):>4} {seen['taken']:>6} {seen['offered']:>8} "
              f"{seen['asked']:>6} {seen['listed']:>7} {seen['not stocked']:>12}")  # fmt: skip
    for line in wrong:
        print(f"  offered as another product: {line}")
    if held:
        found = lacked = 0
        for said, product in held:
            _, answer = _answer(db, said)
            found += product in [p.name for p in answer.products]
            if "don't stock" in answer.text:
                lacked += 1
                print(f"  a product held said not to be stocked: {said!r} ({product})")
        print(f"{len(held)} sentences naming a held product another way: found {found}, "
              f"said not to be stocked {lacked}")  # fmt: skip


def _answer(db: Engine, said: str) -> tuple[list[object], SearchAnswer]:
    from sqlmodel import Session

    from agents.tools.catalogue import answer_search
    from models.search import search_products

    with Session(db) as session:
        hits = [h for h in search_products(session, said, limit=1) if h.name_score >= 0.78]
        return list(hits), answer_search(session, said, said, "USD")


if __name__ == "__main__":
    main()
