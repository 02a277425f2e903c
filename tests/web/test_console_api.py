"""The operators' REST API on a real gateway: every endpoint and every filter."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.exc import OperationalError

from models.calls import Channel
from swarm import AssistantMessage, Message, Role, ThreadInfo, ToolCall
from web import live
from web.live import LiveCalls

from .client import caller_cookie
from .console import operator, text_call

pytestmark = pytest.mark.databases


async def conversations(gateway) -> None:
    """Three web callers with three outcomes, and one phone call that opens and closes."""
    await text_call(
        gateway,
        "web-buyer",
        "I need something for a headache",
        "two boxes of the paracetamol please",
        "that's all",
        "yes please",
    )
    await text_call(gateway, "web-asker", "can I speak to a pharmacist")
    await text_call(gateway, "web-silent")
    calls = gateway.gateway.calls
    phone = await calls.open("+15550199", Channel.SIP)
    await phone.session.emit(gateway.services.greeting)
    await calls.close(phone, ended_by="caller")


async def test_calls_are_listed_with_every_filter_and_pages(gateway) -> None:
    await conversations(gateway)
    async with operator(gateway) as api:

        async def ids(**params) -> list[str]:
            response = await api.get("/api/calls", params=params)
            assert response.status_code == 200, response.text
            return [c["client_id"] for c in response.json()["items"]]

        assert await ids() == ["+15550199", "web-silent", "web-asker", "web-buyer"]
        assert await ids(caller="buy") == ["web-buyer"]
        assert await ids(channel="sip") == ["+15550199"]
        assert set(await ids(channel="web")) == {"web-silent", "web-asker", "web-buyer"}
        assert await ids(agent="sales") == ["web-buyer"]
        assert set(await ids(agent="triage")) == {"web-buyer", "web-asker", "+15550199"}
        assert await ids(outcome="order_placed") == ["web-buyer"]
        assert await ids(outcome="transferred") == ["web-asker"]
        assert set(await ids(outcome="abandoned")) == {"web-silent", "+15550199"}
        assert await ids(live=True) == []
        assert len(await ids(live=False)) == 4
        future = datetime.now(UTC) + timedelta(minutes=1)
        assert await ids(since=future.isoformat()) == []
        assert len(await ids(until=future.isoformat())) == 4
        page = (await api.get("/api/calls", params={"limit": 2, "offset": 1})).json()
        assert page["total"] == 4 and [c["client_id"] for c in page["items"]] == [
            "web-silent",
            "web-asker",
        ]
        assert (await api.get("/api/calls", params={"outcome": "lost"})).status_code == 422
        assert (await api.get("/api/calls", params={"limit": 0})).status_code == 422

        buyer = (await api.get("/api/calls", params={"caller": "web-buyer"})).json()["items"][0]
        one = (await api.get(f"/api/calls/{buyer['id']}")).json()
        assert one["channel"] == "web" and one["ended_by"] == "caller" and not one["live"]
        assert one["agents"] == ["sales", "triage"] and one["outcome"] == "order_placed"
        assert (await api.get(f"/api/calls/{'0' * 32}")).status_code == 404


async def test_a_transcript_has_messages_tools_agent_changes_rescues_and_orders(gateway) -> None:
    backend = gateway.services.engine.registry.completions["scripted"]
    original = backend.answer

    def broken_then_normal(args):
        backend.answer = original
        # A model asking for a tool that does not exist: the swarm must rescue it.
        return AssistantMessage(tool_calls=(ToolCall("x1", "give_everything_free", {}),))

    await text_call(gateway, "web-t", "I'd like loratadine", "one box please")
    backend.answer = broken_then_normal
    await text_call(gateway, "web-t", "hello there")
    async with operator(gateway) as api:
        first, second = sorted(
            (await api.get("/api/calls", params={"caller": "web-t"})).json()["items"],
            key=lambda c: c["started_at"],
        )
        body = (await api.get(f"/api/calls/{first['id']}/transcript")).json()
        messages = body["messages"]
        assert [m["role"] for m in messages][:2] == ["user", "assistant"]
        assert messages[0]["content"] == "I'd like loratadine"
        calls = [c for m in messages for c in m["tool_calls"]]
        assert calls[0]["name"] == "navigate_to_sales" and "sales" in calls[0]["output"]
        added = next(c for c in calls if c["name"] == "add_to_order")
        assert "loratadine" in added["arguments"]["product"].lower()
        assert added["arguments"]["quantity"] == 1 and added["output"]
        assert any("4 dollars 49" in m["content"] and m["agent"] == "sales" for m in messages)
        assert not [m for m in messages if m["role"] == "tool"]  # folded into their calls
        kinds = [e["kind"] for e in body["events"]]
        assert kinds[0] == "call_started" and kinds[-1] == "call_ended"
        change = next(e for e in body["events"] if e["kind"] == "agent_changed")
        assert change["data"] == {"previous": "triage", "current": "sales"}
        [order] = body["orders"]
        assert order["status"] == "pending" and order["total_cents"] > 0
        assert body["last_event_id"] >= max(e["id"] for e in body["events"])

        later = (await api.get(f"/api/calls/{second['id']}/transcript")).json()
        assert [m["content"] for m in later["messages"] if m["role"] == "user"] == ["hello there"]
        rescue = next(e for e in later["events"] if e["kind"] == "rescued")
        assert rescue["data"]["detail"] == "give_everything_free"
        assert rescue["data"]["reason"] == "unknown_tool" and rescue["data"]["strategy"]
        assert later["messages"][-1]["role"] == "assistant"  # the caller still got an answer


async def test_threads_and_sending_into_the_users_thread(gateway) -> None:
    await text_call(gateway, "web-th", "what are your opening hours?")
    async with operator(gateway, "bob") as api:
        [call] = (await api.get("/api/calls", params={"caller": "web-th"})).json()["items"]
        threads = (await api.get(f"/api/calls/{call['id']}/threads")).json()
        user = threads[0]
        assert (user["id"], user["sender"], user["recipient"]) == ("user", "user", "triage")
        assert [m["role"] for m in user["messages"]] == ["user", "assistant"]
        assert "Monday" in user["messages"][-1]["content"]

        sent = await api.post(
            f"/api/calls/{call['id']}/threads/user/messages", json={"text": "where are you?"}
        )
        assert sent.status_code == 200 and "River Street" in sent.json()["reply"]
        # The call has ended: no session is kept for it (it blocked erasing the caller).
        assert "web-th" not in gateway.gateway.engine.sessions
        refused = await api.post(
            f"/api/calls/{call['id']}/threads/triage->sales/messages", json={"text": "hi"}
        )
        assert refused.status_code in (403, 404)
        refused = await api.post(
            f"/api/calls/{call['id']}/threads/sales/messages", json={"text": "hi"}
        )
        assert refused.status_code == 403
        empty = await api.post(f"/api/calls/{call['id']}/threads/user/messages", json={"text": ""})
        assert empty.status_code == 422
        # An agent → agent thread (the agency's talk_to_agent) shows with its messages.
        calls, store = gateway.gateway.calls, gateway.services.engine.store
        consult = await calls.open("web-th2", Channel.WEB)
        thread = ThreadInfo("web-th2/sales->triage", "sales", "triage")
        await store.save_thread("web-th2", thread)
        for seq, (role, agent, text) in enumerate(
            [(Role.USER, "sales", "Is the caller a regular?"), (Role.ASSISTANT, "triage", "Yes.")],
            start=1,
        ):
            message = Message(role=role, content=text, agent=agent, seq=seq)
            await store.append_thread_message("web-th2", thread.id, message)
        await calls.close(consult, ended_by="caller")
        listed = (await api.get(f"/api/calls/{consult.id}/threads")).json()
        assert [(t["id"], t["sender"], t["recipient"]) for t in listed] == [
            ("user", "user", ""),
            ("sales->triage", "sales", "triage"),
        ]
        assert [m["content"] for m in listed[1]["messages"]] == ["Is the caller a regular?", "Yes."]
        audit = (await api.get("/api/audit", params={"action": "thread_message"})).json()
        assert [(a["operator"], a["target"], a["detail"]) for a in audit] == [
            ("bob", call["id"], "where are you?")
        ]


async def test_search_across_transcripts(gateway) -> None:
    await text_call(gateway, "web-s1", "do you have ibuprofen?")
    await text_call(gateway, "web-s2", "what are your opening hours?")
    async with operator(gateway) as api:
        hits = (await api.get("/api/search", params={"q": "IBUPROFEN"})).json()
        assert {h["client_id"] for h in hits} == {"web-s1"}
        assert all("ibuprofen" in h["content"].lower() for h in hits)
        assert {h["role"] for h in hits} == {"user", "assistant"}
        call_ids = {h["call_id"] for h in hits}
        [call] = (await api.get("/api/calls", params={"caller": "web-s1"})).json()["items"]
        assert call_ids == {call["id"]}
        assert (await api.get("/api/search", params={"q": "100%_"})).json() == []
        assert (await api.get("/api/search", params={"q": "x"})).status_code == 422
        assert len((await api.get("/api/search", params={"q": "hours", "limit": 1})).json()) == 1


async def test_products_orders_and_customers(gateway) -> None:
    await text_call(
        gateway,
        "web-shop",
        "two boxes of paracetamol please",
        "that's all",
        "yes please",
    )
    await text_call(gateway, "web-shop2", "one box of loratadine please")
    async with operator(gateway) as api:
        page = (await api.get("/api/products", params={"q": "paracet"})).json()
        assert page["total"] >= 1 and all(
            "paracet" in (p["name"] + p["active_ingredient"]).lower() for p in page["items"]
        )
        rx = (await api.get("/api/products", params={"prescription_only": True})).json()
        assert rx["total"] >= 1 and all(p["prescription_only"] for p in rx["items"])
        out = (await api.get("/api/products", params={"in_stock": False})).json()
        assert all(p["stock"] == 0 for p in out["items"])
        two = (await api.get("/api/products", params={"limit": 2, "offset": 2})).json()
        assert len(two["items"]) == 2 and two["total"] > 4
        sku = page["items"][0]["sku"]
        assert (await api.get(f"/api/products/{sku}")).json()["sku"] == sku
        assert (await api.get("/api/products/NOPE")).status_code == 404

        customers = (await api.get("/api/customers", params={"q": "web-shop"})).json()
        assert {c["client_id"] for c in customers["items"]} == {"web-shop", "web-shop2"}
        buyer = next(c for c in customers["items"] if c["client_id"] == "web-shop")
        detail = (await api.get(f"/api/customers/{buyer['id']}")).json()
        [order] = detail["orders"]
        assert order["status"] == "confirmed" and order["total_cents"] == 2 * 299
        assert order["lines"][0]["quantity"] == 2 and order["lines"][0]["unit_price_cents"] == 299
        assert (await api.get("/api/customers/99999")).status_code == 404

        confirmed = (await api.get("/api/orders", params={"status": "confirmed"})).json()
        assert [o["id"] for o in confirmed["items"]] == [order["id"]]
        pending = (await api.get("/api/orders", params={"status": "pending"})).json()
        assert pending["total"] == 1 and pending["items"][0]["customer_id"] != buyer["id"]
        mine = (await api.get("/api/orders", params={"customer_id": buyer["id"]})).json()
        assert mine["total"] == 1
        later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
        assert (await api.get("/api/orders", params={"since": later})).json()["total"] == 0
        assert (await api.get("/api/orders", params={"until": later})).json()["total"] == 2
        assert (await api.get(f"/api/orders/{order['id']}")).json()["lines"] == order["lines"]
        assert (await api.get("/api/orders/99999")).status_code == 404


async def test_the_audit_log_and_sign_in_out(gateway) -> None:
    async with operator(gateway, "carol") as api:
        me = await api.get("/api/auth/me")
        assert me.json() == {"operator": "carol"}
        wrong = await api.post("/api/auth/login", json={"operator": "mallory", "token": "guess"})
        assert wrong.status_code == 401
        log = (await api.get("/api/audit")).json()
        assert [(a["operator"], a["action"]) for a in log[:2]] == [
            ("mallory", "login_failed"),
            ("carol", "login"),
        ]
        assert (await api.get("/api/audit", params={"operator": "carol"})).json()[0]["action"] == (
            "login"
        )
        assert (await api.post("/api/auth/logout")).status_code == 200
        assert (await api.get("/api/auth/me")).status_code == 401
    async with operator(gateway, "carol") as api:
        actions = [a["action"] for a in (await api.get("/api/audit")).json()]
        assert actions[:3] == ["login", "logout", "login_failed"]


async def test_calls_a_killed_gateway_left_open_are_ended_when_it_comes_back(gateway) -> None:
    calls = gateway.gateway.calls
    db, engine, swarm = gateway.services.db, gateway.services.engine, gateway.services.swarm
    # A call that never closes: its gateway was killed mid-call. The caller's browser
    # holds their cookie from before.
    await caller_cookie(gateway.ws, "web-lost")
    lost = await calls.open("web-lost", Channel.WEB)
    await lost.session.complete("Do you have any ibuprofen?")
    calls._by_id.clear()
    calls._by_client.clear()
    # The caller rang again (on another gateway, say) before it came back.
    await text_call(gateway, "web-lost", "what are your opening hours?")
    # Another instance's open call is none of this one's business.
    other = LiveCalls(db, engine, swarm, dataclasses.replace(calls.options, instance="elsewhere"))
    elsewhere = await other.open("web-elsewhere", Channel.WEB)
    restarted = LiveCalls(db, engine, swarm, calls.options)
    assert restarted.end_lost_calls() == 1
    async with operator(gateway) as api:
        row = (await api.get(f"/api/calls/{lost.id}")).json()
        assert row["ended_by"] == "gateway_lost" and row["ended_at"] is not None
        said = [
            m["content"]
            for m in (await api.get(f"/api/calls/{lost.id}/transcript")).json()["messages"]
        ]
        assert any("ibuprofen" in s.lower() for s in said)
        assert not any("opening hours" in s for s in said)  # the next call's words
        assert (await api.get(f"/api/calls/{elsewhere.id}")).json()["ended_at"] is None
    assert restarted.end_lost_calls() == 0


async def test_a_call_whose_end_the_database_refused_is_settled_once_it_is_back(
    gateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed write at the hang-up left the call live in the console until a restart."""
    calls = gateway.gateway.calls
    monkeypatch.setattr(live, "SETTLE_RETRY_S", 0.0)
    real, away = calls._finish, [True, True]

    def finish(*args):  # type: ignore[no-untyped-def]
        if away:
            away.pop()
            raise OperationalError("UPDATE", {}, Exception("database is locked"))
        return real(*args)

    monkeypatch.setattr(calls, "_finish", finish)
    phone = await calls.open("+15550198", Channel.SIP)
    await phone.session.emit(gateway.services.greeting)
    await calls.close(phone, ended_by="caller")
    await asyncio.gather(*calls._settling)
    async with operator(gateway) as api:
        row = (await api.get(f"/api/calls/{phone.id}")).json()
    assert not row["live"] and row["ended_by"] == "caller" and row["outcome"] is not None
