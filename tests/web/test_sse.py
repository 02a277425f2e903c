"""Server-Sent Events: live fan-out, replay from the database, heartbeats, clean-up."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlmodel import Session, col, select

from callswarm.app import build_services
from callswarm.settings import Settings
from models.calls import EventRow
from swarm import EventBus, UserMessageEvent
from web.journal import Entry, Hub, Journal

from .conftest import start, stop
from .console import Sse, operator, text_call

pytestmark = pytest.mark.databases


async def test_many_subscribers_see_every_call_and_a_call_stream_only_its_own(gateway) -> None:
    hub = gateway.gateway.journal.hub
    async with (
        operator(gateway) as one,
        operator(gateway, "bob") as two,
        one.stream("GET", "/api/events") as first,
        two.stream("GET", "/api/events") as second,
    ):
        assert first.headers["content-type"].startswith("text/event-stream")
        await hub.wait_listeners(2)
        await text_call(gateway, "web-sse", "what are your opening hours?")
        readers = Sse(first), Sse(second)
        seen = [await r.until("call_ended") for r in readers]
        assert seen[0] == seen[1]  # every subscriber, the same events in the same order
        kinds = [e["kind"] for e in seen[0]]
        assert kinds[0] == "call_started" and kinds[-1] == "call_ended"
        assert {"user_message", "assistant_message"} <= set(kinds)
        ids = [e["id"] for e in seen[0]]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        call_id = seen[0][0]["call_id"]
        assert {e["call_id"] for e in seen[0]} == {call_id}
        said = next(e for e in seen[0] if e["kind"] == "user_message")
        assert said["data"]["content"] == "what are your opening hours?"

        # A second call: its own stream shows only it, while another call runs.
        async with one.stream("GET", f"/api/calls/{'f' * 32}/events") as other:
            await hub.wait_listeners(3)
            await text_call(gateway, "web-sse-2", "where are you?")
            await text_call(gateway, "web-sse-3", "hello")
            later = await readers[0].until("call_ended")
            later += await readers[0].until("call_ended")
            assert {e["client_id"] for e in later} == {"web-sse-2", "web-sse-3"}
            assert other.status_code == 200  # an unknown call: nothing, not an error
    await asyncio.wait_for(hub.wait_listeners(0), 30)


async def test_last_event_id_replays_what_was_missed_then_goes_live(gateway) -> None:
    await text_call(gateway, "web-r1", "what are your opening hours?")
    async with operator(gateway) as api:
        [call] = (await api.get("/api/calls", params={"caller": "web-r1"})).json()["items"]
        transcript = (await api.get(f"/api/calls/{call['id']}/transcript")).json()
        events = transcript["events"]
        # Missed everything after the call started: replay from the database.
        headers = {"Last-Event-ID": str(events[0]["id"])}
        async with api.stream("GET", "/api/events", headers=headers) as response:
            sse = Sse(response)
            replayed = await sse.until("call_ended")
            assert replayed[0]["id"] == events[0]["id"] + 1
            assert [e["id"] for e in replayed] == list(
                range(events[0]["id"] + 1, replayed[-1]["id"] + 1)
            )
            assert replayed[-1]["call_id"] == call["id"]
            # ...and then live, with no gap and no repeat.
            await text_call(gateway, "web-r2", "where are you?")
            live = await sse.until("call_ended")
            assert live[0]["kind"] == "call_started" and live[0]["id"] == replayed[-1]["id"] + 1
        # One call's stream replays only that call, from `?after=` too.
        async with api.stream(
            "GET", f"/api/calls/{call['id']}/events", params={"after": 0}
        ) as response:
            replayed = await Sse(response).until("call_ended")
            assert [e["id"] for e in replayed] == [e["id"] for e in replayed if e["call_id"]]
            assert {e["call_id"] for e in replayed} == {call["id"]}
            assert replayed[0]["kind"] == "call_started"
        bad = await api.get("/api/events", headers={"Last-Event-ID": "yesterday"})
        assert bad.status_code == 400


@pytest.fixture
async def chatty(tmp_path, database_url, stt, tts):
    """A gateway whose SSE heartbeat is a tenth of a second."""
    settings = Settings(
        data_dir=tmp_path,
        database_url=database_url,
        provider="scripted",
        idle_timeout=None,
        sse_heartbeat=0.1,
    )
    running, server, task = await start(build_services(settings), stt, tts)
    try:
        yield running
    finally:
        await stop(running, server, task)


async def test_heartbeats_and_gone_subscribers_are_cleaned_up(chatty) -> None:
    hub = chatty.gateway.journal.hub
    async with operator(chatty) as api:
        async with api.stream("GET", "/api/events") as response:
            beats = await Sse(response).take(2, comments=True)
            assert beats == [{"comment": "heartbeat"}, {"comment": "heartbeat"}]
            assert hub.listeners == 1
        await asyncio.wait_for(hub.wait_listeners(0), 30)
        # Many come and go: none is left behind.
        for _ in range(5):
            async with api.stream("GET", "/api/events") as response:
                await Sse(response).take(1, comments=True)
        await asyncio.wait_for(hub.wait_listeners(0), 30)


def entry(n: int, call_id: str | None = "c") -> Entry:
    return Entry(n, call_id, "x", "user_message", "triage", datetime.now(UTC), {})


async def test_a_lagging_listener_is_cut_off_not_waited_for() -> None:
    hub = Hub(maxsize=3)
    slow, other_call = hub.listen(), hub.listen("d")
    for n in range(1, 5):
        hub.publish(entry(n))
    # Full: it is ended after what it holds, so its client resumes from the last id it
    # saw (3) and reads the rest from the database, with no gap.
    assert [(await slow.get()).id for _ in range(3)] == [1, 2, 3]
    assert await slow.get() is None and hub.listeners == 1
    hub.publish(entry(5, "d"))
    assert (await other_call.get()).id == 5


async def test_the_journal_keeps_events_through_a_database_hiccup(tmp_path, database_url) -> None:
    settings = Settings(data_dir=tmp_path, database_url=database_url, provider="scripted")
    services = build_services(settings)
    bus = EventBus()
    journal = Journal(services.db, bus, lambda client_id, at: None)
    journal.start()
    insert, failures = journal._insert, [1]

    def flaky(rows):
        if failures:
            failures.pop()
            # Fails inside the commit, after the rows were flushed and given ids.
            with Session(services.db) as db:
                db.add_all([EventRow(**row) for row in rows])
                db.flush()
                raise OSError("database is locked")
        return insert(rows)

    journal._insert = flaky
    listener = journal.hub.listen()

    async def publish(n: int) -> None:
        event = UserMessageEvent(
            session_id="x", agent="triage", seq=n, time=0, content=f"m{n}", message_seq=n
        )
        bus.publish(event)
        await journal.settled()

    await publish(1)  # fails: kept
    await publish(2)  # saved, after m1
    got = [await listener.get(), await listener.get()]
    assert [e.data["content"] for e in got] == ["m1", "m2"]
    failures.append(1)
    await publish(3)  # fails, and nothing follows it: saved at shutdown
    await journal.aclose()
    assert (await listener.get()).data["content"] == "m3"
    assert await listener.get() is None
    with Session(services.db) as db:
        rows = db.exec(select(EventRow).order_by(col(EventRow.id))).all()
        assert [r.data["content"] for r in rows] == ["m1", "m2", "m3"]
    await services.aclose()
