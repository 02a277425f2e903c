"""Two gateways on one PostgreSQL database, behind kamailio's dispatcher, on loopback.

The kamailio configuration is the one docker/compose.yaml ships. The gateways are
`callswarm serve --sip` processes on the scripted model; the callers are sipp.
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from sqlmodel import Session, col, select

from models import make_engine
from models.calls import CallRow
from models.tables import MessageRow
from tests.test_cli import base_env
from tests.web.console import Sse

from ..conftest import ONLY_POSTGRESQL, worker_ports
from .sipp import SippRun, free_udp_port, scenario, sipp
from .test_kamailio import MODULES, Kamailio, running
from .test_sipp_calls import caller_turns

pytestmark = [pytest.mark.databases, ONLY_POSTGRESQL]

CONFIG = Path(__file__).parents[2] / "docker" / "kamailio" / "kamailio.cfg"
TOKEN, SECRET = "cluster-test-token", "cluster-test-secret-cluster-test-secret"
# A scripted reply is spoken in well under LISTEN_S. Hanging up sooner (BRIEF_S) keeps
# the reply's words up to where it was cut, which is all some calls need.
LISTEN_S, BRIEF_S = 6.0, 2.5
T = TypeVar("T")


@dataclass
class Instance:
    name: str
    process: asyncio.subprocess.Process
    url: str
    sip_port: int
    log: Path


async def start_instance(
    name: str, tmp_path: Path, database_url: str, rtp: tuple[int, int]
) -> Instance:
    sip_port = free_udp_port()
    folder = tmp_path / name
    folder.mkdir()
    env = base_env(folder) | {
        "CALLSWARM_DATABASE_URL": database_url,
        "CALLSWARM_INSTANCE": name,
        "CALLSWARM_OPERATOR_TOKEN": TOKEN,
        "CALLSWARM_OPERATOR_SECRET": SECRET,
        "CALLSWARM_RTP_PORT_LOW": str(rtp[0]),
        "CALLSWARM_RTP_PORT_HIGH": str(rtp[1]),
        # A peer is judged dead after 3 s without a beat, not production's 30.
        "CALLSWARM_PEER_BEAT_S": "0.5",
        "CALLSWARM_PEER_LOST_AFTER_S": "3",
    }
    log = folder / "gateway.log"
    with log.open("wb") as errors:  # a file, not a pipe nobody reads while calls run
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "callswarm", "serve", "--port", "0", "--provider", "scripted"),
            *("--sip", "--sip-port", str(sip_port)),
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
            env=env,
        )
    assert process.stdout is not None
    lines = []
    # The web serves first; the phone line opens once the voice is loaded.
    while not lines or "answering SIP" not in lines[-1]:
        line = (await asyncio.wait_for(process.stdout.readline(), 120)).decode()
        assert line, f"{name} exited: {log.read_text()[-3000:]}"
        lines.append(line)
    url = re.search(r"serving on (http://[\d.:]+)/", "".join(lines)).group(1)
    return Instance(name, process, url, sip_port, log)


async def stop_instance(instance: Instance) -> None:
    if instance.process.returncode is None:
        instance.process.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(instance.process.wait(), 60)
        except TimeoutError:
            instance.process.kill()
            await instance.process.wait()


@pytest.fixture
async def cluster(tmp_path, database_url) -> AsyncIterator[dict[str, Instance]]:
    # Started one after the other: the first migrates the new database.
    a = await start_instance("a", tmp_path, database_url, worker_ports(25000, 25999))
    b = await start_instance("b", tmp_path, database_url, worker_ports(26000, 26999))
    try:
        yield {"a": a, "b": b}
    finally:
        for instance in (a, b):
            await stop_instance(instance)


@pytest.fixture
async def dispatcher(tmp_path, cluster) -> AsyncIterator[Kamailio]:
    [modules] = MODULES
    port = free_udp_port()
    gateways = tmp_path / "gateways.list"
    gateways.write_text(
        "".join(f"1 sip:127.0.0.1:{i.sip_port} 0 0 instance={n}\n" for n, i in cluster.items())
    )
    defines = (f"LISTEN=udp:127.0.0.1:{port}", f'MODULES="{modules}"', f'GATEWAYS="{gateways}"')
    async with running(CONFIG, port, tmp_path, *(x for d in defines for x in ("-A", d))) as server:
        yield server


@dataclass
class Watch:
    """One console's SSE stream, read in the background into `events`."""

    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def read(self, sse: Sse) -> None:
        while True:
            [event] = await sse.take(1)
            async with self.changed:
                self.events.append(event)
                self.changed.notify_all()

    async def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async with self.changed:
            await asyncio.wait_for(
                self.changed.wait_for(lambda: any(predicate(e) for e in self.events)), 120
            )
            return next(e for e in self.events if predicate(e))

    async def calls(self, predicate: Callable[[dict[str, Any]], bool], n: int) -> None:
        """Until `n` different calls have an event `predicate` takes."""

        def enough() -> bool:
            return len({e["call_id"] for e in self.events if predicate(e)}) >= n

        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(enough), 120)

    def of(self, call_id: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["call_id"] == call_id]


