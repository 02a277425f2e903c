"""What the pharmacy's tools need, handed to them through the swarm's tool context."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.engine import Engine
from sqlmodel import Session

from agents.risk import NoReader, RiskReader
from agents.safety import SafetyLines
from swarm import ToolContext

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ShopInfo:
    name: str = "Riverside Pharmacy"
    address: str = "12 River Street, next to the post office"
    hours: str = "Monday to Saturday 8 am to 8 pm, and Sunday 10 am to 4 pm"
    currency: str = "USD"
    safety: SafetyLines = SafetyLines()


@dataclass(frozen=True, slots=True)
class Pharmacy:
    db: Engine
    shop: ShopInfo
    # Reads what the safety phrases miss (agents/risk.py).
    risk: RiskReader = NoReader()

    async def run(self, work: Callable[[Session], T]) -> T:
        """Run blocking database work in a worker thread, with its own session."""

        def call() -> T:
            with Session(self.db) as session:
                return work(session)

        return await asyncio.to_thread(call)


def pharmacy(ctx: ToolContext) -> Pharmacy:
    deps = ctx.deps
    if not isinstance(deps, Pharmacy):
        raise RuntimeError("the pharmacy agency needs Engine(deps=Pharmacy(...))")
    return deps
