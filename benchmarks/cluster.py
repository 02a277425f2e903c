"""What sharing PostgreSQL costs, and how fast live events cross between gateways.

    .venv/bin/python benchmarks/cluster.py [--callers 10] [--turns 6] [--runs 3]

Gateways (uvicorn, FastAPI, the text socket, the journal) on loopback ports in this
process, on the scripted provider so only the gateway and its database are measured:

- `sqlite x1`: one gateway on a SQLite file (the baseline);
- `postgresql x1`: one gateway on PostgreSQL;
- `postgresql x2`: two gateways on one PostgreSQL database, the callers split
  between them: every event crosses through the journal's NOTIFY and the other
  gateway's LISTEN.

PostgreSQL is Debian's server in a throwaway cluster with its durability on (fsync
and synchronous commit, unlike the test suite's), started by scripts/test-postgres
on port 54330. `--callers` text callers each run `--turns` turns at once. Reported
per configuration, over `--runs` runs: turn latency p50/p95 and the ratio to
`sqlite x1`; and how long an event takes from the swarm publishing it to an SSE
watcher of the first gateway (a second process) reading it, for callers of that
gateway and of the other one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path

import httpx
import psycopg
from _harness import REPO, pct, serving, start_watcher, watcher_result
from console_load import caller
from sqlalchemy.engine import make_url

from callswarm.app import build_services
from callswarm.serve import make_gateway
from callswarm.settings import Settings

CONFIGS = (("sqlite", 1), ("postgresql", 1), ("postgresql", 2))
NAMES = "ab"


def durable_postgres() -> str:
    env = os.environ | {
        "CALLSWARM_TEST_PG_PORT": "54330",
        "CALLSWARM_TEST_PG_DIR": f"{tempfile.gettempdir()}/callswarm-bench-postgres",
        "CALLSWARM_TEST_PG_OPTIONS": "",
    }
    started = subprocess.run(
        [str(REPO / "scripts" / "test-postgres"), "start"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return started.stdout.strip()


def new_database(server: str) -> str:
    url = make_url(server)
    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


async def watch(url: str, token: str, calls: int) -> None:
    """The watcher's process: one SSE stream until `calls` calls have ended; prints
    "ready", then the lags (publish → read, seconds) by the caller's gateway, as JSON."""
    lags: dict[str, list[float]] = {name: [] for name in NAMES}
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(base_url=url, headers=headers, timeout=300) as client,
        client.stream("GET", "/api/events") as response,
    ):
        print("ready", flush=True)
        ended = 0
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                lag = time.time() - datetime.fromisoformat(event["at"]).timestamp()
                lags[event["client_id"][0]].append(lag)
                ended += event["kind"] == "call_ended"
                if ended == calls:
                    break
    print(json.dumps(lags), flush=True)


async def one_run(database: str, gateways: int, callers: int, turns: int, run: int, tmp: Path):
    async with AsyncExitStack() as stack:
        urls, token = [], ""
        for name in NAMES[:gateways]:
            settings = Settings(
                data_dir=tmp / f"{run}-{name}",
                database_url=database,
                provider="scripted",
                idle_timeout=None,
                instance=name,
                operator_token="bench",
            )
            services = build_services(settings)
            stack.push_async_callback(services.aclose)  # after the gateway stops (LIFO)
            gateway = make_gateway(services)
            urls.append(await stack.enter_async_context(serving(gateway)))
            token = gateway.auth.token or ""
        watcher = await start_watcher(
            __file__, urls[0].replace("ws://", "http://"), token, str(callers)
        )
        results = await asyncio.gather(
            *(
                caller(urls[k % gateways], f"{NAMES[k % gateways]}-{run}-{k}", turns)
                for k in range(callers)
            )
        )
        return [t for r in results for t in r], await watcher_result(watcher)


async def main(callers: int, turns: int, runs: int) -> None:
    server = durable_postgres()
    print(f"{callers} text callers x {turns} turns at once, scripted provider, {runs} runs each")
    print(
        f"{'database':>12} {'gateways':>8} {'turn p50':>9} {'turn p95':>9} {'ratio':>6} "
        f"{'event p50 own':>14} {'p95':>7} {'other p50':>10} {'p95':>7}"
    )
    baseline = None
    for kind, gateways in CONFIGS:
        times: list[float] = []
        lags: dict[str, list[float]] = {name: [] for name in NAMES}
        for run in range(runs):
            with tempfile.TemporaryDirectory() as tmp:
                database = (
                    f"sqlite:///{Path(tmp) / 'callswarm.db'}"
                    if kind == "sqlite"
                    else new_database(server)
                )
                got, seen = await one_run(database, gateways, callers, turns, run, Path(tmp))
            times += got
            for name in NAMES:
                lags[name] += seen[name]
        p50 = pct(times, 0.5)
        baseline = baseline or p50

        def ms(values: list[float], q: float) -> str:
            return f"{pct(values, q) * 1000:.0f}ms" if values else "-"

        print(
            f"{kind:>12} {gateways:>8} {p50 * 1000:>7.1f}ms {pct(times, 0.95) * 1000:>7.1f}ms "
            f"{p50 / baseline:>6.2f} {ms(lags['a'], 0.5):>14} {ms(lags['a'], 0.95):>7} "
            f"{ms(lags['b'], 0.5):>10} {ms(lags['b'], 0.95):>7}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--callers", type=int, default=10)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--watch", nargs=3, help=argparse.SUPPRESS)  # the watcher's process
    options = parser.parse_args()
    if options.watch:
        url, token, calls = options.watch
        asyncio.run(watch(url, token, int(calls)))
    else:
        asyncio.run(main(options.callers, options.turns, options.runs))
