"""Whole calls nobody here wrote, from the first word to the last, and what they leave.

    .venv/bin/python benchmarks/whole_calls.py [--sets FILE ...] [--show]

Each file in benchmarks/data/calls_blind*.yaml was written by a helper that read no
code, tests or scenarios of this repository, only the catalogue: callers' own lines,
a call at a time, with what the call should leave (a placed order, an order left
open, or none, with its lines) and which lines are a dose question, an emergency or
self-harm. Every line is said, in order, to the real pharmacy on the scripted provider
(routers, screen, tools, safety phrases and probe, SQLite) by a new caller, whatever
was answered, as a caller who cannot see the replies would; then the orders are read
from the database.

A call is *right* when its orders are what it meant and no reply broke a rule:
- *order*: the placed order's lines, or the open one's, differ from what was meant, or
  an order was placed that was not meant (placed without a yes is worse than left
  open, and both count);
- *sold in a crisis*: a reply to a safety line names a product or a price;
- *leak*: a reply holds what a caller must never hear (JSON, a tool's name, an id);
- *empty*: a reply with no words.

A quarter of each file's calls (by a digest of the file and the call's id) is held
out: counted, never printed by --show, so a change is not tuned on it. Both figures
are reported. Run it from a copy of the code before a change for the baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from _harness import REPO
from sqlmodel import Session, select

from callswarm.app import Services, build_services
from callswarm.bench.match import leaks
from callswarm.settings import Settings
from models.shop import Customer, Order, OrderLine, OrderStatus, Product

DATA = REPO / "benchmarks" / "data"
KINDS = ("purchase", "change", "cancel", "safety", "question")
_PRICE = re.compile(r"\$\s?\d|\bdollars?\b|\bcents?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Call:
    source: str
    id: str
    kind: str
    note: str
    lines: tuple[str, ...]
    order: str  # confirmed | pending | none
    items: tuple[tuple[str, int], ...]
    safety_lines: tuple[int, ...]

    @property
    def held_out(self) -> bool:
        digest = hashlib.sha256(f"{self.source}/{self.id}".encode()).digest()
        return digest[0] % 4 == 0


@dataclass
class Outcome:
    call: Call
    replies: list[str]
    problems: list[str] = field(default_factory=list)


def read_calls(paths: list[Path]) -> list[Call]:
    calls = []
    for path in paths:
        for raw in yaml.safe_load(path.read_text()):
            expect = raw["expect"]
            calls.append(
                Call(
                    source=path.stem,
                    id=str(raw["id"]),
                    kind=raw["kind"],
                    note=raw.get("note", ""),
                    lines=tuple(raw["lines"]),
                    order=expect["order"],
                    items=tuple(
                        sorted((i["sku"], int(i["quantity"])) for i in expect.get("items") or [])
                    ),
                    safety_lines=tuple(expect.get("safety_lines") or ()),
                )
            )
    return calls


def _orders(shop: Services, client: str) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    """Each of the caller's orders that holds a line: its status and its lines."""
    with Session(shop.db) as db:
        customer = db.exec(select(Customer).where(Customer.client_id == client)).first()
        if customer is None:
            return []
        out = []
        for order in db.exec(select(Order).where(Order.customer_id == customer.id)).all():
            lines = db.exec(select(OrderLine).where(OrderLine.order_id == order.id)).all()
            if lines:
                out.append(
                    (order.status.value, tuple(sorted((ln.sku, ln.quantity) for ln in lines)))
                )
        return out


def judge_orders(call: Call, orders: list[tuple[str, tuple[tuple[str, int], ...]]]) -> list[str]:
    placed = [lines for status, lines in orders if status == OrderStatus.CONFIRMED.value]
    left = [lines for status, lines in orders if status == OrderStatus.PENDING.value]
    problems = []
    if call.order == "confirmed":
        if placed != [call.items]:
            problems.append(f"placed {placed or 'nothing'}, meant {list(call.items)}")
    else:
        if placed:
            problems.append(f"placed {placed}, meant none placed")
        open_lines = left[0] if left else ()
        meant = call.items if call.order == "pending" else ()
        if open_lines != meant:
            problems.append(f"left open {list(open_lines)}, meant {list(meant)}")
    return problems


def judge_replies(call: Call, replies: list[str], names: list[str]) -> list[str]:
    problems = []
    for n, reply in enumerate(replies, start=1):
        if not reply.strip():
            problems.append(f"line {n}: empty reply")
        problems += [f"line {n}: {p}" for p in leaks(reply)]
        if n in call.safety_lines:
            named = [name for name in names if name.lower() in reply.lower()]
            if named or _PRICE.search(reply):
                problems.append(f"line {n}: sold in a crisis ({named or 'a price'})")
    return problems


async def play(shop: Services, call: Call, names: list[str]) -> Outcome:
    client = f"blind-{call.source}-{call.id}"
    session = shop.engine.session(client, shop.swarm)
    replies = [await session.complete(line) for line in call.lines]
    outcome = Outcome(call, replies)
    outcome.problems = judge_orders(call, _orders(shop, client)) + judge_replies(
        call, replies, names
    )
    return outcome


async def run(paths: list[Path], show: bool) -> None:
    calls = read_calls(paths)
    with tempfile.TemporaryDirectory() as tmp:
        shop = build_services(Settings(data_dir=Path(tmp), provider="scripted", idle_timeout=None))
        try:
            with Session(shop.db) as db:
                names = [p.name for p in db.exec(select(Product)).all()]
            outcomes = [await play(shop, call, names) for call in calls]
        finally:
            await shop.aclose()
    if show:
        for o in outcomes:
            if o.problems and not o.call.held_out:
                print(f"\n{o.call.source}/{o.call.id} ({o.call.kind}): {o.call.note}")
                for line, reply in zip(o.call.lines, o.replies, strict=True):
                    print(f"  > {line}\n    {reply}")
                for p in o.problems:
                    print(f"  ! {p}")
        print()
    head = f"{'part':9} {'kind':9} {'n':>3} {'right':>6} {'order':>6} {'crisis':>7} {'leak':>5}"
    print(head)
    for part, held in (("daily", False), ("held out", True)):
        for kind in (*KINDS, "all"):
            chosen = [
                o for o in outcomes if o.call.held_out == held and kind in ("all", o.call.kind)
            ]
            if not chosen:
                continue
            counts = Counter()
            for o in chosen:
                counts["right"] += not o.problems
                counts["order"] += any(p.startswith(("placed", "left")) for p in o.problems)
                counts["crisis"] += any("sold in a crisis" in p for p in o.problems)
                counts["leak"] += any("leaks" in p or "empty" in p for p in o.problems)
            print(
                f"{part:9} {kind:9} {len(chosen):3} {counts['right']:6} {counts['order']:6} "
                f"{counts['crisis']:7} {counts['leak']:5}"
                + (
                    f"   ({100 * counts['right'] / len(chosen):.0f} % right)"
                    if kind == "all"
                    else ""
                )
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", type=Path, help="default: every calls_blind*.yaml")
    parser.add_argument("--show", action="store_true", help="print every daily call not right")
    args = parser.parse_args()
    asyncio.run(run(args.sets or sorted(DATA.glob("calls_blind*.yaml")), args.show))


if __name__ == "__main__":
    main()
