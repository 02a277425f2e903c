from __future__ import annotations

import asyncio

import pytest

from swarm import (
    AssistantMessage,
    CompletionArgs,
    Engine,
    MemoryStore,
    Message,
    Role,
    Rule,
    ScriptedBackend,
    Session,
    SessionState,
    TextDelta,
)
from swarm.errors import SessionClosed


def echo_engine(**options) -> Engine:
    engine = Engine(**options)
    engine.add_completion("s", ScriptedBackend([Rule("(.*)", reply="echo: {1}")]))
    engine.add_agent("a", "s", "Echo.")
    engine.add_swarm("w", ["a"], "a")
    return engine


class NeverFinishes:
    """Streams some words, then waits for a model that never completes."""

    def __init__(self, words: str) -> None:
        self.words = words

    async def stream(self, args):
        yield TextDelta(self.words)
        await asyncio.Event().wait()
        yield AssistantMessage(content=self.words)


def never_finishing_engine(words: str) -> Engine:
    engine = Engine()
    engine.add_completion("slow", NeverFinishes(words))
    engine.add_agent("a", "slow", "Slow.")
    engine.add_swarm("w", ["a"], "a")
    return engine


async def test_one_clients_turns_run_one_at_a_time_and_stay_paired() -> None:
    engine = Engine()
    running = 0
    peak = 0
    gate = asyncio.Event()
    entered = asyncio.Event()

    async def slow_echo(args: CompletionArgs) -> AssistantMessage:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        entered.set()
        await gate.wait()
        running -= 1
        return AssistantMessage(content=f"echo: {args.messages[-1]['content']}")

    engine.add_completion("s", slow_echo)
    engine.add_agent("a", "s", "Echo.")
    engine.add_swarm("w", ["a"], "a")
    s = engine.session("c", "w")
    tasks = [asyncio.create_task(s.complete(f"m{i}")) for i in range(5)]
    await entered.wait()
    # The first turn is inside the model; the other four wait their turn, not the model.
    assert running == 1
    gate.set()
    assert await asyncio.gather(*tasks) == [f"echo: m{i}" for i in range(5)]
    assert peak == 1
    assert [m.content for m in await s.get_user_history()] == [f"m{i}" for i in range(5)]


async def test_200_concurrent_sessions_no_cross_talk_and_order_kept() -> None:
    engine = Engine()

    async def echo(args: CompletionArgs) -> AssistantMessage:
        await asyncio.sleep(0)  # yield so that sessions really interleave
        return AssistantMessage(content=f"{args.client_id} heard {args.messages[-1]['content']}")

    engine.add_completion("s", echo)
    engine.add_agent("a", "s", "Echo.")
    engine.add_swarm("w", ["a"], "a")

    async def caller(i: int) -> list[str]:
        s = engine.session(f"client-{i}", "w")
        return list(await asyncio.gather(*(s.complete(f"msg {i}.{n}") for n in range(5))))

    results = await asyncio.gather(*(caller(i) for i in range(200)))
    for i, replies in enumerate(results):
        assert replies == [f"client-{i} heard msg {i}.{n}" for n in range(5)]
    for i in range(200):
        log = await engine.get_session(f"client-{i}").get_raw_history()
        assert [m.content for m in log] == [
            text for n in range(5) for text in (f"msg {i}.{n}", f"client-{i} heard msg {i}.{n}")
        ]
        assert [m.seq for m in log] == list(range(1, 11))


async def test_push_connection_sends_replies_emits_and_executes() -> None:
    engine = echo_engine()
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    conn = engine.make_connection("c", "w", send)
    conn.receive("one")
    conn.receive("two")
    await conn.drain()
    await conn.emit("Prepared text.")
    await conn.execute("say hi")
    assert sent == ["echo: one", "echo: two", "Prepared text.", "echo: say hi"]
    await conn.dispose()
    assert conn.session.state is SessionState.CLOSED


async def test_debounced_connection_merges_a_burst_into_one_turn() -> None:
    engine = echo_engine()
    sent: list[str] = []

    async def send(text: str) -> None:
        sent.append(text)

    conn = engine.make_connection("c", "w", send, debounce=60.0)
    for part in ("I would like", "two boxes", "of paracetamol"):
        conn.receive(part)
    await conn.drain()
    assert sent == ["echo: I would like two boxes of paracetamol"]
    assert len(await conn.session.get_user_history()) == 1


async def test_idle_session_is_disposed_and_resumes_from_the_store() -> None:
    engine = echo_engine(idle_timeout=1e-3)
    s = engine.session("c", "w")
    await s.complete("hello")
    await asyncio.wait_for(s.closed.wait(), timeout=5)
    assert s.state is SessionState.CLOSED
    assert "c" not in engine.sessions
    with pytest.raises(SessionClosed):
        await s.complete("too late")
    resumed = engine.session("c", "w")
    assert await resumed.get_last_user_message() == "hello"


async def test_a_session_a_call_holds_outlives_its_idle_timeout_until_released() -> None:
    """A caller quiet past the timeout kept a disposed session: every later turn of the
    call failed, and its hang-up could not be recorded."""
    engine = echo_engine(idle_timeout=1e-3)
    s = engine.session("c", "w")
    s.hold()
    await s.complete("hello")
    s._idle_expired()  # as its timer would, however often
    assert s.state is SessionState.OPEN and engine.sessions["c"] is s
    assert await s.complete("still here") == "echo: still here"
    s.release()
    await asyncio.wait_for(s.closed.wait(), timeout=5)
    assert "c" not in engine.sessions


