from __future__ import annotations

import pytest

from swarm import AgentChanged, Engine, Rule, ScriptedBackend, ToolContext
from swarm.errors import NavigationError

from .helpers import NoArgs, Sequenced, tool_call


def build(engine: Engine) -> None:
    async def to_sales(ctx: ToolContext, _: NoArgs) -> str:
        await ctx.change_to_agent("sales")
        return "You are now with sales."

    async def to_triage(ctx: ToolContext, _: NoArgs) -> str:
        await ctx.change_to_prev_agent()
        return "Back to triage."

    engine.add_tool("navigate_to_sales", "Go to sales", NoArgs, to_sales)
    engine.add_tool("navigate_to_triage", "Go back", NoArgs, to_triage)
    engine.add_agent("triage", "s", "Triage.", tools=["navigate_to_sales"])
    engine.add_agent("sales", "s", "Sales.", tools=["navigate_to_triage"])
    engine.add_agent("billing", "s", "Billing.")
    engine.add_swarm("root", ["triage", "sales", "billing"], "triage")


async def test_tool_navigation_then_the_new_agent_answers_in_the_same_turn() -> None:
    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend(
            [
                Rule("buy", tool="navigate_to_sales", agent="triage"),
                Rule("back", tool="navigate_to_triage", agent="sales"),
                Rule(".*", reply="Sales here: {input}", agent="sales"),
                Rule(".*", reply="Triage here: {input}", agent="triage"),
            ]
        ),
    )
    build(engine)
    s = engine.session("c", "root")
    with engine.bus.subscribe() as events:
        assert await s.complete("I want to buy") == "Sales here: I want to buy"
        changed = [e for e in events.drain() if isinstance(e, AgentChanged)]
    assert [(e.previous, e.current) for e in changed] == [("triage", "sales")]
    assert await s.get_navigation_stack() == ("triage",)
    assert await s.complete("take me back") == "Triage here: take me back"
    assert await s.get_navigation_stack() == ()


async def test_the_same_agent_cannot_be_entered_twice_in_one_turn() -> None:
    # sales immediately tries to go back to triage, who already spoke this turn.
    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend(
            [
                Rule("buy", tool="navigate_to_sales", agent="triage"),
                Rule(".*", tool="navigate_to_triage", agent="sales", on="user"),
                Rule("already spoke", reply="Let me help you here then.", agent="sales", on="tool"),
            ]
        ),
    )
    build(engine)
    s = engine.session("c", "root")
    assert await s.complete("buy") == "Let me help you here then."
    assert await s.get_agent_name() == "sales"


async def test_prev_with_empty_stack_goes_to_default_and_unknown_agent_is_refused() -> None:
    engine = Engine()
    engine.add_completion("s", ScriptedBackend([Rule(".*", reply="ok")]))
    build(engine)
    s = engine.session("c", "root")
    await s.change_to_agent("sales")
    await s.change_to_agent("billing")
    assert await s.get_navigation_stack() == ("triage", "sales")
    await s.change_to_prev_agent()
    assert await s.get_agent_name() == "sales"
    await s.change_to_prev_agent()
    await s.change_to_prev_agent()
    assert await s.get_agent_name() == "triage"
    with pytest.raises(NavigationError, match="no agent called"):
        await s.change_to_agent("ghost")


async def test_nested_model_calls_are_capped_and_the_caller_gets_a_placeholder() -> None:
    engine = Engine(max_nested=20)
    # A model that calls a tool forever; the tool's output makes it call again.
    forever = Sequenced([tool_call("again") for _ in range(100)])
    engine.add_completion("loop", forever)

    async def again(ctx: ToolContext, _: NoArgs) -> str:
        return "call me again"

    engine.add_tool("again", "Loop", NoArgs, again)
    engine.add_agent("a", "loop", "Loop.", tools=["again"])
    engine.add_swarm("w", ["a"], "a")
    s = engine.session("c", "w")
    reply = await s.complete("go")
    assert reply == engine.registry.agents["a"].placeholder
    assert len(forever.seen) == 20
    assert engine.rescue_counts["recursion_limit"] == 1
    # The session survives and answers the next turn.
    forever.outputs[:] = []
    assert await s.complete("hello") == "(no more scripted outputs)"


async def test_execute_inside_a_tool_counts_towards_the_cap() -> None:
    engine = Engine(max_nested=5)

    async def recurse(ctx: ToolContext, _: NoArgs) -> None:
        await ctx.execute("do it again")

    engine.add_tool("recurse", "Recurse", NoArgs, recurse)
    engine.add_completion("s", ScriptedBackend([Rule(".*", tool="recurse")]))
    engine.add_agent("a", "s", "A.", tools=["recurse"])
    engine.add_swarm("w", ["a"], "a")
    s = engine.session("c", "w")
    assert await s.complete("go") == engine.registry.agents["a"].placeholder
    assert engine.registry.completions["s"].calls == 5
