"""What callers say beside a product, in sentences nobody here wrote: their name, a drug
the shop lacks with something it has, a combination, and a pick from a list just read.

    .venv/bin/python benchmarks/said_beside.py benchmarks/data/blind_beside.yaml [--show]

Each file is written by a helper who saw only the product list (its header says how).
Counted, by the search tool's answer (`answer_search`) to each sentence as said:
- `intro`: the product asked for is among those answered, and the caller's name is not
  said to be a drug the shop lacks;
- `lacked_and_held`: "we don't stock" is said, a product asked for is answered, and no
  other product is offered outright;
- `combos`: a combination the shop has is answered; one it lacks is never one product
  offered outright as if it were it (without "we don't stock" said first);
- `lists` (scripted calls, the real pharmacy on SQLite): after the options are read out,
  the caller's words order the one they picked, or nothing when they picked none.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import REPO  # noqa: E402

sys.path.insert(0, str(REPO))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", type=Path)
    parser.add_argument("--show", action="store_true", help="print every miss")
    args = parser.parse_args()
    import yaml

    print(f"{'set':<22} {'part':<16} {'n':>4}  counted")
    for path in args.sets:
        data = yaml.safe_load(path.read_text())
        for part, seen in answers(data, args.show).items():
            print(f"{path.name:<22} {part:<16} {seen.pop('n'):>4}  " + ", ".join(
                f"{k} {v}" for k, v in seen.items()))  # fmt: skip
        if data.get("lists"):
            seen = asyncio.run(picks(data["lists"], args.show))
            print(f"{path.name:<22} {'lists':<16} {seen.pop('n'):>4}  " + ", ".join(
                f"{k} {v}" for k, v in seen.items()))  # fmt: skip


def answers(data: dict[str, Any], show: bool) -> dict[str, Counter[str]]:
    from sqlmodel import Session

    from agents.tools.catalogue import answer_search
    from models import make_engine
    from models.catalogue import load_catalogue

    db = make_engine("sqlite:///:memory:")
    load_catalogue(db)
    counts: dict[str, Counter[str]] = {}

    def answer(said: str) -> tuple[str, list[str], bool]:
        with Session(db) as session:
            a = answer_search(session, said, said, "USD")
        return a.text, [p.name for p in a.products], a.asked

    for entry in data.get("intro", []):
        text, shown, _ = answer(entry["said"])
        wanted = set(entry.get("any") or [entry["product"]])
        lacked = text.split("don't stock", 1)[1][:60].lower() if "don't stock" in text else ""
        name_lacked = any(w.lower() in lacked for w in entry["person"].split())
        seen = counts.setdefault("intro", Counter(n=0))
        seen["n"] += 1
        seen["found"] += bool(wanted & set(shown))
        seen["name said lacked"] += name_lacked
        if show and (name_lacked or not wanted & set(shown)):
            print(f"  intro {entry['said']!r} -> {text[:140]}")
    for entry in data.get("lacked_and_held", []):
        text, shown, asked = answer(entry["said"])
        wanted = set(entry["any"])
        seen = counts.setdefault("lacked_and_held", Counter(n=0))
        seen["n"] += 1
        seen["told"] += "don't stock" in text
        seen["found"] += bool(wanted & set(shown))
        seen["another offered"] += len(shown) == 1 and not asked and shown[0] not in wanted
        if show and not ("don't stock" in text and wanted & set(shown)):
            print(f"  lacked {entry['said']!r} -> {text[:140]}")
    for entry in data.get("combos", []):
        text, shown, asked = answer(entry["said"])
        seen = counts.setdefault("combos", Counter(n=0))
        seen["n"] += 1
        if entry.get("stocked"):
            seen["held"] += 1
            ok = entry["stocked"] in shown and "don't stock" not in text
            seen["held found"] += ok
        else:
            seen["lacked"] += 1
            told = "in one product" in text or "don't stock" in text
            ok = not (len(shown) == 1 and not asked and not told)
            seen["lacked, one offered as it"] += not ok
        if show and not ok:
            print(f"  combo {entry['said']!r} -> {text[:140]}")
    return counts


async def picks(lists: list[dict[str, Any]], show: bool) -> Counter[str]:
    from sqlmodel import Session, select

    from agents.speech import describe
    from callswarm.app import build_services
    from callswarm.settings import Settings
    from models.shop import Customer, Order, OrderLine, Product

    seen: Counter[str] = Counter(n=0)
    with tempfile.TemporaryDirectory() as tmp:
        shop = build_services(Settings(data_dir=Path(tmp), provider="scripted", idle_timeout=None))
        try:
            for k, entry in enumerate(lists):
                client = f"list-{k}"
                session = shop.engine.session(client, shop.swarm)
                with Session(shop.db) as db:
                    products = [
                        db.exec(select(Product).where(Product.name == name)).one()
                        for name in entry["options"]
                    ]
                    listed = "; ".join(describe(p, "USD") for p in products)
                # To sales, as a caller asking for the first option gets there; then the
                # options read out, as the search tool words them.
                await session.complete(f"do you have {entry['options'][0]}")
                await session.emit(
                    f"We have {len(products)} options: {listed}. Which one would you like?"
                )
                reply = await session.complete(entry["said"])
                with Session(shop.db) as db:
                    names = sorted(
                        db.get_one(Product, line.sku).name
                        for line in db.exec(
                            select(OrderLine)
                            .join(Order)
                            .join(Customer)
                            .where(Customer.client_id == client)
                        )
                    )
                want = [entry["picks"]] if entry.get("picks") else []
                seen["n"] += 1
                seen["right"] += names == want
                seen["wrong product ordered"] += bool(names) and names != want
                seen["a pick missed"] += bool(want) and not names
                if show and names != want:
                    print(f"  list {entry['options']} {entry['said']!r} -> {names} / {reply[:100]}")
        finally:
            await shop.aclose()
    return seen


if __name__ == "__main__":
    main()