class AwayStore(MemoryStore):
    """A store whose database goes away while `away` is set."""

    away = False

    async def append_message(self, client_id: str, message: Message) -> None:
        if self.away:
            raise ConnectionError("the database went away")
        await super().append_message(client_id, message)


async def unsaved_turn(last: str) -> tuple[AwayStore, Engine, Session]:
    """A session with one turn saved, then `last` said while the database is away."""
    store = AwayStore()
    engine = echo_engine(store=store)
    s = engine.session("c", "w")
    await s.complete("hello")
    store.away = True
    await s.complete(last)
    return store, engine, s


async def test_a_disposal_the_store_refused_keeps_the_session_until_it_is_saved() -> None:
    """The last turn of a call that ended while the database was away was lost: disposal
    tried one flush, then forgot the session and its queue."""
    store, engine, s = await unsaved_turn("my last words")
    await s.dispose()
    assert s.state is SessionState.OPEN and engine.sessions["c"] is s
    store.away = False
    s._idle_expired()  # the retry's timer
    await asyncio.wait_for(s.closed.wait(), timeout=5)
    assert "c" not in engine.sessions
    stored = await store.load("c")
    assert stored is not None
    assert [m.content for m in stored.messages] == [
        "hello",
        "echo: hello",
        "my last words",
        "echo: my last words",
    ]


async def test_a_disposal_unless_held_leaves_a_session_a_call_holds() -> None:
    engine = echo_engine()
    s = engine.session("c", "w")
    await s.complete("hello")
    s.hold()  # a caller rang back as their last call was being closed
    await s.dispose(unless_held=True)
    assert s.state is SessionState.OPEN and engine.sessions["c"] is s
    s.release()
    await s.dispose(unless_held=True)
    assert s.state is SessionState.CLOSED


async def test_the_engine_closing_closes_a_session_whatever_is_unsaved() -> None:
    _, engine, s = await unsaved_turn("unsaved")
    await engine.aclose()
    assert s.state is SessionState.CLOSED and "c" not in engine.sessions


async def test_a_lone_surrogate_in_a_models_reply_is_never_passed_on() -> None:
    """A model's JSON can hold "\\ud800": the text socket closed on it, and the
    session's store refused it and every write queued after it."""
    engine = Engine()
    engine.add_completion("s", ScriptedBackend([Rule("(.*)", reply="half \ud800of it")]))
    engine.add_agent("a", "s", "Echo.")
    engine.add_swarm("w", ["a"], "a")
    s = engine.session("c", "w")
    reply = "".join([piece async for piece in s.stream("hi")])
    assert reply.encode("utf-8") == b"half of it"
    assert await s.get_last_assistant_message() == "half of it"


async def test_stream_yields_text_as_written_and_records_the_whole_reply() -> None:
    engine = echo_engine()
    s = engine.session("c", "w")
    pieces = [piece async for piece in s.stream("two boxes please")]
    assert len(pieces) > 1
    assert "".join(pieces) == "echo: two boxes please"
    assert await s.get_last_assistant_message() == "echo: two boxes please"


async def test_closing_a_stream_cancels_the_turn_and_frees_the_session() -> None:
    s = never_finishing_engine("First words ").session("c", "w")
    stream = s.stream("hi")
    assert await anext(stream) == "First words "
    await stream.aclose()
    # The lock is free again: a new turn can start (and is stuck on the same model).
    assert not s._lock.locked()
    roles = [m.role for m in await s.get_raw_history()]
    assert roles == [Role.USER]


async def test_two_clients_never_see_each_others_messages() -> None:
    engine = echo_engine()
    a, b = engine.session("alice", "w"), engine.session("bob", "w")
    await asyncio.gather(a.complete("alice secret"), b.complete("bob secret"))
    assert all("bob" not in m.content for m in await a.get_raw_history())
    assert all("alice" not in m.content for m in await b.get_raw_history())


async def test_revise_reply_keeps_only_what_the_caller_heard() -> None:
    engine = echo_engine()
    s = engine.session("c", "w")
    await s.complete("first question")
    await s.complete("tell me everything about it")
    await s.revise_reply("echo: tell me")
    assert await s.get_last_assistant_message() == "echo: tell me"
    assert [m.content for m in await s.get_assistant_history()] == [
        "echo: first question",
        "echo: tell me",
    ]


async def test_revise_reply_commits_a_reply_cancelled_before_it_was_stored() -> None:
    s = never_finishing_engine("Part of an answer ").session("c", "w")
    stream = s.stream("hi")
    assert await anext(stream) == "Part of an answer "
    await stream.aclose()
    await s.revise_reply("Part of an")
    assert [(m.role, m.content) for m in await s.get_raw_history()] == [
        (Role.USER, "hi"),
        (Role.ASSISTANT, "Part of an"),
    ]


async def test_a_reply_revised_to_nothing_is_not_shown_to_the_model() -> None:
    engine = echo_engine()
    s = engine.session("c", "w")
    await s.complete("hello")
    await s.revise_reply("")
    assert [m.content for m in await s.get_agent_history()] == ["hello"]
