"""Each kind of invalid model output, and each rescue strategy."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from swarm import AssistantMessage, Engine, Rescued, Role, ToolContext
from swarm.errors import CompletionError

from .helpers import Sequenced, tool_call

PLACEHOLDER = "Sorry, I missed that. Could you say it again?"


class Qty(BaseModel):
    quantity: int = Field(ge=1, le=10)


def build(outputs: list, **agent_options) -> tuple[Engine, Sequenced]:
    engine = Engine(completion_timeout=5)
    model = Sequenced(outputs)
    engine.add_completion("m", model)

    async def add(ctx: ToolContext, params: Qty) -> str:
        return f"added {params.quantity}"

    engine.add_tool("add_to_order", "Add", Qty, add)
    agent_options.setdefault("money_from_tools", True)
    engine.add_agent("a", "m", "Agent.", tools=["add_to_order"], **agent_options)
    engine.add_swarm("w", ["a"], "a")
    return engine, model


def text(content: str) -> AssistantMessage:
    return AssistantMessage(content=content)


BAD_OUTPUTS = {
    "unknown_tool": tool_call("delete_everything"),
    "empty_output": text("   "),
    "json_leak": text('Your order: {"sku": "A1", "qty": 2}'),
    "xml_leak": text("<response>Your order is ready</response>"),
    "tool_name_leak": text("I will now call add_to_order for you."),
    "ungrounded_amount": text("Two packs would be 5 dollars 98."),
    "completion_error": CompletionError("provider down", completion="m"),
    "crash": RuntimeError("a backend bug that was not translated"),
}


@pytest.mark.parametrize("case", list(BAD_OUTPUTS))
async def test_recomplete_gives_the_caller_a_valid_retry(case: str) -> None:
    engine, model = build([BAD_OUTPUTS[case], text("How can I help?")])
    s = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        assert await s.complete("hi") == "How can I help?"
        rescues = [e for e in events.drain() if isinstance(e, Rescued)]
    expected = "completion_error" if case == "crash" else case
    assert [(e.reason, e.strategy) for e in rescues] == [(expected, "recomplete")]
    assert s.rescue_count == 1 and engine.rescue_counts[expected] == 1
    # The retry was told what went wrong, in a system message at the end.
    assert model.seen[1].messages[-1]["role"] == "system"
    # Only the valid reply is in the history.
    assert [m.content for m in await s.get_assistant_history()] == ["How can I help?"]


@pytest.mark.parametrize("case", list(BAD_OUTPUTS))
async def test_flush_after_a_failed_retry_says_the_placeholder_and_hides_history(case: str) -> None:
    engine, _ = build([text("earlier answer"), BAD_OUTPUTS[case], BAD_OUTPUTS[case], text("fresh")])
    s = engine.session("c", "w")
    await s.complete("first")
    assert await s.complete("second") == PLACEHOLDER
    raw = await s.get_raw_history()
    assert Role.RESCUE in [m.role for m in raw]
    # After the flush the agent sees only the placeholder, not the earlier turns.
    assert [m.content for m in await s.get_agent_history()] == [PLACEHOLDER]
    assert await s.complete("third") == "fresh"


async def test_bad_arguments_go_back_to_the_model_once_then_are_rescued() -> None:
    engine, model = build([tool_call("add_to_order", quantity=100), text("Sorry, at most ten.")])
    s = engine.session("c", "w")
    assert await s.complete("100 boxes") == "Sorry, at most ten."
    tool_outputs = [m for m in await s.get_raw_history() if m.role is Role.TOOL]
    assert "invalid arguments for add_to_order" in tool_outputs[0].content
    assert "less than or equal to 10" in tool_outputs[0].content

    # Failing again in the same turn is no longer correctable: it is rescued.
    engine, model = build(
        [
            tool_call("add_to_order", quantity=100),
            tool_call("add_to_order", quantity=0),
            tool_call("add_to_order", quantity=2),
            text("Added two."),
        ]
    )
    s = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        assert await s.complete("100 boxes") == "Added two."
        reasons = [e.reason for e in events.drain() if isinstance(e, Rescued)]
    assert reasons == ["invalid_arguments"]


async def test_unknown_arguments_are_dropped_before_validation() -> None:
    engine, _ = build([tool_call("add_to_order", quantity=2, free=True), text("Done.")])
    s = engine.session("c", "w")
    assert await s.complete("two") == "Done."
    outputs = [m.content for m in await s.get_raw_history() if m.role is Role.TOOL]
    assert outputs == ["added 2"]


async def test_words_around_a_valid_call_are_kept_when_clean() -> None:
    engine, _ = build(
        [text('One moment. {"name": "add_to_order", "arguments": {"quantity": 3}}'), text("Added.")]
    )
    s = engine.session("c", "w")
    assert await s.complete("three") == "One moment. Added."


async def test_timeout_is_a_completion_error() -> None:
    import asyncio

    never = asyncio.Event()

    async def hang() -> AssistantMessage:
        await never.wait()
        return text("never")

    engine, _ = build([hang, text("Back again.")])
    engine.completion_timeout = 1e-3
    s = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        assert await s.complete("hi") == "Back again."
        rescue = next(e for e in events.drain() if isinstance(e, Rescued))
    assert rescue.reason == "completion_error" and "no answer" in rescue.detail


async def test_custom_rescue_callable() -> None:
    seen = []

    async def apologise(ctx) -> str:
        seen.append(ctx.problem.value)
        return "Let me get someone to help you."

    engine, _ = build([text("")], rescue=[apologise])
    s = engine.session("c", "w")
    assert await s.complete("hi") == "Let me get someone to help you."
    assert seen == ["empty_output"]


async def test_custom_placeholder_when_every_strategy_fails() -> None:
    engine, _ = build([text(""), text("")], rescue=["recomplete"], placeholder="Pardon?")
    s = engine.session("c", "w")
    assert await s.complete("hi") == "Pardon?"


async def test_scripted_provider_leaking_markup_is_flushed_after_its_retry() -> None:
    """The scripted provider answers the retry the same way, so recomplete fails and flush speaks."""
    from swarm import Rule, ScriptedBackend

    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend(
            [Rule("order", reply="<order><total>5</total></order>"), Rule(".*", reply="Hi.")]
        ),
    )
    engine.add_agent("a", "s", "Agent.")
    engine.add_swarm("w", ["a"], "a")
    s = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        assert await s.complete("my order") == PLACEHOLDER
        strategies = [(e.reason, e.strategy) for e in events.drain() if isinstance(e, Rescued)]
    assert strategies == [("xml_leak", "recomplete"), ("xml_leak", "flush")]
    assert engine.registry.completions["s"].calls == 2
    assert await s.complete("hello") == "Hi."


def priced(outputs: list) -> Engine:
    engine = Engine(completion_timeout=5)
    engine.add_completion("m", Sequenced(outputs))

    async def look_up(ctx: ToolContext, params: Qty) -> str:
        return '{"name": "Plasters", "pack": 24, "price_cents": 299}'

    engine.add_tool("look_up", "Look up", Qty, look_up)
    engine.add_agent("a", "m", "Agent.", tools=["look_up"], money_from_tools=True)
    engine.add_swarm("w", ["a"], "a")
    return engine


async def test_a_price_a_tool_gave_may_be_said_and_no_other_number_as_one() -> None:
    said = "Plasters are 2 dollars 99."
    engine = priced([tool_call("look_up", quantity=1), text(said)])
    assert await engine.session("c", "w").complete("plasters?") == said
    # The pack's 24 is no price: "24 dollars" is rescued, then the retry is spoken.
    engine = priced([tool_call("look_up", quantity=1), text("That's 24 dollars."), text(said)])
    assert await engine.session("c", "w").complete("plasters?") == said


async def test_without_the_option_an_agent_may_state_any_amount() -> None:
    engine, _ = build([text("Two packs would be 5 dollars 98.")], money_from_tools=False)
    assert await engine.session("c", "w").complete("two please") == (
        "Two packs would be 5 dollars 98."
    )
