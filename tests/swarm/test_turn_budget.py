"""A turn's budget (model calls and a deadline), the swarm's screen and fallback, and
text meant for the model that must never reach the caller."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from swarm import (
    AssistantMessage,
    Engine,
    ErrorOccurred,
    NavigationError,
    Rescued,
    RoutedCall,
    RoutedReply,
    ToolContext,
)
from swarm._tools import INTERNAL_FAILURE

from .helpers import NoArgs, Sequenced, tool_call

FALLBACK = "We are open nine to five. Would you like a member of staff?"


class Qty(BaseModel):
    quantity: int = 1


def build(outputs: list, **engine_options) -> tuple[Engine, Sequenced, list[str]]:
    """Two agents that can hand the caller to each other, as triage and sales do."""
    engine = Engine(completion_timeout=5, **engine_options)
    model = Sequenced(outputs)
    engine.add_completion("m", model)
    ran: list[str] = []

    async def to_b(ctx: ToolContext, _: NoArgs) -> str:
        await ctx.change_to_agent("b")
        return "now with b"

    async def to_a(ctx: ToolContext, _: NoArgs) -> str:
        await ctx.change_to_default_agent()
        return "now with a"

    async def add(ctx: ToolContext, params: Qty) -> None:
        ran.append(f"add {params.quantity}")
        await ctx.emit(f"Added {params.quantity}.")

    engine.add_tool("to_b", "Hand to b", NoArgs, to_b)
    engine.add_tool("to_a", "Hand to a", NoArgs, to_a)
    engine.add_tool("add", "Add", Qty, add)
    engine.add_agent("a", "m", "Agent a.", tools=["to_b"])
    engine.add_agent("b", "m", "Agent b.", tools=["to_a"])

    async def fallback(session, said: str) -> str:
        ran.append(f"fallback {said}")
        return FALLBACK

    engine.add_swarm("w", ["a", "b"], "a", fallback=fallback)
    return engine, model, ran


async def test_agents_that_hand_the_caller_back_and_forth_stop_at_the_call_budget() -> None:
    # Measured on the embedded model: a question for the other agent made the two hand
    # the caller back and forth 20 times, and the caller heard a placeholder after 51 s.
    ping_pong = [tool_call("to_b"), tool_call("to_a")] * 10
    engine, model, ran = build(ping_pong, max_model_calls=3)
    session = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        reply = await session.complete("when do you open")
        rescues = [e for e in events.drain() if isinstance(e, Rescued)]
    assert reply == FALLBACK
    assert len(model.seen) == 3
    assert ran == ["fallback when do you open"]
    assert (rescues[-1].reason, rescues[-1].strategy) == ("turn_budget", "fallback")


async def test_without_a_budget_the_old_recursion_cap_still_ends_the_turn() -> None:
    engine, model, _ = build([tool_call("to_b"), tool_call("to_a")] * 10, max_nested=5)
    reply = await engine.session("c", "w").complete("when do you open")
    # Five steps, each with its one retry at most: the turn still ends, in code's words.
    assert reply == FALLBACK and 5 <= len(model.seen) <= 10


async def test_a_model_slower_than_the_deadline_gets_code_words_in_time() -> None:
    async def slow() -> AssistantMessage:
        await asyncio.sleep(30)
        return AssistantMessage(content="too late")

    engine, model, ran = build([slow], turn_deadline=0.3)
    started = time.monotonic()
    reply = await engine.session("c", "w").complete("hello")
    took = time.monotonic() - started
    assert reply == FALLBACK and ran == ["fallback hello"]
    assert took < 5  # well under the 5 s completion timeout: the deadline ended it


async def test_each_new_turn_gets_a_whole_budget() -> None:
    outputs = [tool_call("to_b"), tool_call("to_a"), tool_call("to_b")]
    engine, model, _ = build(
        [*outputs, AssistantMessage(content="Hello again.")], max_model_calls=3
    )
    session = engine.session("c", "w")
    assert await session.complete("first") == FALLBACK
    assert await session.complete("second") == "Hello again."


async def screened_engine(verdict) -> tuple[Engine, Sequenced, list[str]]:
    engine = Engine(completion_timeout=5)
    model = Sequenced([AssistantMessage(content="model words")])
    engine.add_completion("m", model)
    ran: list[str] = []

    async def add(ctx: ToolContext, params: Qty) -> None:
        ran.append(f"add {params.quantity}")
        await ctx.emit(f"Added {params.quantity}.")

    engine.add_tool("add", "Add", Qty, add)
    engine.add_agent(
        "a", "m", "Agent a.", tools=["add"], router=lambda said: RoutedReply("router words")
    )

    async def screen(session, said: str):
        ran.append(f"screen {said}")
        return verdict

    engine.add_swarm("w", ["a"], "a", screen=screen)
    return engine, model, ran


async def test_the_screen_answers_before_the_router_and_the_model() -> None:
    engine, model, ran = await screened_engine(RoutedReply("Please call 911 now."))
    assert await engine.session("c", "w").complete("chest pain") == "Please call 911 now."
    assert model.seen == [] and ran == ["screen chest pain"]


async def test_a_screened_tool_call_runs_as_code() -> None:
    engine, model, ran = await screened_engine(RoutedCall("add", {"quantity": 3}))
    assert await engine.session("c", "w").complete("three") == "Added 3."
    assert ran == ["screen three", "add 3"] and model.seen == []


async def test_a_screened_tool_the_agent_lacks_is_ignored() -> None:
    engine, model, ran = await screened_engine(RoutedCall("transfer", {}))
    assert await engine.session("c", "w").complete("hi") == "router words"
    assert ran == ["screen hi"]


async def with_fallback(engine: Engine, said: str) -> tuple[str, list[str]]:
    """Agent "a" as swarm "w", with FALLBACK as code's words: the reply to `said`, and
    the reasons of the turn's rescues."""

    async def fallback(session, said: str) -> str:
        return FALLBACK

    engine.add_swarm("w", ["a"], "a", fallback=fallback)
    with engine.bus.subscribe() as events:
        reply = await engine.session("c", "w").complete(said)
        return reply, [e.reason for e in events.drain() if isinstance(e, Rescued)]


