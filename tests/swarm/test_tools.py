from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from swarm import (
    Engine,
    ErrorOccurred,
    RescueContext,
    Role,
    Rule,
    ScriptedBackend,
    ToolContext,
    ToolOutput,
)
from swarm.errors import ToolError

from .helpers import NoArgs, Query


class Price(BaseModel):
    sku: str
    cents: int


def build() -> Engine:
    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend(
            [
                Rule("crash", tool="crash"),
                Rule("refuse", tool="refuse"),
                Rule("price", tool="price"),
                Rule("secret", tool="secret"),
                Rule("internal error", reply="Sorry, that did not work.", on="tool"),
                Rule("out of stock", reply="That one is out of stock.", on="tool"),
                Rule(r'"cents": ?(\d+)', reply="It costs {1} cents.", on="tool"),
                Rule(".*", reply="ok"),
            ]
        ),
    )

    async def crash(ctx: ToolContext, _: NoArgs) -> str:
        raise KeyError("database row vanished")

    async def refuse(ctx: ToolContext, _: NoArgs) -> str:
        raise ToolError("out of stock")

    async def price(ctx: ToolContext, _: NoArgs) -> Price:
        return Price(sku="A1", cents=320)

    async def secret(ctx: ToolContext, _: Query) -> str:
        return "hidden"

    engine.add_tool("crash", "Crash", NoArgs, crash)
    engine.add_tool("refuse", "Refuse", NoArgs, refuse)
    engine.add_tool("price", "Price", NoArgs, price)
    engine.add_tool(
        "secret", "Only for VIPs", Query, secret, is_available=lambda s, a: s.client_id == "vip"
    )
    engine.add_agent("a", "s", "A.", tools=["crash", "refuse", "price", "secret"])
    engine.add_swarm("w", ["a"], "a")
    return engine


def offered_tools(engine: Engine) -> list[frozenset[str]]:
    """The tools offered to the scripted backend "s", one set per model call, as they come."""
    seen: list[frozenset[str]] = []
    backend = engine.registry.completions["s"]
    original = backend.answer

    def spy(args):
        seen.append(args.tool_names)
        return original(args)

    backend.answer = spy
    return seen


async def test_an_exception_in_a_tool_never_kills_the_session() -> None:
    engine = build()
    s = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        assert await s.complete("crash please") == "Sorry, that did not work."
        got = events.drain()
    error = next(e for e in got if isinstance(e, ErrorOccurred))
    assert error.where == "tool:crash" and "vanished" in error.error
    output = next(e for e in got if isinstance(e, ToolOutput))
    assert output.failed and "vanished" not in output.output  # internals never reach the model
    assert await s.complete("hello") == "ok"


async def test_a_crashing_tool_does_not_disturb_other_sessions() -> None:
    engine = build()
    sessions = [engine.session(f"c{i}", "w") for i in range(10)]
    replies = await asyncio.gather(
        *(s.complete("crash" if i % 2 else "price") for i, s in enumerate(sessions))
    )
    assert replies == [
        "It costs 320 cents." if i % 2 == 0 else "Sorry, that did not work." for i in range(10)
    ]


async def test_tool_error_is_the_output_the_model_hears() -> None:
    engine = build()
    s = engine.session("c", "w")
    assert await s.complete("refuse") == "That one is out of stock."
    tool = next(m for m in await s.get_raw_history() if m.role is Role.TOOL)
    assert tool.content == "out of stock"


async def test_returned_models_are_serialised_as_json() -> None:
    engine = build()
    s = engine.session("c", "w")
    assert await s.complete("price") == "It costs 320 cents."


@pytest.mark.parametrize(("client", "offered"), [("vip", True), ("anyone", False)])
async def test_is_available_hides_a_tool(client: str, offered: bool) -> None:
    engine = build()
    seen = offered_tools(engine)
    await engine.session(client, "w").complete("hello")
    assert ("secret" in seen[0]) is offered


async def test_calling_an_unavailable_tool_is_an_unknown_tool() -> None:
    engine = build()
    s = engine.session("anyone", "w")
    assert await s.complete("secret") != "hidden"
    assert s.rescue_count >= 1


async def test_tools_sharing_a_check_ask_it_once_a_step_and_see_what_a_tool_changed() -> None:
    """A check may read a database: tools that share one ask it once per model call,
    and the next call asks again, after a tool may have changed the answer."""
    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend(
            [
                Rule("open", tool="open_order"),
                Rule(".*", reply="done", on="tool"),
                Rule(".*", reply="?"),
            ]
        ),
    )
    state = {"open": False, "asked": 0}

    async def order_open(session: object, agent: str) -> bool:
        state["asked"] += 1
        return state["open"]

    async def open_order(ctx: ToolContext, _: NoArgs) -> str:
        state["open"] = True
        return "opened"

    async def change(ctx: ToolContext, _: NoArgs) -> str:
        return "changed"

    engine.add_tool("open_order", "Open", NoArgs, open_order)
    engine.add_tool("change", "Change", NoArgs, change, is_available=order_open)
    engine.add_tool("drop", "Drop", NoArgs, change, is_available=order_open)
    engine.add_agent("a", "s", "A.", tools=["open_order", "change", "drop"])
    engine.add_swarm("w", ["a"], "a")
    seen = offered_tools(engine)
    assert await engine.session("c", "w").complete("open an order") == "done"
    assert len(seen) == 2 and state["asked"] == 2
    assert seen[0] == {"open_order"}
    assert seen[1] == {"open_order", "change", "drop"}


async def test_after_a_rescue_step_of_the_agencys_own_the_tools_are_read_again() -> None:
    """A rescue step has the session and may change what a check reads: the retry that
    follows it is offered the tools as they are now. The check here cannot be hashed,
    as any callable may be a check."""
    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend([Rule("change it", tool="change"), Rule(".*", reply="changed", on="tool")]),
    )
    state = {"open": False}

    class OrderOpen:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, session: object, agent: str) -> bool:
            return state["open"]

    async def open_order(rescue: RescueContext) -> None:
        state["open"] = True

    async def change(ctx: ToolContext, _: NoArgs) -> str:
        return "done"

    engine.add_tool("change", "Change", NoArgs, change, is_available=OrderOpen())
    engine.add_agent("a", "s", "A.", tools=["change"], rescue=[open_order, "recomplete"])
    engine.add_swarm("w", ["a"], "a")
    seen = offered_tools(engine)
    assert await engine.session("c", "w").complete("change it") == "changed"
    assert seen[0] == frozenset() and seen[1] == {"change"}