@asynccontextmanager
async def watching(instance: Instance, after: int | None = None) -> AsyncIterator[Watch]:
    """A console's event stream on `instance`, from the journal id `after` if given."""
    watch = Watch()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if after is not None:
        headers["Last-Event-ID"] = str(after)
    async with (
        httpx.AsyncClient(base_url=instance.url, headers=headers, timeout=60) as api,
        api.stream("GET", "/api/events") as response,
    ):
        assert response.status_code == 200
        reader = asyncio.get_running_loop().create_task(watch.read(Sse(response)))
        try:
            yield watch
        finally:
            reader.cancel()


@pytest.fixture
async def console(cluster) -> AsyncIterator[Watch]:
    """Instance a's console, watching every call of the cluster."""
    async with watching(cluster["a"]) as watch:
        yield watch


def calls_of(database_url: str, caller: str | None = None) -> list[CallRow]:
    engine = make_engine(database_url, migrate=False)
    try:
        with Session(engine) as db:
            query = select(CallRow).order_by(col(CallRow.started_at))
            if caller is not None:
                query = query.where(CallRow.caller == caller)
            return list(db.exec(query).all())
    finally:
        engine.dispose()


def messages_of(database_url: str, client_id: str) -> list[MessageRow]:
    engine = make_engine(database_url, migrate=False)
    try:
        with Session(engine) as db:
            query = select(MessageRow).where(MessageRow.client_id == client_id)
            return list(db.exec(query.order_by(col(MessageRow.seq))).all())
    finally:
        engine.dispose()


async def phone(
    tts,
    tmp_path: Path,
    kamailio: Kamailio,
    number: str,
    lines: list[str],
    listen_s: float = LISTEN_S,
    **kw,
):
    folder = tmp_path / f"call-{number}-{uuid.uuid4().hex[:6]}"
    folder.mkdir()
    actions = caller_turns(tts, folder, "PCMU", lines, listen_s=listen_s)
    # The gateway's audio goes to a port nobody reads: these tests look at the records.
    call = scenario(folder, free_udp_port(), number, actions)
    return await sipp(call, f"127.0.0.1:{kamailio.port}", **kw)


async def test_two_gateways_share_calls_consoles_and_conversations_and_survive_a_kill(
    cluster, dispatcher, console, tts, tmp_path, database_url
) -> None:
    """One test, in the order a deployment lives it: the gateways' start-up (two serve
    processes, kamailio) is the most expensive part, paid once."""
    await calls_spread_and_one_console_shows_them_all(
        dispatcher, console, tts, tmp_path, database_url
    )
    await killing_a_gateway_mid_call_loses_no_committed_message(
        cluster, dispatcher, console, tts, tmp_path, database_url
    )


async def calls_spread_and_one_console_shows_them_all(
    dispatcher, console, tts, tmp_path, database_url
) -> None:
    # One caller, three calls in a row: round robin sends them a, b, a (or b, a, b).
    lines = [
        ["I would like two boxes of paracetamol please."],
        ["Do you have any ibuprofen?"],
        ["That's all, thank you."],
    ]
    for said in lines:
        # The last call's read-back is checked word for word: that one is heard out.
        listen = LISTEN_S if said is lines[-1] else BRIEF_S
        run = await phone(tts, tmp_path, dispatcher, "+15550301", said, listen)
        assert run.returncode == 0, run.output
    # sipp is done when its BYE is answered; the gateway records the end after that. Its
    # console event says it is recorded (a clean run once read the third call unended).
    await console.calls(
        lambda e: e["kind"] == "call_ended" and e["client_id"] == "+15550301", len(lines)
    )
    calls = calls_of(database_url, "+15550301")
    assert [c.ended_by for c in calls] == ["caller"] * 3
    where = [c.instance for c in calls]
    assert sorted(set(where)) == ["a", "b"] and where[0] == where[2] != where[1], where
    # Instance a's console saw every call, b's included, from start to end, in one stream.
    for call in calls:
        events = console.of(call.id)
        assert [e["kind"] for e in events][0] == "call_started"
        assert events[0]["data"]["instance"] == call.instance
        await console.until(lambda e, id=call.id: e["call_id"] == id and e["kind"] == "call_ended")
    ids = [e["id"] for e in console.events]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    # The session moved with the caller: one conversation, every message kept, in order,
    # though each call ended on another gateway than the one before.
    messages = messages_of(database_url, "+15550301")
    seqs = [m.seq for m in messages]
    assert seqs == sorted(set(seqs))
    said = [m.content.lower() for m in messages if m.role == "user"]
    assert [any(w in s for s in said) for w in ("paracetamol", "ibuprofen", "all")] == [True] * 3
    replies = [m.content for m in messages if m.role == "assistant" and m.content]
    # The third call, back on the first gateway, went on from what the second one left:
    # the sales agent it had moved to reads the order back.
    assert "Your order is 2 packs of Paracetamol" in replies[-1], replies[-1]


