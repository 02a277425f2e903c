"""An agent's router: code routes the obvious cases before any model is asked."""

from __future__ import annotations

from swarm import Engine, FunctionBackend, RoutedCall, RoutedReply, ToolCalled, ToolContext

from .helpers import NoArgs


def build(engine: Engine, router) -> list[str]:
    asked: list[str] = []  # which agent the model was asked for, in order

    async def complete(args):
        from swarm import AssistantMessage

        asked.append(args.agent_name)
        return AssistantMessage(content=f"{args.agent_name} speaking")

    async def to_sales(ctx: ToolContext, _: NoArgs) -> str:
        await ctx.change_to_agent("sales")
        return "You are now with sales."

    engine.add_completion("m", FunctionBackend(complete))
    engine.add_tool("navigate_to_sales", "Go to sales", NoArgs, to_sales)
    engine.add_agent("triage", "m", "Triage.", tools=["navigate_to_sales"], router=router)
    engine.add_agent("sales", "m", "Sales.")
    engine.add_swarm("root", ["triage", "sales"], "triage")
    return asked


def shopping(said: str) -> RoutedCall | None:
    return RoutedCall("navigate_to_sales") if "buy" in said else None


async def test_a_routed_turn_skips_the_routing_model_call() -> None:
    engine = Engine()
    asked = build(engine, shopping)
    session = engine.session("c", "root")
    with engine.bus.subscribe() as events:
        assert await session.complete("I want to buy aspirin") == "sales speaking"
        called = [e.tool for e in events.drain() if isinstance(e, ToolCalled)]
    assert asked == ["sales"]  # triage's model was never asked
    assert called == ["navigate_to_sales"]
    # The routed call is in the history like a model's, so the log reads the same.
    history = await session.get_raw_history()
    assert any(m.tool_calls and m.tool_calls[0].name == "navigate_to_sales" for m in history)


async def test_words_the_router_declines_go_to_the_model() -> None:
    engine = Engine()
    asked = build(engine, shopping)
    session = engine.session("c", "root")
    assert await session.complete("what are your hours") == "triage speaking"
    assert asked == ["triage"]


async def test_a_routed_call_is_validated_like_a_models() -> None:
    engine = Engine()
    asked = build(engine, lambda said: RoutedCall("no_such_tool"))
    session = engine.session("c", "root")
    # Unknown tool: the normal rescue runs (here, the model is asked again) and the
    # session lives on.
    assert await session.complete("I want to buy aspirin") == "triage speaking"
    assert asked == ["triage"]


async def test_instructions_from_code_are_never_routed() -> None:
    engine = Engine()
    asked = build(engine, shopping)
    session = engine.session("c", "root")
    await session.execute("the caller wants to buy something")
    assert asked == ["triage"]


async def test_a_router_may_answer_with_prepared_words_and_no_model() -> None:
    engine = Engine()

    def declines(said: str) -> RoutedReply | RoutedCall | None:
        return RoutedReply("I can only help with the pharmacy.") if "weather" in said else None

    asked = build(engine, declines)
    session = engine.session("c", "root")
    assert await session.complete("what's the weather?") == "I can only help with the pharmacy."
    assert asked == []  # no model call at all
    [_, said] = await session.get_raw_history()
    assert (said.role.value, said.agent) == ("assistant", "triage")
    assert await session.complete("hello") == "triage speaking"  # otherwise, the model
