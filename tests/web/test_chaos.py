"""Faults during calls: the caller is answered politely, nothing committed is lost,
and the fault is counted in /metrics (issue 23's chaos cases, short form).

The model here is an OpenAI-compatible endpoint that is down (nothing listens on its
port) or that answers far too late (it reads the request and holds it). The disk is
a filesystem too small for the recordings, under a real `callswarm serve`.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from sqlmodel import Session, select

from callswarm.app import build_services
from callswarm.serve import listen
from callswarm.settings import Settings
from models.tables import MessageRow
from tests.test_cli import base_env
from tests.voice.speech import piper, silence

from .client import Caller, caller, typed
from .conftest import start, stop
from .console import Sse, operator, text_call

REPO = Path(__file__).resolve().parents[2]
# A question only a model answers (no rule of code knows it).
ASKED = "Hello there, I'm new in town. What sort of shop are you, exactly?"
INTERNAL = re.compile(r"error|exception|traceback|timeout|connect|refused|http", re.IGNORECASE)


@asynccontextmanager
async def gateway_on(tmp_path, stt, tts, base_url: str, deadline: float) -> AsyncIterator:
    services = build_services(
        Settings(
            data_dir=tmp_path,
            provider="openai",
            openai_base_url=base_url,
            openai_api_key="test",
            idle_timeout=None,
            turn_deadline=deadline,
        )
    )
    running, server, task = await start(services, stt, tts)
    try:
        yield running
    finally:
        await stop(running, server, task)


@asynccontextmanager
async def holding_server() -> AsyncIterator[str]:
    """An endpoint that takes each request and answers none (until the test ends)."""
    release = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        await release.wait()
        writer.close()

    sock = listen("127.0.0.1", 0)
    server = await asyncio.start_server(hold, sock=sock)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        release.set()
        server.close()


def closed_port() -> str:
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    return f"http://127.0.0.1:{port}/v1"


async def answered_politely(running, client_id: str) -> None:
    replies = await asyncio.wait_for(
        text_call(running, client_id, ASKED, "What are your opening hours?", ASKED), 60
    )
    first, hours, again = replies
    for reply in (first, again):
        assert reply and not reply.startswith("error"), reply
        assert not INTERNAL.search(reply), reply  # nothing internal is said to a caller
        assert "person" in reply or "another way" in reply, reply  # an offer, not a guess
    assert "open" in hours.lower()  # what code knows is still said
    with Session(running.services.db) as db:
        said = db.exec(
            select(MessageRow.content).where(
                MessageRow.client_id == client_id, MessageRow.role == "user"
            )
        ).all()
    assert said.count(ASKED) == 2  # committed, both times


async def counted(running, pattern: str) -> float:
    await running.gateway.metrics.settled()
    async with operator(running) as api:
        text = (await api.get("/metrics")).text
    return sum(float(m.group(1)) for m in re.finditer(pattern, text))


async def test_the_model_down_callers_get_code_s_words_and_the_fault_is_counted(
    tmp_path, stt, tts
) -> None:
    async with gateway_on(tmp_path, stt, tts, closed_port(), deadline=6.0) as running:
        await answered_politely(running, "web-down")
        failed = r'callswarm_llm_seconds_count\{completion="[^"]+",outcome="failed"\} (\S+)'
        assert await counted(running, failed) >= 2


async def test_a_model_answering_too_late_is_cut_at_the_turn_deadline_and_counted(
    tmp_path, stt, tts
) -> None:
    async with (
        holding_server() as url,
        gateway_on(tmp_path, stt, tts, url, deadline=2.0) as running,
    ):
        await answered_politely(running, "web-late")
        # Each turn cut at its deadline is a fallback of code's, counted as such.
        cut = r'callswarm_rescues_total\{reason="turn_budget",strategy="fallback"\} (\S+)'
        assert await counted(running, cut) >= 2


TOKEN = "chaos-operator-token"


@asynccontextmanager
async def gateway_with_full_disk(tmp_path) -> AsyncIterator[str]:
    """`callswarm serve` whose recordings folder is a 24 KB filesystem of its own (a
    tmpfs mounted in a user namespace, so no root is needed): full within a second."""
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    env = base_env(tmp_path) | {"CALLSWARM_OPERATOR_TOKEN": TOKEN}
    mount = 'mount -t tmpfs -o size=24k tmpfs "$0" && exec "$@"'
    log = tmp_path / "gateway.log"
    with log.open("wb") as errors:
        process = await asyncio.create_subprocess_exec(
            *("unshare", "-rm", "sh", "-c", mount, str(recordings), sys.executable),
            *("-m", "callswarm", "serve", "--port", "0", "--provider", "scripted"),
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
            env=env,
        )
    assert process.stdout is not None
    try:
        lines: list[str] = []
        while not lines or "serving on" not in lines[-1]:
            line = (await asyncio.wait_for(process.stdout.readline(), 120)).decode()
            assert line, f"the gateway exited: {log.read_text()[-3000:]}"
            lines.append(line)
        yield re.search(r"serving on (http://[\d.:]+)/", "".join(lines)).group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(process.wait(), 60)
        except TimeoutError:
            process.kill()
            await process.wait()


async def test_a_full_recordings_disk_costs_the_recording_only(tmp_path, tts) -> None:
    async with gateway_with_full_disk(tmp_path) as url:
        ws_url = url.replace("http://", "ws://")
        signed = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx.AsyncClient(base_url=url, headers=signed, timeout=60) as api,
            api.stream("GET", "/api/events") as stream,
        ):
            events = Sse(stream)
            for client in ("web-full-1", "web-full-2"):  # the second: the gateway goes on
                async with caller(ws_url, client) as ws:
                    c = Caller(ws)
                    await c.greeted()
                    await c.speak(piper("What are your opening hours?") + silence(0.3))
                    assert "open" in (await c.until("reply_done", within=120))["text"].lower()
                ended = await events.until("call_ended")
                assert ended[-1]["data"].get("recording_lost") is True, ended[-1]
            calls = (await api.get("/api/calls", params={"caller": "web-full-1"})).json()
            [call] = calls["items"]
            assert call["recording"] is None
            said = (await api.get(f"/api/calls/{call['id']}/transcript")).json()["messages"]
            assert "What are your opening hours" in " ".join(m["content"] for m in said)
            metrics = (await api.get("/metrics")).text
    lost = re.search(r"^callswarm_recordings_lost_total (\S+)$", metrics, re.MULTILINE)
    assert lost is not None and float(lost.group(1)) >= 1, metrics[-2000:]
    assert "Traceback" not in (tmp_path / "gateway.log").read_text()


@asynccontextmanager
async def private_postgres() -> AsyncIterator[tuple[str, Callable[[str], None]]]:
    """A PostgreSQL server of this test's own (scripts/test-postgres on a free port and
    folder), and a way to stop and start it: the shared one serves the other tests."""
    folder = Path(tempfile.mkdtemp(prefix="callswarm-chaos-pg-"))
    port = listen("127.0.0.1", 0)
    env = os.environ | {
        "CALLSWARM_TEST_PG_PORT": str(port.getsockname()[1]),
        "CALLSWARM_TEST_PG_DIR": str(folder),
    }
    port.close()

    def server(action: str) -> str:
        done = subprocess.run(
            [str(REPO / "scripts/test-postgres"), action],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    url = await asyncio.to_thread(server, "start")
    try:
        yield url, server
    finally:
        await asyncio.to_thread(server, "stop")
        shutil.rmtree(folder, ignore_errors=True)


async def test_postgresql_restarted_mid_call_loses_no_committed_message(tmp_path, stt, tts):
    async with private_postgres() as (url, server):
        services = build_services(
            Settings(data_dir=tmp_path, database_url=url, provider="scripted", idle_timeout=None)
        )
        running, uvicorn_server, task = await start(services, stt, tts)
        lines = ["Do you have any ibuprofen?", "What are your opening hours?", "Where are you?"]
        try:
            async with typed(running.ws, "web-restart") as ws:
                await ws.send(lines[0])
                assert "Ibuprofen" in await asyncio.wait_for(ws.recv(), 60)
                await asyncio.to_thread(server, "stop")  # mid-call: the database goes away
                await ws.send(lines[1])
                down = await asyncio.wait_for(ws.recv(), 60)
                assert "open" in down.lower() and not INTERNAL.search(down), down
                await asyncio.to_thread(server, "start")  # and comes back
                await ws.send(lines[2])
                back = await asyncio.wait_for(ws.recv(), 60)
                assert "River Street" in back, back
            async with operator(running) as api:
                calls = (await api.get("/api/calls", params={"caller": "web-restart"})).json()
                [call] = calls["items"]
                said = (await api.get(f"/api/calls/{call['id']}/transcript")).json()["messages"]
                metrics = (await api.get("/metrics")).text
        finally:
            await stop(running, uvicorn_server, task)
    users = [m["content"] for m in said if m["role"] == "user"]
    assert users == lines  # the words said while it was down were kept, and saved
    assert call["ended_at"] is not None
    errors = r'callswarm_errors_total\{where="[^"]*"\} (\S+)'
    assert sum(float(m.group(1)) for m in re.finditer(errors, metrics)) >= 1, metrics[-1500:]
