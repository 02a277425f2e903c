"""A browser caller's session cannot be borrowed: only the browser that holds the
caller's signed cookie resumes their conversation (web/callers.py, issue 23)."""

from __future__ import annotations

import os
import stat

import httpx
import pytest
from sqlmodel import Session, select
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from callswarm.serve import caller_keys
from callswarm.settings import Settings
from models.tables import MessageRow
from web.callers import COOKIE, FORGET_PAST, MAX_REFUSED, CallerKeys, _address

from .client import Caller, caller, caller_cookie, typed
from .console import text_call

ALICE = "My name is Alice Jones, and I'd like loratadine for my hay fever."


def messages_of(gateway, client_id: str) -> list[str]:
    with Session(gateway.services.db) as db:
        rows = db.exec(select(MessageRow).where(MessageRow.client_id == client_id)).all()
        return [row.content for row in rows]


async def test_a_browser_that_knows_only_a_callers_id_gets_a_new_empty_session(gateway) -> None:
    await text_call(gateway, "web-alice", ALICE)
    alice = await caller_cookie(gateway.ws, "web-alice")
    bob = await caller_cookie(gateway.ws, "web-bob")
    strangers = {
        "no cookie": {},
        "another caller's cookie": {"Cookie": f"{COOKIE}={bob}"},
        "a forged signature": {"Cookie": f"{COOKIE}={alice.rsplit('|', 1)[0]}|AAAA"},
        "another secret's cookie": {
            "Cookie": f"{COOKIE}={CallerKeys(secret=b'x' * 32).issue('web-alice')}"
        },
        "an expired cookie": {
            "Cookie": f"{COOKIE}={gateway.gateway.callers.issue('web-alice', now=0)}"
        },
    }
    given = set()
    for how, headers in strangers.items():
        async with connect(f"{gateway.ws}/ws/voice/web-alice", additional_headers=headers) as ws:
            ready = await Caller(ws).until("ready")
        assert ready["client_id"] not in ("web-alice", "web-bob"), how
        assert ready["resumed"] is False and ready["history"] == [], how
        given.add(ready["client_id"])
    assert len(given) == len(strangers)  # each a new caller
    # On the text socket, a stranger's words go to a new session and never into hers.
    async with connect(f"{gateway.ws}/api/v1/session/web-alice") as ws:
        await ws.send("What did I just ask you for?")
        reply = await ws.recv()
    assert "loratadine" not in reply.lower() and "alice" not in reply.lower()
    assert ALICE in messages_of(gateway, "web-alice")
    assert not any("What did I just ask" in m for m in messages_of(gateway, "web-alice"))
    # Asking the gateway for her id by name gets another one, and asking again (as the
    # page does before each connection) keeps that one: the asker's own conversation.
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        granted = await client.post("/api/v1/caller", json={"client_id": "web-alice"})
        own = granted.json()["client_id"]
        assert own != "web-alice"
        again = await client.post("/api/v1/caller", json={"client_id": "web-alice"})
        assert again.json()["client_id"] == own
    # Her own browser still resumes her conversation, and hears it back in `ready`.
    async with caller(gateway.ws, "web-alice") as ws:
        ready = await Caller(ws).until("ready")
    assert ready["client_id"] == "web-alice" and ready["resumed"] is True
    assert ALICE in [m["text"] for m in ready["history"]]


async def test_an_address_that_keeps_asking_for_others_ids_is_shut_out(gateway) -> None:
    await text_call(gateway, "web-alice", "What are your opening hours?")
    for _ in range(MAX_REFUSED):
        async with connect(f"{gateway.ws}/api/v1/session/web-alice") as ws:
            await ws.send("hello")
            await ws.recv()
    for path in ("/api/v1/session/web-alice", "/ws/voice/web-alice", "/ws/voice/web-new"):
        with pytest.raises(InvalidStatus) as shut:
            async with connect(f"{gateway.ws}{path}"):
                pass
        assert shut.value.response.status_code == 403, path
    # Nor is it told any more whether an id it asks the gateway for is held.
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        free = await client.post("/api/v1/caller", json={"client_id": "web-never-used"})
    assert free.json()["client_id"] != "web-never-used"
    # The caller whose id was tried, with her own cookie, is not held up by the guesser.
    async with typed(gateway.ws, "web-alice") as ws:
        await ws.send("Where are you?")
        assert "River Street" in await ws.recv()


