"""Does what happened match what a scenario expects? Pure functions, no I/O.

Each check returns the problems it found, in words a person can act on; an empty
list is a pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from callswarm.bench.scenario import (
    FinalExpectation,
    OrderExpectation,
    Phrase,
    ToolExpectation,
    TurnExpectation,
)
from swarm import find_leak

# Catalogue SKUs ("PAR500-16") are internal ids: a caller never hears them.
_SKU = re.compile(r"\b[A-Z]{3}[A-Z0-9]{0,4}-\d{1,4}\b")
FUZZY_MIN = 80


@dataclass(frozen=True)
class ToolUse:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Observed:
    """One turn as it happened."""

    reply: str
    agent: str
    tools: tuple[ToolUse, ...] = ()


@dataclass(frozen=True)
class OrderState:
    status: str
    total_cents: int
    lines: tuple[tuple[str, int], ...]  # (sku, quantity)


def value_matches(expected: Any, actual: Any) -> bool:
    if (
        isinstance(expected, dict)
        and len(expected) >= 1
        and set(expected) <= {"regex", "fuzzy", "min", "any"}
    ):
        if "any" in expected:
            return any(value_matches(option, actual) for option in expected["any"])
        if actual is None:
            return False
        text = str(actual)
        if "regex" in expected:
            return re.search(expected["regex"], text, re.IGNORECASE) is not None
        if "fuzzy" in expected:
            score = fuzz.partial_ratio(str(expected["fuzzy"]).lower(), text.lower())
            return bool(score >= expected.get("min", FUZZY_MIN))
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().lower() == actual.strip().lower()
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and value_matches(v, actual[k]) for k, v in expected.items())
    return bool(expected == actual)


def tool_matches(expected: ToolExpectation, used: ToolUse) -> bool:
    if expected.name != used.name:
        return False
    if expected.args_exact and set(expected.args) != set(used.arguments):
        return False
    return all(
        key in used.arguments and value_matches(value, used.arguments[key])
        for key, value in expected.args.items()
    )


def _says(reply: str, phrase: Phrase) -> bool:
    options = [phrase] if isinstance(phrase, str) else phrase
    return any(option.lower() in reply.lower() for option in options)


def check_turn(
    expect: TurnExpectation, seen: Observed, tool_names: frozenset[str] = frozenset()
) -> list[str]:
    problems: list[str] = []
    if expect.agent is not None and seen.agent != expect.agent:
        problems.append(f"answered by {seen.agent}, expected {expect.agent}")
    unmatched = list(seen.tools)
    for wanted in expect.tools:
        hit = next((used for used in unmatched if tool_matches(wanted, used)), None)
        if hit is None:
            called = ", ".join(f"{u.name}({u.arguments})" for u in seen.tools) or "nothing"
            problems.append(f"expected {wanted.name}({wanted.args}); called {called}")
        else:
            unmatched.remove(hit)
    if expect.only_tools and unmatched:
        problems.append(f"unexpected tools: {[u.name for u in unmatched]}")
    for name in expect.no_tools:
        if any(u.name == name for u in seen.tools):
            problems.append(f"called {name}, which it must not")
    for phrase in expect.says:
        if not _says(seen.reply, phrase):
            problems.append(f"reply lacks {phrase!r}")
    for phrase in expect.not_says:
        if phrase.lower() in seen.reply.lower():
            problems.append(f"reply says {phrase!r}")
    problems.extend(leaks(seen.reply, tool_names))
    return problems


def leaks(reply: str, tool_names: frozenset[str] = frozenset()) -> list[str]:
    """What a caller must never hear: JSON, markup, tool names, internal ids."""
    found = []
    kind = find_leak(reply, tool_names)
    if kind is not None:
        found.append(f"reply leaks {kind}")
    sku = _SKU.search(reply)
    if sku:
        found.append(f"reply leaks the internal id {sku.group(0)}")
    return found


def check_final(expect: FinalExpectation, orders: list[OrderState]) -> list[str]:
    if expect.orders is None:
        return []
    problems = []
    remaining = list(orders)
    for wanted in expect.orders:
        hit = next((o for o in remaining if order_matches(wanted, o)), None)
        if hit is None:
            problems.append(f"no order like {wanted.model_dump(exclude_none=True)}; have {orders}")
        else:
            remaining.remove(hit)
    if remaining:
        problems.append(f"unexpected orders: {remaining}")
    return problems


def order_matches(expected: OrderExpectation, order: OrderState) -> bool:
    if expected.status != order.status:
        return False
    if expected.total_cents is not None and expected.total_cents != order.total_cents:
        return False
    if expected.lines is not None:
        return sorted((line.sku, line.quantity) for line in expected.lines) == sorted(order.lines)
    return True
