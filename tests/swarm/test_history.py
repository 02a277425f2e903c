from swarm import Message, Mode, Role, ToolCall
from swarm._history import agent_view, drop_orphan_tool_messages, user_messages


def msg(role: Role, content: str, agent: str, **kw) -> Message:
    return Message(role=role, content=content, agent=agent, **kw)


CALL = ToolCall(id="c1", name="search", arguments={"query": "x"})


def test_user_and_assistant_messages_are_shared_system_and_tools_are_scoped() -> None:
    log = [
        msg(Role.USER, "hi", "triage"),
        msg(Role.SYSTEM, "triage note", "triage"),
        msg(Role.ASSISTANT, "", "triage", tool_calls=(CALL,)),
        msg(Role.TOOL, "found", "triage", tool_call_id="c1", tool_name="search"),
        msg(Role.ASSISTANT, "hello from triage", "triage"),
        msg(Role.USER, "Say hello", "sales", mode=Mode.TOOL),
        msg(Role.ASSISTANT, "hello from sales", "sales"),
    ]
    sales = [(m.role, m.content) for m in agent_view(log, "sales", 25)]
    assert sales == [
        (Role.USER, "hi"),
        (Role.ASSISTANT, "hello from triage"),
        (Role.USER, "Say hello"),
        (Role.ASSISTANT, "hello from sales"),
    ]
    triage = [(m.role, m.content) for m in agent_view(log, "triage", 25)]
    assert (Role.SYSTEM, "triage note") in triage
    assert (Role.TOOL, "found") in triage
    assert (Role.USER, "Say hello") not in triage  # another agent's execute instruction


def test_other_agents_tool_calls_are_stripped_but_their_words_kept() -> None:
    log = [
        msg(Role.USER, "hi", "a"),
        msg(Role.ASSISTANT, "let me look", "a", tool_calls=(CALL,)),
        msg(Role.TOOL, "found", "a", tool_call_id="c1"),
    ]
    view = agent_view(log, "b", 25)
    assert [(m.content, m.tool_calls) for m in view] == [("hi", ()), ("let me look", ())]


def test_rotation_keeps_the_last_n_and_drops_a_cut_tool_exchange() -> None:
    log = [msg(Role.USER, f"u{i}", "a") for i in range(30)]
    view = agent_view(log, "a", 25)
    assert [m.content for m in view] == [f"u{i}" for i in range(5, 30)]

    cut = [
        msg(Role.ASSISTANT, "", "a", tool_calls=(CALL,)),
        msg(Role.TOOL, "found", "a", tool_call_id="c1"),
        msg(Role.ASSISTANT, "done", "a"),
    ]
    # A window of 2 starts at the tool output, whose call fell out: the output goes too.
    assert [m.content for m in agent_view(cut, "a", 2)] == ["done"]


def test_per_agent_window() -> None:
    log = [msg(Role.USER, f"u{i}", "a") for i in range(10)]
    assert len(agent_view(log, "a", 3)) == 3
    assert len(agent_view(log, "b", 7)) == 7


def test_orphans_are_dropped_both_ways() -> None:
    other = ToolCall(id="c2", name="x", arguments={})
    messages = [
        msg(Role.ASSISTANT, "", "a", tool_calls=(CALL, other)),
        msg(Role.TOOL, "found", "a", tool_call_id="c1"),
        msg(Role.TOOL, "stray", "a", tool_call_id="nope"),
    ]
    out = drop_orphan_tool_messages(messages)
    assert [c.id for c in out[0].tool_calls] == ["c1"]
    assert [m.content for m in out[1:]] == ["found"]


def test_flush_and_rescue_markers_hide_what_came_before_for_their_agent_only() -> None:
    log = [
        msg(Role.USER, "old", "a"),
        msg(Role.FLUSH, "", "a"),
        msg(Role.USER, "new", "a"),
        msg(Role.RESCUE, "", "b"),
        msg(Role.ASSISTANT, "after b's rescue", "b"),
    ]
    assert [m.content for m in agent_view(log, "a", 25)] == ["new", "after b's rescue"]
    assert [m.content for m in agent_view(log, "b", 25)] == ["after b's rescue"]


def test_user_history_excludes_execute_instructions() -> None:
    log = [msg(Role.USER, "real", "a"), msg(Role.USER, "instruction", "a", mode=Mode.TOOL)]
    assert [m.content for m in user_messages(log)] == ["real"]


def test_each_output_follows_its_call_before_any_words() -> None:
    """Two calls at once, the first of which spoke: its words were logged between the two
    outputs, and OpenAI's API refuses a history in that order."""
    second = ToolCall(id="c2", name="search", arguments={"query": "y"})
    log = [
        msg(Role.USER, "x and y?", "a"),
        msg(Role.ASSISTANT, "", "a", tool_calls=(CALL, second)),
        msg(Role.TOOL, "said", "a", tool_call_id="c1"),
        msg(Role.ASSISTANT, "We have x.", "a"),
        msg(Role.TOOL, "said too", "a", tool_call_id="c2"),
        msg(Role.ASSISTANT, "We have y.", "a"),
    ]
    view = agent_view(log, "a", 25)
    assert [(m.role, m.content) for m in view] == [
        (Role.USER, "x and y?"),
        (Role.ASSISTANT, ""),
        (Role.TOOL, "said"),
        (Role.TOOL, "said too"),
        (Role.ASSISTANT, "We have x."),
        (Role.ASSISTANT, "We have y."),
    ]


def test_an_id_used_again_takes_the_output_after_its_own_call() -> None:
    """Code's call ids start again at 1 when a gateway restarts, and one conversation
    outlives the gateway: an output must not be moved up to the other call's place."""
    again = ToolCall(id="c1", name="read_back", arguments={})
    log = [
        msg(Role.ASSISTANT, "", "a", tool_calls=(CALL,)),
        msg(Role.TOOL, "found", "a", tool_call_id="c1"),
        msg(Role.ASSISTANT, "We have x.", "a"),
        msg(Role.ASSISTANT, "", "a", tool_calls=(again,)),
        msg(Role.TOOL, "read back", "a", tool_call_id="c1"),
    ]
    view = agent_view(log, "a", 25)
    assert [(m.role, m.content, [c.name for c in m.tool_calls]) for m in view] == [
        (Role.ASSISTANT, "", ["search"]),
        (Role.TOOL, "found", []),
        (Role.ASSISTANT, "We have x.", []),
        (Role.ASSISTANT, "", ["read_back"]),
        (Role.TOOL, "read back", []),
    ]
