"""What the operator console costs: text callers' turns while operators watch over SSE.

    .venv/bin/python benchmarks/console_load.py [--callers 10] [--turns 6] [--watchers 0,1,10,50]

A real gateway (uvicorn, FastAPI, the text socket, the journal) on a loopback port in
this process, on the scripted provider so only the gateway is measured. For each
number of watchers (SSE subscribers of `/api/events`, in a second process),
`--callers` text callers each run `--turns` turns at once. Reported: turn latency p50/p95 and its ratio to the run
with no watcher; how long an event takes from the swarm publishing it to a watcher
reading it (p50/p95, over every event every watcher got); events per second
journaled; and the database's size per call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import datetime
from pathlib import Path

import httpx
from _harness import as_caller, pct, serving, start_watcher, watcher_result
from websockets.asyncio.client import connect

from callswarm.app import build_services
from callswarm.serve import make_gateway
from callswarm.settings import Settings

LINES = [
    "hello",
    "I need something for a headache",
    "two boxes of the paracetamol please",
    "what are your opening hours?",
    "where are you?",
    "that's all",
]


async def caller(url: str, client_id: str, turns: int) -> list[float]:
    times = []
    headers = await as_caller(url, client_id)
    async with connect(f"{url}/api/v1/session/{client_id}", additional_headers=headers) as ws:
        for n in range(turns):
            started = time.perf_counter()
            await ws.send(LINES[n % len(LINES)])
            await ws.recv()
            times.append(time.perf_counter() - started)
    return times


async def watch(url: str, token: str, streams: int, calls: int) -> None:
    """The watchers' process: `streams` SSE subscribers until each has seen `calls`
    calls end; prints "ready", then the lags (publish → read, seconds) as JSON."""
    lags: list[float] = []
    headers = {"Authorization": f"Bearer {token}"}

    async def one(client: httpx.AsyncClient, ready: asyncio.Event) -> None:
        ended = 0
        async with client.stream("GET", "/api/events") as response:
            ready.set()
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    lags.append(time.time() - datetime.fromisoformat(event["at"]).timestamp())
                    ended += event["kind"] == "call_ended"
                    if ended == calls:
                        return

    limits = httpx.Limits(max_connections=streams + 1)
    async with httpx.AsyncClient(
        base_url=url, headers=headers, limits=limits, timeout=300
    ) as client:
        ready = [asyncio.Event() for _ in range(streams)]
        tasks = [asyncio.create_task(one(client, r)) for r in ready]
        for r in ready:
            await r.wait()
        print("ready", flush=True)
        await asyncio.gather(*tasks)
    print(json.dumps(lags), flush=True)


async def one_run(url: str, token: str, callers: int, turns: int, watchers: int, run: int):
    """Turn times, the watchers' lags, and the seconds the callers took."""
    process = None
    if watchers:
        http = url.replace("ws://", "http://")
        process = await start_watcher(__file__, http, token, str(watchers), str(callers))
    started = time.perf_counter()
    results = await asyncio.gather(*(caller(url, f"web-{run}-{k}", turns) for k in range(callers)))
    elapsed = time.perf_counter() - started
    lags: list[float] = []
    if process is not None:
        lags = await watcher_result(process)
    return [t for r in results for t in r], lags, elapsed


async def main(callers: int, turns: int, watcher_counts: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), provider="scripted", idle_timeout=None)
        services = build_services(settings)
        gateway = make_gateway(services)
        print(f"{callers} text callers x {turns} turns at once, scripted provider, SQLite")
        print(
            f"{'watchers':>8} {'turn p50':>9} {'turn p95':>9} {'ratio':>6} "
            f"{'event p50':>10} {'event p95':>10} {'events/s':>9}"
        )
        baseline = None
        try:
            async with serving(gateway) as url:
                for run, watchers in enumerate(watcher_counts):
                    times, lags, elapsed = await one_run(
                        url, gateway.auth.token, callers, turns, watchers, run
                    )
                    await gateway.journal.settled()
                    p50 = pct(times, 0.5)
                    baseline = baseline or p50
                    events = len(lags) / watchers if watchers else 0
                    lag50 = f"{pct(lags, 0.5) * 1000:.1f}ms" if lags else "-"
                    lag95 = f"{pct(lags, 0.95) * 1000:.1f}ms" if lags else "-"
                    rate = f"{events / elapsed:.0f}" if watchers else "-"
                    print(
                        f"{watchers:>8} {p50 * 1000:>7.1f}ms {pct(times, 0.95) * 1000:>7.1f}ms "
                        f"{p50 / baseline:>6.2f} {lag50:>10} {lag95:>10} {rate:>9}"
                    )
                size = (Path(tmp) / "callswarm.db").stat().st_size
                calls = callers * len(watcher_counts)
                print(
                    f"database: {size / 1024:.0f} KiB for {calls} calls ({size / calls / 1024:.1f} KiB each)"
                )
        finally:
            await services.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--callers", type=int, default=10)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--watchers", default="0,1,10,50")
    parser.add_argument("--watch", nargs=4, help=argparse.SUPPRESS)  # the watchers' process
    options = parser.parse_args()
    if options.watch:
        url, token, streams, calls = options.watch
        asyncio.run(watch(url, token, int(streams), int(calls)))
    else:
        counts = [int(n) for n in options.watchers.split(",")]
        asyncio.run(main(options.callers, options.turns, counts))
