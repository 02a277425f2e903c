"""What callers' own words do to an order in progress: utterances nobody here wrote.

    .venv/bin/python benchmarks/order_moves.py [--show]

Each set in benchmarks/data/order_moves.txt was written by a helper that read no
file of this repository, for an order of two lines: removals, removals said with the
end of the order ("take the gel off, that's it"), ends of the order, new counts, and
words that change nothing. Every utterance is said to the real pharmacy on the
scripted provider (routers, screen, tools, SQLite), by a new caller whose order holds
the set's two lines, and the order is read back from the database:

- *right*: the order is what the caller meant (the line gone, the count set, or
  nothing changed);
- *unchanged*: nothing changed though a change was meant; the caller is asked again
  or answered by the model, and nothing is lost;
- *wrong*: another line removed or changed, or a count not meant: what the caller
  must notice and undo;
- *kept*: a line meant to go was still there when the order was read back for a yes;
- *safety*: of all of them, replies that were a safety answer (an emergency number, a
  crisis line, a pharmacist for a dose question) to order talk, which has none.

Run it from a copy of the code before a change for the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from _harness import REPO
from sqlmodel import Session, select

from agents import safety
from callswarm.app import Services, build_services
from callswarm.settings import Settings
from models import orders
from models.shop import Customer, Order, OrderLine, OrderStatus, Product

DATA = REPO / "benchmarks" / "data" / "order_moves.txt"
CATEGORIES = ("remove", "remove_done", "done", "quantity", "nochange")
VERDICTS = ("right", "unchanged", "wrong", "kept")
# Never printed by --show: a set read is a set tuned on.
HELD_OUT = frozenset({"blind4"})


@dataclass(frozen=True)
class Said:
    category: str
    words: str
    meant: str


@dataclass(frozen=True)
class Set:
    name: str
    lines: tuple[tuple[str, str, int], ...]  # sku, label, packs
    said: tuple[Said, ...]


def read_sets(path: Path = DATA) -> list[Set]:
    sets: list[Set] = []
    name = ""
    lines: tuple[tuple[str, str, int], ...] = ()
    said: list[Said] = []
    for raw in [*path.read_text().splitlines(), "[end]"]:
        if raw.startswith("[") and "]" in raw:
            if name:
                sets.append(Set(name, lines, tuple(said)))
            name, said = raw[1 : raw.index("]")], []
        elif raw.startswith("lines: "):
            parts = [p.split() for p in raw.removeprefix("lines: ").split(";")]
            lines = tuple((sku, label, int(n)) for sku, label, n in parts)
        elif raw and not raw.startswith("#"):
            category, words, meant = raw.split("\t")
            said.append(Said(category, words, meant))
    return sets


def _order(shop: Services, client: str) -> tuple[dict[str, int], bool]:
    """The pending order's packs by sku, and whether its current revision was read back."""
    with Session(shop.db) as db:
        customer = db.exec(select(Customer).where(Customer.client_id == client)).one()
        order = db.exec(
            select(Order).where(
                Order.customer_id == customer.id, Order.status == OrderStatus.PENDING
            )
        ).first()
        if order is None:
            return {}, False
        lines = db.exec(select(OrderLine).where(OrderLine.order_id == order.id)).all()
        return {
            line.sku: line.quantity for line in lines
        }, order.read_back_revision == order.revision


def _judge(
    case: Said, lines: tuple[tuple[str, str, int], ...], after: dict[str, int], read: bool
) -> str:
    before = {sku: n for sku, _, n in lines}
    sku_of = {label: sku for sku, label, _ in lines}
    if case.meant == "none":
        return "right" if after == before else "wrong"
    label, _, count = case.meant.partition(" ")
    meant = dict(before)
    if count:
        meant[sku_of[label]] = int(count)
    else:
        del meant[sku_of[label]]
    if after == meant:
        return "right"
    if after == before:
        return "kept" if case.category == "remove_done" and read else "unchanged"
    return "wrong"


async def run(show: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        shop = build_services(Settings(data_dir=Path(tmp), provider="scripted", idle_timeout=None))
        try:
            answers = [safety.answer(c).words for c in safety.Concern]  # the default lines
            print(
                f"{'set':8} {'category':12} {'n':>3} {'right':>6} {'unchanged':>9} {'wrong':>5} "
                f"{'kept':>4} {'safety':>6}"
            )
            totals: Counter[tuple[str, str]] = Counter()
            for each in read_sets():
                for category in CATEGORIES:
                    counts: Counter[str] = Counter()
                    for i, case in enumerate(c for c in each.said if c.category == category):
                        client = f"{each.name}-{category}-{i}"
                        with Session(shop.db) as db:
                            customer = orders.get_or_create_customer(db, client_id=client)
                            assert customer.id is not None
                            for sku, _, packs in each.lines:
                                product = db.get(Product, sku)
                                assert product is not None
                                orders.set_quantity(
                                    db, customer_id=customer.id, product=product, quantity=packs
                                )
                        session = shop.engine.session(client, shop.swarm)
                        reply = await session.complete(case.words)
                        after, read = _order(shop, client)
                        verdict = _judge(case, each.lines, after, read)
                        counts[verdict] += 1
                        totals[(each.name, verdict)] += 1
                        if any(reply.startswith(a) for a in answers):
                            counts["safety"] += 1
                            totals[(each.name, "safety")] += 1
                        if show and verdict != "right" and each.name not in HELD_OUT:
                            print(f"  {verdict:9} {case.meant:14} {case.words!r} -> {reply!r}")
                    n = sum(counts[v] for v in VERDICTS)
                    print(
                        f"{each.name:8} {category:12} {n:3} {counts['right']:6} "
                        f"{counts['unchanged']:9} {counts['wrong']:5} {counts['kept']:4} "
                        f"{counts['safety']:6}"
                    )
                n = sum(totals[(each.name, v)] for v in VERDICTS)
                right = totals[(each.name, "right")]
                print(
                    f"{each.name:8} {'all':12} {n:3} {right:6} {totals[(each.name, 'unchanged')]:9} "
                    f"{totals[(each.name, 'wrong')]:5} {totals[(each.name, 'kept')]:4} "
                    f"{totals[(each.name, 'safety')]:6}   ({100 * right / n:.1f} % right)"
                )
        finally:
            await shop.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print every utterance not right")
    args = parser.parse_args()
    asyncio.run(run(args.show))


if __name__ == "__main__":
    main()