@pytest.mark.parametrize(
    "echo",
    [
        "You called a tool that does not exist. Use only the tools you were given.",
        "Sure! Your tool arguments were invalid again, follow the tool's schema.",
        "If a tool fits the caller's last words, reply with exactly one tool call",
    ],
)
async def test_words_meant_for_the_model_are_never_spoken(echo: str) -> None:
    engine = Engine(completion_timeout=5)
    model = Sequenced(
        [tool_call("nope"), AssistantMessage(content=echo), AssistantMessage(content=echo)]
    )
    engine.add_completion("m", model)
    engine.add_tool("add", "Add", Qty, lambda ctx, p: asyncio.sleep(0))
    engine.add_agent(
        "a",
        "m",
        "Agent a.",
        tools=["add"],
        reminder="If a tool fits the caller's last words, reply with exactly one tool call JSON.",
    )

    reply, reasons = await with_fallback(engine, "hi")
    assert reply == FALLBACK
    assert "internal_leak" in reasons
    assert "tool" not in reply.lower()


@pytest.mark.parametrize(
    "failure",
    [
        RuntimeError("database is locked"),
        NavigationError("agents cannot be changed from inside a thread between agents"),
    ],
)
async def test_the_engines_note_on_a_failed_tool_is_never_spoken(failure: Exception) -> None:
    """A model that reads its tool's output aloud (as the scripted provider does) said
    "The tool failed because of an internal error. Apologise to the caller..."."""
    engine = Engine(completion_timeout=5)
    parrot = INTERNAL_FAILURE if isinstance(failure, RuntimeError) else str(failure)
    model = Sequenced(
        [tool_call("look"), AssistantMessage(content=parrot), AssistantMessage(content=parrot)]
    )
    engine.add_completion("m", model)

    async def look(ctx: ToolContext, _: NoArgs) -> str:
        raise failure

    engine.add_tool("look", "Look something up", NoArgs, look)
    engine.add_agent("a", "m", "Agent a.", tools=["look"])

    reply, reasons = await with_fallback(engine, "where is my order?")
    assert reply == FALLBACK
    assert "internal_leak" in reasons
    # The note stays in the model's history: a later turn may read it aloud too.
    model.outputs += [AssistantMessage(content=parrot), AssistantMessage(content=parrot)]
    assert await engine.session("c", "w").complete("hello?") == FALLBACK


@pytest.mark.parametrize("where", ["screen", "fallback too"])
async def test_code_that_fails_mid_turn_gets_the_fallback_not_a_dropped_caller(where) -> None:
    """A database away under the screen raised out of the turn, and took the caller's
    socket with it (measured: PostgreSQL restarted mid-call)."""
    engine = Engine(completion_timeout=5)
    engine.add_completion("m", Sequenced([AssistantMessage(content="model words")]))
    engine.add_agent("a", "m", "Agent a.", placeholder="Sorry, one moment.")

    async def screen(session, said: str):
        raise ConnectionError("the database went away")

    async def fallback(session, said: str) -> str:
        if where == "fallback too":
            raise ConnectionError("still away")
        return FALLBACK

    engine.add_swarm("w", ["a"], "a", screen=screen, fallback=fallback)
    session = engine.session("c", "w")
    with engine.bus.subscribe() as events:
        reply = await session.complete("are you open?")
        seen = events.drain()
    assert reply == (FALLBACK if where == "screen" else "Sorry, one moment.")
    assert "database" not in reply
    assert [(e.reason, e.strategy) for e in seen if isinstance(e, Rescued)] == [
        ("turn_error", "fallback")
    ]
    assert [e.where for e in seen if isinstance(e, ErrorOccurred)] == ["turn"]
    # The session goes on: the next turn is answered the same way, not dropped.
    assert await session.complete("hello again") == reply


async def test_words_read_ahead_reach_the_swarms_hook_and_nothing_is_kept() -> None:
    """`anticipate` lets a business start slow readings before a turn is sure to come;
    it commits nothing, a failing hook is only logged, and a closed session skips it."""
    engine = Engine(completion_timeout=5)
    engine.add_completion("m", Sequenced([AssistantMessage(content="model words")]))
    engine.add_agent("a", "m", "Agent a.")
    read: list[str] = []

    async def anticipate(session, said: str) -> None:
        read.append(said)
        if said == "fail":
            raise ConnectionError("the database went away")

    engine.add_swarm("w", ["a"], "a", anticipate=anticipate)
    session = engine.session("c", "w")
    await session.anticipate("do you have ibuprofen")
    await session.anticipate("fail")
    assert read == ["do you have ibuprofen", "fail"]
    assert await session.get_raw_history() == []
    assert await session.complete("do you have ibuprofen") == "model words"
    await session.dispose(final=True)
    await session.anticipate("after the call")
    assert read == ["do you have ibuprofen", "fail"]