async def test_an_id_asked_for_is_given_once_and_never_replaces_a_browsers_own(gateway) -> None:
    """A link or a script cannot put a caller on an id whose cookie someone else holds."""
    async with (
        httpx.AsyncClient(base_url=gateway.url) as first,
        httpx.AsyncClient(base_url=gateway.url) as second,
    ):
        asked = {"client_id": "web-trap"}
        assert (await first.post("/api/v1/caller", json=asked)).json()["client_id"] == "web-trap"
        # Nobody has talked on it yet; a second asker still gets another id.
        other = (await second.post("/api/v1/caller", json=asked)).json()["client_id"]
        assert other != "web-trap"
        # A browser that holds an id keeps it, whatever free id it asks for.
        kept = await second.post("/api/v1/caller", json={"client_id": "web-free"})
        assert kept.json()["client_id"] == other
        assert (await second.post("/api/v1/caller")).json()["client_id"] == other


def test_a_cookie_names_one_caller_and_only_its_secret_signs_it() -> None:
    keys = CallerKeys(secret=b"s" * 32, max_age_s=60)
    cookie = keys.issue("web-alice", now=1000)
    assert keys.verify(cookie, now=1030) == "web-alice"
    assert CallerKeys(secret=b"s" * 32).verify(cookie, now=1030) == "web-alice"  # a peer
    assert keys.verify(cookie, now=1061) is None  # expired
    assert CallerKeys(secret=b"t" * 32).verify(cookie, now=1030) is None
    name, expires, signature = cookie.split("|")
    for bad in (
        f"web-bob|{expires}|{signature}",  # another id under Alice's signature
        f"{name}|{int(expires) + 3600}|{signature}",  # a later expiry
        f"{name}|{expires}",
        f"+15550100|{expires}|{signature}",  # a phone caller's number
        "",
        "||",
        f"{name}|{expires}|é{signature}",  # not ASCII: refused, not a server error
    ):
        assert keys.verify(bad, now=1030) is None, bad
    assert keys.mint() != keys.mint() and len(keys.mint()) == len("web-") + 32


def test_socket_opens_per_address_are_limited_over_a_window() -> None:
    keys = CallerKeys(max_opens=3)
    assert [keys.opened("10.0.0.1", now=t) for t in (0, 1, 2, 3)] == [True, True, True, False]
    assert keys.opened("10.0.0.2", now=3)  # another address has its own count
    assert keys.opened("10.0.0.1", now=100)  # a minute later
    for t in range(MAX_REFUSED):
        keys.refused("10.0.0.3", now=t)
    assert keys.throttled("10.0.0.3", now=MAX_REFUSED)
    assert not keys.throttled("10.0.0.3", now=MAX_REFUSED + 400)
    # Many addresses: the quiet ones are forgotten, those whose window was just emptied too.
    for n in range(FORGET_PAST + 1):
        keys.refused(f"10.1.{n // 256}.{n % 256}", now=0)
    assert not keys.throttled("10.1.0.0", now=1000)  # empties that address's window
    assert keys.refused("10.2.0.1", now=1000)
    assert len(keys._refused) == 1
    # One IPv6 machine's addresses count as one.
    assert _address("2001:db8::1") == _address("2001:db8::ffff:2") != _address("2001:db9::1")
    assert _address("127.0.0.1") == "127.0.0.1"
    assert _address("::ffff:10.0.0.7") == "10.0.0.7" != _address("::ffff:10.0.0.8")


def test_the_signing_key_survives_a_restart_and_is_private(tmp_path) -> None:
    first = caller_keys(Settings(data_dir=tmp_path))
    again = caller_keys(Settings(data_dir=tmp_path))
    assert first.secret == again.secret and len(first.secret) == 32
    assert again.verify(first.issue("web-alice")) == "web-alice"
    mode = os.stat(tmp_path / "caller-secret").st_mode
    assert stat.S_IMODE(mode) == 0o600
    shared = caller_keys(Settings(data_dir=tmp_path / "other", caller_secret="shared"))
    assert shared.secret == b"shared"
