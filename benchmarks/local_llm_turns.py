"""Latency per turn of the pharmacy on the embedded model, against the scripted baseline.

    .venv/bin/python benchmarks/local_llm_turns.py [--repeat 3]

Each repeat builds the whole service on a fresh SQLite file, warms each agent's
prompt (timed: that is the cold cost a first caller would otherwise pay), then
plays the same caller scripts through the local and the scripted provider.
Prints p50/p95 per kind of turn and the local/scripted ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from pathlib import Path

from _harness import REPO, fresh_services, pct, timed_turn
from sqlmodel import Session, select

from callswarm.bundled import QWEN_05B, ensure_model
from models.shop import Order, OrderStatus
from swarm import AgentChanged

SCRIPTS = {
    "purchase": [
        "I need something for a headache",
        "Two boxes of paracetamol please",
        "That's all, thanks",
        "Yes",
    ],
    "prescription": ["Do you sell amoxicillin?", "I want one box of amoxicillin"],
    "hours": ["When do you close today?", "And where are you?"],
    "allergy": [
        "I have hay fever",
        "One box of loratadine please",
        "That's everything",
        "Yes please",
    ],
}


async def play(
    provider: str, model: Path, repeat: int
) -> tuple[dict[str, list[float]], list[float], int]:
    turns: dict[str, list[float]] = {"all": [], "triage": [], "sales": [], "hand-off": []}
    warmups: list[float] = []
    purchases = 0
    for n in range(repeat):
        async with fresh_services(provider, model) as (services, warm):
            warmups.append(warm)
            for name, lines in SCRIPTS.items():
                session = services.engine.session(f"{name}-{n}", services.swarm)
                await session.emit(services.greeting)
                for line in lines:
                    elapsed, _, events = await timed_turn(services.engine, session, line)
                    changed = any(isinstance(e, AgentChanged) for e in events)
                    agent = await session.get_agent_name()
                    turns["all"].append(elapsed)
                    turns["hand-off" if changed else agent].append(elapsed)
            with Session(services.db) as db:
                purchases += len(
                    db.exec(select(Order).where(Order.status == OrderStatus.CONFIRMED)).all()
                )
    return turns, warmups, purchases


async def main(model: Path, repeat: int) -> None:
    local, warm_local, bought_local = await play("local", model, repeat)
    scripted, _, bought_scripted = await play("scripted", model, repeat)
    print(f"turns per provider: {len(local['all'])}; repeats: {repeat}")
    print(
        f"warm-up of both agents (cold prompt read), local: median {statistics.median(warm_local):.2f} s"
    )
    print(
        f"confirmed purchases: local {bought_local}, scripted {bought_scripted} "
        f"(expected {2 * repeat})"
    )
    print()
    print(
        f"{'turn kind':<10} {'n':>3} {'local p50':>10} {'local p95':>10} "
        f"{'scripted p50':>13} {'ratio p50':>10}"
    )
    for kind in ("all", "triage", "hand-off", "sales"):
        lv, sv = local[kind], scripted[kind] or [float("nan")]
        if not lv:
            continue
        ratio = statistics.median(lv) / statistics.median(sv) if scripted[kind] else float("nan")
        print(
            f"{kind:<10} {len(lv):>3} {statistics.median(lv):>9.2f}s {pct(lv, 0.95):>9.2f}s "
            f"{statistics.median(sv) * 1000:>11.1f}ms {ratio:>9.0f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    bundled = ensure_model(QWEN_05B, REPO / "data")
    asyncio.run(main(bundled, options.repeat))
