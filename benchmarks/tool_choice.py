"""Does the model pick the right tools? Short conversations on the real pharmacy service.

    .venv/bin/python benchmarks/tool_choice.py [--model PATH] [--provider local|scripted]

Each case is a few caller lines with the tools expected at each turn (hand-offs
included). A turn is right when the set of tools called equals the expected
set. Prints the right-turn rate, per-turn latency p50/p95, and the failures.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
from pathlib import Path

from _harness import REPO, fresh_services, pct, timed_turn

from callswarm.bundled import QWEN_05B, ensure_model
from swarm import ToolCalled

NAV, SEARCH = "navigate_to_sales", "search_products"
# A turn may accept several answers: "Paracetamol please" may be searched or added.
CASES: list[list[tuple[str, set[str] | list[set[str]]]]] = [
    [("hello", set())],
    [("When do you close today?", set())],
    [("Where are you?", set())],
    [("That's all, thanks", set())],
    [("Can I talk to a real person?", {"transfer_to_operator"})],
    [("I have hay fever", {NAV, SEARCH})],
    [("Do you sell amoxicillin?", {NAV, SEARCH})],
    [("Paris at them all please", [{NAV, SEARCH}, {NAV, "add_to_order"}])],
    [
        ("I need something for a headache", {NAV, SEARCH}),
        ("Two boxes of paracetamol please", {"add_to_order"}),
        ("That's all", {"read_back_order"}),
        ("Yes", {"confirm_order"}),
    ],
    [("Do you have ibuprofen?", {NAV, SEARCH}), ("yes, two boxes please", {"add_to_order"})],
    [("I need ibuprofen", {NAV, SEARCH}), ("what's the status of my order?", {"order_status"})],
    [
        ("I need ibuprofen", {NAV, SEARCH}),
        ("one box please", {"add_to_order"}),
        ("actually, remove the ibuprofen", {"remove_from_order"}),
    ],
    [
        ("I need ibuprofen", {NAV, SEARCH}),
        ("one box please", {"add_to_order"}),
        ("please cancel my order", {"cancel_order"}),
    ],
    [("I need loratadine", {NAV, SEARCH}), ("when do you close?", {"navigate_to_triage"})],
    [
        ("I need cetirizine", {NAV, SEARCH}),
        ("can I speak to the pharmacist?", {"transfer_to_operator"}),
    ],
]


async def run(provider: str, model: Path) -> None:
    right, total, latencies, failures = 0, 0, [], []
    async with fresh_services(provider, model) as (services, warm):
        for n, case in enumerate(CASES):
            session = services.engine.session(f"case-{n}", services.swarm)
            await session.emit(services.greeting)
            for line, expected in case:
                elapsed, reply, events = await timed_turn(services.engine, session, line)
                latencies.append(elapsed)
                called = {e.tool for e in events if isinstance(e, ToolCalled)}
                total += 1
                if called in (expected if isinstance(expected, list) else [expected]):
                    right += 1
                else:
                    failures.append(
                        f"{line!r}: {sorted(called)} (wanted {expected}) -> {reply[:60]!r}"
                    )
    print(f"model: {model.name if provider == 'local' else provider}")
    print(f"warm-up {warm:.1f} s; right turns {right}/{total} ({100 * right / total:.0f}%)")
    print(
        f"turn latency p50 {statistics.median(latencies):.2f} s, p95 {pct(latencies, 0.95):.2f} s"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    print(f"peak resident memory {peak:.2f} GB (both agents' instances, weights shared by mmap)")
    for failure in failures:
        print("  wrong:", failure)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", default="local")
    parser.add_argument("--model", type=Path, default=None)
    options = parser.parse_args()
    chosen = options.model or ensure_model(QWEN_05B, REPO / "data")
    asyncio.run(run(options.provider, chosen))
