"""Every verb of the functional façade, on a fresh default engine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import BaseModel

import swarm
from swarm import Engine, Role, Rule, ScriptedBackend, ToolContext

from .helpers import NoArgs


class Note(BaseModel):
    text: str


@pytest.fixture
def engine() -> Iterator[Engine]:
    previous = swarm.get_engine()
    engine = swarm.set_engine(Engine())
    swarm.add_completion(
        "scripted",
        ScriptedBackend(
            [
                Rule(r"^note (?P<t>.+)", tool="note", arguments={"text": "{t}"}),
                Rule(r"^silent", tool="silent"),
                Rule(r"^two calls", tool="stopper"),
                Rule(r"noted (.+)", reply="I noted {1}.", on="tool"),
                Rule(r"greet", reply="Welcome, caller.", agent="triage"),
                Rule(r".*", reply="triage heard: {input}", agent="triage"),
                Rule(r".*", reply="sales heard: {input}", agent="sales"),
            ]
        ),
    )

    async def note(ctx: ToolContext, params: Note) -> str:
        await ctx.commit_system_message(f"remember {params.text}")
        return f"noted {params.text}"

    async def silent(ctx: ToolContext, params: NoArgs) -> None:
        await swarm.commit_tool_output(ctx.client_id, ctx.call.id, "done quietly", ctx.agent_name)
        await swarm.emit(ctx.client_id, "Emitted without the model.")

    async def stopper(ctx: ToolContext, params: NoArgs) -> str:
        await swarm.commit_stop_tools(ctx.client_id)
        await swarm.cancel_output(ctx.client_id)
        return "stopped"

    swarm.add_tool("note", "Take a note", Note, note)
    swarm.add_tool("silent", "Act quietly", NoArgs, silent)
    swarm.add_tool("stopper", "Stop", NoArgs, stopper)
    swarm.add_agent("triage", "scripted", "Triage.", tools=["note", "silent", "stopper"])
    swarm.add_agent("sales", "scripted", "Sales.")
    swarm.add_swarm("root", ["triage", "sales"], "triage")
    swarm.validate()
    yield engine
    swarm.set_engine(previous)


async def test_complete_and_history_reads(engine: Engine) -> None:
    s = swarm.session("c1", "root")
    assert await swarm.complete("c1", "hello") == "triage heard: hello"
    assert await swarm.get_last_user_message("c1") == "hello"
    assert await swarm.get_last_assistant_message("c1") == "triage heard: hello"
    assert [m.content for m in await swarm.get_user_history("c1")] == ["hello"]
    assert [m.content for m in await swarm.get_assistant_history("c1")] == ["triage heard: hello"]
    assert await swarm.get_agent_name("c1") == "triage"
    assert s is swarm.session("c1", "root")


async def test_tool_commits_system_message_and_its_return_value_is_the_output(
    engine: Engine,
) -> None:
    swarm.session("c1", "root")
    assert await swarm.complete("c1", "note milk") == "I noted milk."
    assert await swarm.get_last_system_message("c1") == "remember milk"
    raw = await swarm.get_raw_history("c1")
    assert [m.role for m in raw] == [
        Role.USER,
        Role.ASSISTANT,
        Role.SYSTEM,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert raw[3].content == "noted milk" and raw[3].tool_name == "note"
    # The note is private to triage; sales never sees it.
    sales_view = await swarm.get_agent_history("c1", "sales")
    assert all(m.role in (Role.USER, Role.ASSISTANT) for m in sales_view)


async def test_commit_tool_output_and_emit_from_a_tool(engine: Engine) -> None:
    swarm.session("c1", "root")
    assert await swarm.complete("c1", "silent") == "Emitted without the model."
    tool = [m for m in await swarm.get_raw_history("c1") if m.role is Role.TOOL]
    assert [m.content for m in tool] == ["done quietly"]


async def test_stop_tools_and_cancel_output(engine: Engine) -> None:
    swarm.session("c1", "root")
    assert await swarm.complete("c1", "two calls") == ""
    assert [m.content for m in await swarm.get_raw_history("c1") if m.role is Role.TOOL] == [
        "stopped"
    ]


async def test_execute_makes_the_agent_speak_first_without_a_user_message(engine: Engine) -> None:
    swarm.session("c1", "root")
    assert await swarm.execute("c1", "greet the caller") == "Welcome, caller."
    assert await swarm.get_user_history("c1") == []
    assert await swarm.get_last_user_message("c1") is None


async def test_emit_and_commits_from_outside_a_turn(engine: Engine) -> None:
    swarm.session("c1", "root")
    assert await swarm.emit("c1", "An operator says hi.") == "An operator says hi."
    await swarm.commit_user_message("c1", "first burst")
    await swarm.commit_system_message("c1", "be brief")
    await swarm.commit_tool_output("c1", "orphan", "nobody called me")
    history = await swarm.get_raw_history("c1")
    assert [m.content for m in history] == [
        "An operator says hi.",
        "first burst",
        "be brief",
        "nobody called me",
    ]
    # The orphan output is in the log but no agent is shown it.
    assert "nobody called me" not in [m.content for m in await swarm.get_agent_history("c1")]


async def test_a_person_speaking_for_the_agents_is_named_and_seen_by_all(engine: Engine) -> None:
    s = swarm.session("c1", "root")
    assert await s.emit("Sam here, how can I help?", author="operator") == (
        "Sam here, how can I help?"
    )
    [said] = await swarm.get_raw_history("c1")
    assert (said.role, said.agent) == (Role.ASSISTANT, "operator")
    for agent in ("triage", "sales"):
        view = await swarm.get_agent_history("c1", agent)
        assert [m.content for m in view] == ["Sam here, how can I help?"]
    # The agents answer as before, and their replies carry their own names.
    await swarm.complete("c1", "hello")
    assert (await swarm.get_raw_history("c1"))[-1].agent == "triage"


async def test_commit_flush_hides_history(engine: Engine) -> None:
    swarm.session("c1", "root")
    await swarm.complete("c1", "one")
    await swarm.commit_flush("c1")
    assert await swarm.get_agent_history("c1") == []
    assert len(await swarm.get_raw_history("c1")) == 3  # nothing is deleted


async def test_navigation_verbs(engine: Engine) -> None:
    swarm.session("c1", "root")
    await swarm.change_to_agent("c1", "sales")
    assert await swarm.get_agent_name("c1") == "sales"
    assert await swarm.complete("c1", "hi") == "sales heard: hi"
    await swarm.change_to_prev_agent("c1")
    assert await swarm.get_agent_name("c1") == "triage"
    await swarm.change_to_agent("c1", "sales")
    await swarm.change_to_default_agent("c1")
    assert await swarm.get_agent_name("c1") == "triage"


async def test_verbs_naming_an_inactive_agent_are_ignored(engine: Engine) -> None:
    swarm.session("c1", "root")
    await swarm.commit_system_message("c1", "stale", agent_name="sales")
    assert await swarm.emit("c1", "stale", agent_name="sales") == ""
    assert await swarm.get_raw_history("c1") == []


async def test_unknown_client_is_a_clear_error(engine: Engine) -> None:
    with pytest.raises(LookupError, match="no live session"):
        await swarm.complete("nobody", "hi")


async def test_dispose_closes_and_the_next_session_resumes(engine: Engine) -> None:
    s = swarm.session("c1", "root")
    await s.complete("remember me")
    await s.dispose()
    assert s.state is swarm.SessionState.CLOSED
    with pytest.raises(swarm.errors.SessionClosed):
        await s.complete("again")
    again = swarm.session("c1", "root")
    assert again is not s
    assert await again.get_last_user_message() == "remember me"
