"""Who may read what: operators sign in; callers reach only their own conversation."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import httpx
import pytest
from sqlmodel import Session
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from callswarm.app import build_services
from callswarm.settings import Settings
from models.calls import CallRow, Channel
from web.auth import COOKIE, MAX_FAILURES, OperatorAuth

from .client import Caller, caller
from .conftest import start, stop
from .console import operator, text_call

PUBLIC = {
    "/api/ping",
    "/api/ready",
    "/api/info",
    "/api/auth/login",
    "/api/v1/caller",
    "/",
    "/console",
}


def operator_routes(app) -> list[tuple[str, str]]:
    """Every documented route but the public ones, with its parameters filled in."""
    out = []
    for path, methods in app.openapi()["paths"].items():
        if path in PUBLIC:
            continue
        path = path.replace("{call_id}", "0" * 32)
        out.extend((method.upper(), re.sub(r"\{[a-z_]+\}", "1", path)) for method in methods)
    return out


async def test_every_operator_route_needs_credentials(gateway) -> None:
    from web import create_app

    routes = operator_routes(create_app(gateway.gateway))
    assert len(routes) >= 20
    auth = gateway.gateway.auth
    forged = auth.issue("mallory").rsplit("|", 1)[0] + "|AAAA"
    stranger = OperatorAuth(token="other", password=None, secret=b"another gateway's secret")
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        for method, path in routes:
            for headers in (
                {},
                {"Authorization": "Bearer not-the-token"},
                {"Cookie": f"{COOKIE}={forged}"},
                {"Cookie": f"{COOKIE}={stranger.issue('mallory')}"},
                {"Cookie": f"{COOKIE}={auth.issue('mallory', now=0)}"},  # long expired
            ):
                response = await client.request(method, path, headers=headers, json={"text": "x"})
                assert response.status_code == 401, (method, path, headers, response.text)
        # The token itself works as a Bearer header, for scripts.
        ok = await client.get("/api/calls", headers={"Authorization": f"Bearer {auth.token}"})
        assert ok.status_code == 200
        # The OpenAPI document lists the console's routes (and no secrets).
        schema = (await client.get("/openapi.json")).json()
        assert "/api/calls/{call_id}/transcript" in schema["paths"]
        assert auth.token not in str(schema)


async def test_password_sign_in_and_guessing_is_throttled(gateway) -> None:
    gateway.gateway.auth.password = "correct horse"
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        good = await client.post(
            "/api/auth/login", json={"operator": "dan", "password": "correct horse"}
        )
        assert good.status_code == 200 and COOKIE in good.cookies
        cookie = good.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert (await client.get("/api/auth/me")).json() == {"operator": "dan"}
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        for _ in range(MAX_FAILURES):
            bad = await client.post("/api/auth/login", json={"password": "guess"})
            assert bad.status_code == 401
        blocked = await client.post(
            "/api/auth/login", json={"operator": "dan", "password": "correct horse"}
        )
        assert blocked.status_code == 429
        bad_name = await client.post("/api/auth/login", json={"operator": "<script>", "token": "x"})
        assert bad_name.status_code in (422, 429)


async def test_a_caller_cannot_reach_another_callers_conversation(gateway) -> None:
    await text_call(gateway, "web-alice", "I'd like loratadine")
    # A phone caller's session is keyed by their number: no browser may open it.
    await text_call(gateway, "web-bob", "what are your opening hours?")
    calls = gateway.gateway.calls
    phone = await calls.open("+15550100", Channel.SIP)
    await phone.session.emit("Your prescription is ready, Mr Smith.")
    await calls.close(phone, ended_by="caller")
    for client_id in ("+15550100", "15550100", "sip-anon-0123456789ab", "sip-bob"):
        for path in (f"/ws/voice/{client_id}", f"/api/v1/session/{client_id}"):
            await refused(f"{gateway.ws}{path}")
    # Bob's socket shows Bob's conversation and nothing of Alice's or the phone caller's.
    async with caller(gateway.ws, "web-bob") as ws:
        ready = await Caller(ws).until("ready")
        texts = " ".join(m["text"] for m in ready["history"])
        assert "opening hours" in texts
        assert "loratadine" not in texts.lower() and "prescription" not in texts
    # A caller's connection is no credential for the operators' API.
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        assert (await client.get("/api/calls")).status_code == 401
        assert (await client.get("/api/search", params={"q": "loratadine"})).status_code == 401


@pytest.mark.parametrize(
    "path",
    [
        "/ws/voice/..%2F..%2Fetc%2Fpasswd",
        "/ws/voice/..",
        "/api/v1/session/..%2Fcallswarm.db",
        "/api/v1/session/a%2F..%2F..%2Fx",
    ],
)
async def test_client_ids_cannot_walk_paths(gateway, path) -> None:
    await refused(f"{gateway.ws}{path}")


async def refused(url: str) -> None:
    """The socket is refused: before the upgrade (403, or 404 from the router)."""
    with pytest.raises(InvalidStatus) as rejected:
        async with connect(url) as ws:
            await ws.recv()
    assert rejected.value.response.status_code in (403, 404), url


async def test_call_ids_and_recordings_cannot_walk_paths(gateway, tmp_path) -> None:
    secret = tmp_path / "callswarm.db"
    assert secret.is_file()
    with Session(gateway.services.db) as db:
        # A row whose file name was tampered with still never leaves the recordings folder.
        db.add(
            CallRow(
                id="a" * 32,
                client_id="web-x",
                channel="web",
                started_at=datetime.now(UTC),
                recording="../callswarm.db",
            )
        )
        db.commit()
    async with operator(gateway) as api:
        for path in (
            "/api/calls/..%2F..%2Fcallswarm.db/recording",
            "/api/calls/%2E%2E/recording",
            "/api/calls/" + "a" * 32 + "/recording",
            "/api/calls/..%2Fcallswarm.db/transcript",
            "/api/calls/..%2F..%2Fetc%2Fpasswd/events",
            "/static/..%2Fcallswarm.db",
            "/static/../../callswarm.db",
        ):
            response = await api.get(path)
            assert response.status_code == 404, (path, response.status_code)
            assert b"SQLite" not in response.content


@pytest.mark.databases
async def test_gateways_sharing_a_database_share_sign_outs_and_throttling(
    tmp_path, database_url, stt, tts
) -> None:
    def settings(name: str) -> Settings:
        return Settings(
            data_dir=tmp_path / name,
            database_url=database_url,
            provider="scripted",
            idle_timeout=None,
            operator_token="shared-token",
            operator_secret="shared-secret-shared-secret-shared",
        )

    one = await start(build_services(settings("one")), stt, tts)
    two = await start(build_services(settings("two")), stt, tts)
    try:
        (first, _, _), (second, _, _) = one, two
        async with operator(first, "erin") as on_first:
            cookie = on_first.cookies[COOKIE]
            async with httpx.AsyncClient(base_url=second.url) as on_second:
                on_second.cookies.set(COOKIE, cookie)
                assert (await on_second.get("/api/auth/me")).json() == {"operator": "erin"}
                assert (await on_first.post("/api/auth/logout")).status_code == 200
                # Signed out on the first gateway: the second refuses the cookie too.
                assert (await on_second.get("/api/auth/me")).status_code == 401
        async with (
            httpx.AsyncClient(base_url=first.url) as on_first,
            httpx.AsyncClient(base_url=second.url) as on_second,
        ):
            for _ in range(MAX_FAILURES):
                bad = await on_first.post("/api/auth/login", json={"token": "guess"})
                assert bad.status_code == 401
            # Guessing moved to the other gateway: still throttled.
            moved = await on_second.post("/api/auth/login", json={"token": "shared-token"})
            assert moved.status_code == 429
    finally:
        await stop(*two)
        await stop(*one)
