"""Hostile HTTP: schemathesis makes requests from the gateway's own OpenAPI document,
signed in and not, against every route; none may answer with a server error.

The gateway runs as `make run` runs it (uvicorn, the scripted provider, a database
with calls in it, so that routes with ids find something), and the requests are made
from a worker thread: schemathesis is synchronous, and the gateway shares this loop.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error

from .console import text_call

pytestmark = pytest.mark.databases

# Requests in all, over every operation; each is one generated case.
CASES = 3200


def fuzz(url: str, token: str) -> tuple[Counter[str], list[str]]:
    """Every operation's share of CASES, half signed in; the statuses seen, and what
    failed (a 5xx, or a response that broke the transport)."""
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    per_operation = max(1, CASES // len(operations))
    statuses: Counter[str] = Counter()
    failures: list[str] = []
    signed = {"Authorization": f"Bearer {token}"}

    def checker(operation):
        label, streams = operation.label, operation.path.endswith("/events")

        @given(case=operation.as_strategy(), signed_in=st.booleans())
        @settings(
            max_examples=per_operation,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def check(case, signed_in: bool) -> None:
            headers = signed if signed_in else None
            if streams:
                # An accepted event stream never ends: its status is all there is to see.
                kwargs = case.as_transport_kwargs(base_url=url, headers=headers)
                with requests.request(**kwargs, stream=True, timeout=30) as response:
                    status = response.status_code
                statuses[f"{status // 100}xx"] += 1
                statuses["cases"] += 1
                if status >= 500:
                    failures.append(f"{label}: {status}")
                return
            response = case.call(base_url=url, headers=headers, timeout=30)
            statuses[f"{response.status_code // 100}xx"] += 1
            statuses["cases"] += 1
            try:
                case.validate_response(response, checks=[not_a_server_error])
            except Exception as exc:
                failures.append(f"{label}: {response.status_code} {exc}"[:300])

        return check

    for operation in operations:
        checker(operation)()
    return statuses, failures


async def test_what_the_fuzzer_found_first_is_refused_not_a_server_error(gateway) -> None:
    """A token with an accent (hmac.compare_digest raised) and an id past 64 bits (the
    SQLite driver raised): both were 500s."""
    import httpx

    token = gateway.gateway.auth.token
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        accent = await client.post("/api/auth/login", json={"token": "clé"})
        assert accent.status_code == 401
        signed = {"Authorization": f"Bearer {token}"}
        for path in ("/api/orders/99999999999999999999", "/api/calls?offset=99999999999999999999"):
            assert (await client.get(path, headers=signed)).status_code == 422, path
        odd = {"Authorization": "Bearer clé".encode()}
        assert (await client.get("/api/calls", headers=odd)).status_code == 401
        # JSON nested deeper than Python's parser goes (it took the voice socket down).
        deep = "[" * 100_000 + "]" * 100_000
        for path in ("/api/v1/caller", "/api/auth/login", f"/api/calls/{'0' * 32}/say"):
            response = await client.post(
                path, content=deep, headers={**signed, "Content-Type": "application/json"}
            )
            assert 400 <= response.status_code < 500, (path, response.status_code)


async def test_no_request_from_the_openapi_document_gets_a_server_error(gateway) -> None:
    await text_call(gateway, "web-fuzzed", "Do you have any ibuprofen?", "two boxes please")
    token = gateway.gateway.auth.token
    statuses, failures = await asyncio.to_thread(fuzz, gateway.url, token)
    assert failures == []
    assert statuses["cases"] >= 2000, statuses
    # Both sides were reached: refusals, and answers to signed-in requests.
    assert statuses["2xx"] > 100 and statuses["4xx"] > 100, statuses
