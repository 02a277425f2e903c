from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy.engine import Engine as SqlEngine
from sqlmodel import Session, select

from models import MessageRow, SessionRow, SqlSessionStore, ThreadRow, make_engine
from swarm import USER, Engine, ErrorOccurred, Rule, ScriptedBackend, ToolContext

from ..swarm.helpers import NoArgs

pytestmark = pytest.mark.databases


@pytest.fixture
def databases(database_url) -> Iterator[Callable[..., SqlEngine]]:
    """Opens engines on the test's database, as separate processes would; closes them all."""
    opened: list[SqlEngine] = []

    def open_one(*, migrate: bool = True) -> SqlEngine:
        opened.append(make_engine(database_url, migrate=migrate))
        return opened[-1]

    yield open_one
    for engine in opened:
        engine.dispose()


def build(databases: Callable[..., SqlEngine], store=None) -> Engine:
    engine = Engine(store=store or SqlSessionStore(databases()))
    engine.add_completion(
        "s",
        ScriptedBackend(
            [
                Rule("buy", tool="to_sales", agent="triage"),
                Rule(
                    "ask",
                    tool="talk_to_agent",
                    arguments={"recipient": "sales", "message": "stock?"},
                    agent="triage",
                ),
                Rule("(.+)", reply="Sales replied: {1}", agent="triage", on="tool"),
                Rule(".*", reply="Sales: {input}", agent="sales"),
                Rule(".*", reply="Triage: {input}", agent="triage"),
            ]
        ),
    )

    async def to_sales(ctx: ToolContext, _: NoArgs) -> None:
        await ctx.change_to_agent("sales")

    engine.add_tool("to_sales", "Go to sales", NoArgs, to_sales)
    engine.add_agent("triage", "s", "Triage.", tools=["to_sales"])
    engine.add_agent("sales", "s", "Sales.")
    engine.add_swarm(
        "shop", ["triage", "sales"], "triage", communication=[(USER, "triage"), ("triage", "sales")]
    )
    return engine


async def test_a_session_resumes_after_a_restart_with_history_agent_stack_and_threads(
    databases,
) -> None:
    first = build(databases)
    s = first.session("+15550001", "shop")
    await s.complete("ask them")
    await s.complete("I want to buy")
    before = await s.get_raw_history()
    threads_before = await s.threads()
    await first.aclose()

    # A new process: new engine, new database connection, same database.
    second = build(databases)
    resumed = second.session("+15550001", "shop")
    assert await resumed.get_agent_name() == "sales"
    assert await resumed.get_navigation_stack() == ("triage",)
    after = await resumed.get_raw_history()
    assert [(m.seq, m.role, m.agent, m.content, m.tool_calls, m.tool_call_id) for m in after] == [
        (m.seq, m.role, m.agent, m.content, m.tool_calls, m.tool_call_id) for m in before
    ]
    assert [[m.content for m in t.messages] for t in await resumed.threads()][1] == [
        m.content for m in threads_before[1].messages
    ]
    # And it carries on where it left off, with sales answering.
    assert await resumed.complete("two boxes") == "Sales: two boxes"
    assert (await resumed.get_raw_history())[-1].seq == before[-1].seq + 2


async def test_each_message_is_in_the_database_when_its_turn_returns(databases) -> None:
    engine = build(databases)
    s = engine.session("c", "shop")
    await s.complete("hello")
    # Read through a separate engine, as another process would.
    with Session(databases(migrate=False)) as db:
        rows = db.exec(select(MessageRow).order_by(MessageRow.seq)).all()
        assert [(r.seq, r.role, r.content) for r in rows] == [
            (1, "user", "hello"),
            (2, "assistant", "Triage: hello"),
        ]
        assert db.get(SessionRow, "c").active_agent == "triage"


async def test_threads_and_tool_calls_are_stored(databases) -> None:
    engine = build(databases)
    s = engine.session("c", "shop")
    await s.complete("ask")
    with Session(databases(migrate=False)) as db:
        thread = db.exec(select(ThreadRow)).one()
        assert (thread.sender, thread.recipient) == ("triage", "sales")
        call = db.exec(select(MessageRow).where(MessageRow.role == "assistant")).first()
        assert call.tool_calls[0]["name"] == "talk_to_agent"
        assert call.tool_calls[0]["arguments"] == {"recipient": "sales", "message": "stock?"}


class Hiccup:
    """Wraps a store and fails a number of writes, as a database restart would."""

    def __init__(self, inner: SqlSessionStore, failures: int) -> None:
        self.inner = inner
        self.failures = failures

    async def load(self, client_id):
        return await self.inner.load(client_id)

    async def save_state(self, client_id, **kw):
        await self._maybe_fail()
        await self.inner.save_state(client_id, **kw)

    async def append_message(self, client_id, message):
        await self._maybe_fail()
        await self.inner.append_message(client_id, message)

    async def save_thread(self, client_id, thread):
        await self.inner.save_thread(client_id, thread)

    async def append_thread_message(self, client_id, thread_id, message):
        await self.inner.append_thread_message(client_id, thread_id, message)

    async def _maybe_fail(self):
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("database went away")


async def test_a_short_database_hiccup_is_retried_transparently(databases) -> None:
    store = Hiccup(SqlSessionStore(databases()), failures=0)
    engine = build(databases, store)
    s = engine.session("c", "shop")
    await s.complete("first")
    store.failures = 2  # fewer than the writer's attempts
    assert await s.complete("second") == "Triage: second"
    assert s.unsaved_writes == 0
    stored = await store.inner.load("c")
    assert [m.content for m in stored.messages] == [
        "first",
        "Triage: first",
        "second",
        "Triage: second",
    ]


async def test_a_long_outage_keeps_the_session_alive_and_loses_nothing(databases) -> None:
    store = Hiccup(SqlSessionStore(databases()), failures=0)
    engine = build(databases, store)
    s = engine.session("c", "shop")
    await s.complete("first")
    store.failures = 1000
    with engine.bus.subscribe() as events:
        assert await s.complete("during the outage") == "Triage: during the outage"
        assert any(isinstance(e, ErrorOccurred) and e.where == "store" for e in events.drain())
    assert s.unsaved_writes == 2
    store.failures = 0
    assert await s.complete("after") == "Triage: after"
    assert s.unsaved_writes == 0
    stored = await store.inner.load("c")
    assert [m.content for m in stored.messages] == [
        "first",
        "Triage: first",
        "during the outage",
        "Triage: during the outage",
        "after",
        "Triage: after",
    ]