async def before_it_ends(call: asyncio.Task[SippRun], waiting: Awaitable[T]) -> T:
    """What `waiting` gives, unless the call ends first: then sipp's own account of the
    call is the failure, not a wait that runs out."""
    wait = asyncio.ensure_future(waiting)
    await asyncio.wait({wait, call}, return_when=asyncio.FIRST_COMPLETED)
    if wait.done():
        return wait.result()
    wait.cancel()
    with suppress(asyncio.CancelledError):
        await wait
    run = call.result()  # sipp's own error, if it failed to run
    raise AssertionError(f"the call ended first, rc {run.returncode}:\n{run.output[-3000:]}")


async def killing_a_gateway_mid_call_loses_no_committed_message(
    cluster, dispatcher, console, tts, tmp_path, database_url
) -> None:
    # A long call: the caller speaks, hears the answer, and would speak again.
    lines = ["Do you have any ibuprofen?", "And paracetamol?", "That's all."]
    long_call = asyncio.get_running_loop().create_task(
        phone(tts, tmp_path, dispatcher, "+15550302", lines, max_seconds=90)
    )
    try:
        started = await before_it_ends(
            long_call,
            console.until(lambda e: e["kind"] == "call_started" and e["client_id"] == "+15550302"),
        )
        victim = cluster[started["data"]["instance"]]
        survivor = cluster["b" if victim.name == "a" else "a"]
        # The caller's first words are answered, and the answer committed (the greeting
        # came before them): then the victim dies, mid-call.
        asked = await before_it_ends(
            long_call,
            console.until(lambda e: e["kind"] == "user_message" and e["client_id"] == "+15550302"),
        )
        await before_it_ends(
            long_call,
            console.until(
                lambda e: (
                    e["kind"] == "assistant_message"
                    and e["client_id"] == "+15550302"
                    and e["id"] > asked["id"]
                )
            ),
        )
        victim.process.send_signal(signal.SIGKILL)
        await victim.process.wait()
        # Every message the console was told of is in the database, word for word.
        announced = [
            e["data"]["content"]
            for e in console.of(started["call_id"])
            if e["kind"] in ("user_message", "assistant_message")
        ]
        stored = [m.content for m in messages_of(database_url, "+15550302")]
        assert announced and all(text in stored for text in announced), (announced, stored)
        assert any("ibuprofen" in text.lower() for text in stored)
        # New calls go to the survivor, at once: kamailio moves them on after 3 s silence.
        # Heard out: the survivor answers both at once on a loaded machine, and a caller
        # gone after BRIEF_S left one reply cut before its first word (2.7 s voice to
        # voice in a clean clone's run), which is a speed, not what is checked here.
        runs = await asyncio.gather(
            phone(tts, tmp_path, dispatcher, "+15550303", ["Do you have any ibuprofen?"]),
            phone(tts, tmp_path, dispatcher, "+15550304", ["Do you have any aspirin?"]),
        )
        assert [r.returncode for r in runs] == [0, 0], [r.output for r in runs]
        for number in ("+15550303", "+15550304"):
            [call] = calls_of(database_url, number)
            assert call.instance == survivor.name and call.ended_by == "caller"
            said = messages_of(database_url, number)
            asked = next(i for i, m in enumerate(said) if m.role == "user")  # after the greeting
            assert any(m.role == "assistant" and m.content for m in said[asked + 1 :]), said
        # The survivor saw the victim stop beating and ended its call, for every console
        # (the one on the victim died with it) and in its /metrics.
        async with watching(survivor, after=started["id"]) as survivors:
            ended = await survivors.until(
                lambda e: e["call_id"] == started["call_id"] and e["kind"] == "call_ended"
            )
        assert ended["data"]["ended_by"] == "gateway_lost", ended
        assert ended["data"]["instance"] == victim.name
        [lost] = calls_of(database_url, "+15550302")
        assert lost.ended_by == "gateway_lost" and lost.ended_at is not None
        assert lost.outcome is not None and lost.agents.strip(",")  # settled from what it saved
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=survivor.url, headers=headers) as api:
            metrics = (await api.get("/metrics")).text
        counted = re.search(r"^callswarm_calls_lost_total (\S+)$", metrics, re.MULTILINE)
        assert counted is not None and float(counted.group(1)) == 1, metrics[-3000:]
        # Once, after the kill, not earlier (a live gateway taken for dead).
        judged = re.findall(r"gateway_lost instance=\S+ by=\S+ calls=\d+", survivor.log.read_text())
        assert judged == [f"gateway_lost instance={victim.name} by={survivor.name} calls=1"]
        assert "gateway_judged_lost" not in victim.log.read_text()
    finally:
        long_call.cancel()
        with suppress(asyncio.CancelledError):
            await long_call
