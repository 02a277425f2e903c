from __future__ import annotations

from swarm import USER, Engine, Role, Rule, ScriptedBackend, ThreadMessageEvent


def build() -> Engine:
    engine = Engine()
    engine.add_completion(
        "s",
        ScriptedBackend(
            [
                # triage asks sales, then relays the answer.
                Rule(
                    "price of (\\w+)",
                    tool="talk_to_agent",
                    arguments={"recipient": "sales", "message": "What does {1} cost?"},
                    agent="triage",
                ),
                Rule(
                    "ask billing",
                    tool="talk_to_agent",
                    arguments={"recipient": "billing", "message": "hello"},
                    agent="triage",
                ),
                Rule(
                    "may not talk",
                    reply="I cannot reach billing from here.",
                    agent="triage",
                    on="tool",
                ),
                Rule("(.+)", reply="Sales says: {1}", agent="triage", on="tool"),
                Rule("What does (\\w+) cost", reply="{1} costs 3 euros 20.", agent="sales"),
                Rule(".*", reply="hello", agent="billing"),
                Rule(".*", reply="Triage here."),
            ]
        ),
    )
    engine.add_agent("triage", "s", "You route callers.")
    engine.add_agent("sales", "s", "You sell.")
    engine.add_agent("billing", "s", "You bill.")
    engine.add_swarm(
        "agency",
        ["triage", "sales", "billing"],
        "triage",
        mission="Help pharmacy customers by phone.",
        communication=[(USER, "triage"), ("triage", "sales"), ("sales", "billing")],
    )
    engine.validate()
    return engine


async def test_talk_to_agent_returns_the_recipients_reply_synchronously() -> None:
    engine = build()
    s = engine.session("c", "agency")
    with engine.bus.subscribe() as events:
        reply = await s.complete("what is the price of paracetamol")
        thread_events = [e for e in events.drain() if isinstance(e, ThreadMessageEvent)]
    assert reply == "Sales says: paracetamol costs 3 euros 20."
    assert [(e.sender, e.recipient, e.agent, e.content) for e in thread_events] == [
        ("triage", "sales", "triage", "What does paracetamol cost?"),
        ("triage", "sales", "sales", "paracetamol costs 3 euros 20."),
    ]
    # The thread's words are not the caller's conversation.
    assert await s.get_agent_name() == "triage"
    assert "paracetamol costs 3 euros 20." not in [
        m.content for m in await s.get_assistant_history()
    ]


async def test_threads_are_first_class_and_listable() -> None:
    engine = build()
    s = engine.session("c", "agency")
    await s.complete("price of aspirin")
    threads = await s.threads()
    assert [(t.sender, t.recipient) for t in threads] == [("user", "triage"), ("triage", "sales")]
    assert [m.content for m in threads[1].messages] == [
        "What does aspirin cost?",
        "aspirin costs 3 euros 20.",
    ]
    assert [m.content for m in threads[0].messages] == [
        "price of aspirin",
        "Sales says: aspirin costs 3 euros 20.",
    ]


async def test_talk_to_agent_over_a_missing_edge_is_refused_clearly() -> None:
    engine = build()
    s = engine.session("c", "agency")
    assert await s.complete("ask billing") == "I cannot reach billing from here."
    output = next(m for m in await s.get_raw_history() if m.role is Role.TOOL)
    assert output.content == "triage may not talk to billing. You may talk to: sales."


async def test_tool_is_given_only_to_agents_with_an_outgoing_edge_and_mission_is_prepended() -> (
    None
):
    engine = build()
    backend = engine.registry.completions["s"]
    seen = {}
    original = backend.answer

    def spy(args):
        seen[args.agent_name] = args
        return original(args)

    backend.answer = spy
    s = engine.session("c", "agency")
    await s.complete("price of aspirin")
    await s.change_to_agent("billing")
    await s.complete("hi")
    assert "talk_to_agent" in seen["triage"].tool_names
    assert "talk_to_agent" in seen["sales"].tool_names  # sales → billing
    assert "talk_to_agent" not in seen["billing"].tool_names
    for args in seen.values():
        assert args.messages[0]["content"].startswith("Help pharmacy customers by phone.")
