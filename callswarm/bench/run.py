"""Running scenarios against a provider: each run is a fresh caller on a throwaway database."""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlmodel import Session as DbSession
from sqlmodel import col, select

from callswarm.app import Services
from callswarm.bench.match import Observed, OrderState, ToolUse, check_final, check_turn
from callswarm.bench.scenario import Scenario
from models.shop import Customer, Order, OrderLine
from swarm import CompletionTiming, SwarmError, ToolCalled


@dataclass(frozen=True)
class TurnResult:
    said: str
    reply: str
    agent: str
    tools: tuple[ToolUse, ...]
    latency_s: float
    tokens: int
    rescues: int
    problems: tuple[str, ...]
    model_calls: int = 0


@dataclass(frozen=True)
class RunResult:
    """One scenario, once."""

    scenario: str
    tags: tuple[str, ...]
    repeat: int
    turns: tuple[TurnResult, ...]
    final_problems: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.first_broken is None

    @property
    def first_broken(self) -> int | str | None:
        """The first turn (1-based) that broke, "final" for the database, None if none."""
        for n, turn in enumerate(self.turns, start=1):
            if turn.problems:
                return n
        return "final" if self.final_problems else None

    @property
    def rescues(self) -> int:
        return sum(t.rescues for t in self.turns)

    @property
    def tokens(self) -> int:
        return sum(t.tokens for t in self.turns)


@dataclass
class BenchResult:
    provider: str
    model: str
    runs: list[RunResult] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    seconds: float = 0.0

    @property
    def broken_rate(self) -> float:
        return sum(not r.passed for r in self.runs) / len(self.runs) if self.runs else 0.0

    def latencies(self) -> list[float]:
        return [t.latency_s for r in self.runs for t in r.turns]

    def median_latency(self) -> float:
        values = self.latencies()
        return statistics.median(values) if values else 0.0

    def model_calls(self) -> list[int]:
        return [t.model_calls for r in self.runs for t in r.turns]

    def slowest_turn(self) -> TurnResult | None:
        turns = [t for r in self.runs for t in r.turns]
        return max(turns, key=lambda t: t.latency_s, default=None)


Progress = Callable[[int, int, RunResult], None]


async def run_scenario(services: Services, scenario: Scenario, repeat: int) -> RunResult:
    engine = services.engine
    client_id = f"bench-{uuid.uuid4().hex[:12]}"
    session = engine.session(client_id, services.swarm)
    tool_names = frozenset(engine.registry.tools)
    turns = []
    # Scenarios run one at a time, so every completion in a turn is this caller's.
    calls = [0]
    observe = engine.on_completion

    def counted(timing: CompletionTiming) -> None:
        calls[0] += 1
        if observe is not None:
            observe(timing)

    engine.on_completion = counted
    try:
        for turn in scenario.turns:
            said = turn.text(repeat)
            tokens, rescues, before = session.tokens, session.rescue_count, calls[0]
            failure: list[str] = []
            with engine.bus.subscribe() as events:
                started = time.perf_counter()
                try:
                    reply = await session.complete(said)
                except SwarmError as exc:
                    reply, failure = "", [f"the turn failed: {exc}"]
                latency = time.perf_counter() - started
                tools = tuple(
                    ToolUse(e.tool, dict(e.arguments))
                    for e in events.drain()
                    if isinstance(e, ToolCalled) and e.session_id == client_id
                )
            seen = Observed(reply=reply, agent=await session.get_agent_name(), tools=tools)
            problems = failure + check_turn(turn.expect, seen, tool_names)
            turns.append(
                TurnResult(
                    said=said,
                    reply=reply,
                    agent=seen.agent,
                    tools=tools,
                    latency_s=latency,
                    tokens=session.tokens - tokens,
                    rescues=session.rescue_count - rescues,
                    problems=tuple(problems),
                    model_calls=calls[0] - before,
                )
            )
        orders = await asyncio.to_thread(orders_of, services, client_id)
    finally:
        engine.on_completion = observe
        await session.dispose()
    return RunResult(
        scenario=scenario.name,
        tags=tuple(scenario.tags),
        repeat=repeat,
        turns=tuple(turns),
        final_problems=tuple(check_final(scenario.final, orders)),
    )


def orders_of(services: Services, client_id: str) -> list[OrderState]:
    with DbSession(services.db) as db:
        orders = db.exec(
            select(Order)
            .where(Order.customer_id == Customer.id, Customer.client_id == client_id)
            .order_by(col(Order.id))
        ).all()
        out = []
        for order in orders:
            lines = db.exec(select(OrderLine).where(OrderLine.order_id == order.id)).all()
            out.append(
                OrderState(
                    status=order.status.value,
                    total_cents=order.total_cents,
                    lines=tuple((line.sku, line.quantity) for line in lines),
                )
            )
        return out


async def run_bench(
    services: Services,
    scenarios: list[Scenario],
    *,
    provider: str,
    model: str,
    repeat: int = 1,
    progress: Progress | None = None,
) -> BenchResult:
    result = BenchResult(provider=provider, model=model)
    total = len(scenarios) * repeat
    started = time.perf_counter()
    for n in range(repeat):
        for scenario in scenarios:
            run = await run_scenario(services, scenario, n)
            result.runs.append(run)
            if progress is not None:
                progress(len(result.runs), total, run)
    result.seconds = time.perf_counter() - started
    return result
