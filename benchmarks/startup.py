"""How soon a restarted gateway serves: `callswarm serve` and `callswarm chat` as processes.

    python benchmarks/startup.py [--runs 3] [--baseline]

Each run takes a fresh data directory (the assembled models linked in, as `make run`
leaves them) and starts the gateway twice:
- first start: no database and no saved prompt states;
- second start: the same directory, as after a restart.

For each start it measures, from the moment the process is spawned:
- ping: the first answer from `/api/ping`;
- voice: `/api/ready` says the voice engines are loaded;
- ready: `/api/ready` says everything is warm;
- reply: the first model-written reply to a caller who typed "hello" on the text socket
  the moment `/api/ping` answered (the log must show the model ran: triage's);
- shopping: that caller's next line, "I need something for a headache", answered (the
  triage model hands over to sales, whose model answers with the catalogue).
Then `callswarm chat` on the second start's directory: "hello" piped in, until its reply.

`--baseline` times the commit before issue 21 the same way (serve's "serving on" line is
when its socket opened): `git worktree` at BASELINE, the same venv and models.

Polling every 20 ms is the measurement here, not a synchronisation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

REPO = Path(__file__).resolve().parent.parent
BASELINE = "0310277"  # the last commit before the warm-up moved behind the socket
LINE = "hello"  # the issue's own first line to `callswarm chat`
SHOPPING = "I need something for a headache"
POLL_S = 0.02
LIMIT_S = 300


@dataclass
class Start:
    ping: float = float("nan")
    voice: float = float("nan")
    ready: float = float("nan")
    reply: float = float("nan")
    shopping: float = float("nan")
    model_replied: bool = False
    log: str = ""


@dataclass
class Run:
    first: Start = field(default_factory=Start)
    second: Start = field(default_factory=Start)
    chat: float = float("nan")


def fresh_data() -> Path:
    data = Path(tempfile.mkdtemp(prefix="callswarm-startup-"))
    (data / "models").symlink_to(REPO / "data" / "models")
    return data


def env_for(data: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLSWARM_")}
    return env | {
        "CALLSWARM_DATA_DIR": str(data),
        "CALLSWARM_PORT": str(port),
        "CALLSWARM_OPERATOR_TOKEN": "bench",
        "CALLSWARM_IDLE_TIMEOUT": "600",
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def until(check, started: float) -> float:
    while time.perf_counter() - started < LIMIT_S:
        try:
            if await check():
                return time.perf_counter() - started
        except (httpx.HTTPError, OSError):
            pass
        await asyncio.sleep(POLL_S)
    raise TimeoutError("the gateway did not get there in time")


async def stop(process: asyncio.subprocess.Process) -> None:
    """Ctrl-C, as an operator stops it; killed if it has not stopped within a minute."""
    process.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(process.wait(), 60)
    except TimeoutError:
        process.kill()
        await process.wait()


async def one_start(data: Path, tree: Path, client: str, has_ready: bool) -> Start:
    port = free_port()
    log_path = data / f"serve-{client}.log"
    result = Start()
    with log_path.open("wb") as log:
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "callswarm", "serve", "--port", str(port)),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
            env=env_for(data, port),
            cwd=tree,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=5) as http:

            async def ping() -> bool:
                return (await http.get("/api/ping")).status_code == 200

            result.ping = await until(ping, started)

            async def reply() -> tuple[float, float]:
                # The caller's signed cookie (a tree before web/callers.py has none).
                signed = await http.post("/api/v1/caller", json={"client_id": client})
                cookie = signed.cookies.get("callswarm_caller") if signed.is_success else None
                headers = {"Cookie": f"callswarm_caller={cookie}"} if cookie else {}
                url = f"ws://127.0.0.1:{port}/api/v1/session/{client}"
                async with connect(url, additional_headers=headers) as ws:
                    await ws.send(LINE)
                    await asyncio.wait_for(ws.recv(), LIMIT_S)
                    first = time.perf_counter() - started
                    await ws.send(SHOPPING)
                    await asyncio.wait_for(ws.recv(), LIMIT_S)
                return first, time.perf_counter() - started

            replying = asyncio.ensure_future(reply())
            if has_ready:

                async def voice() -> bool:
                    return (await http.get("/api/ready")).json()["voice"]

                async def ready() -> bool:
                    return (await http.get("/api/ready")).json()["ready"]

                result.voice = await until(voice, started)
                result.ready = await until(ready, started)
            result.reply, result.shopping = await replying
    finally:
        await stop(process)
    result.log = log_path.read_text(errors="replace")
    # The first turn's reply was the model's, not code's: a completion before its turn_done.
    first_turn = result.log.split(f"turn_done client_id={client}")[0]
    result.model_replied = f"local_completion client_id={client}" in first_turn
    return result


def chat_first_reply(data: Path, tree: Path) -> float:
    """Seconds from spawning `callswarm chat` until it printed the reply to "hello"."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "callswarm", "chat", "--client-id", "bench-chat", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env_for(data, 0),
        cwd=tree,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(LINE + "\n")
    process.stdin.flush()
    elapsed = float("nan")
    greeted = False
    for line in process.stdout:
        event = json.loads(line)
        if event.get("event") == "assistant_message":
            if greeted:
                elapsed = time.perf_counter() - started
                break
            greeted = True
    process.stdin.close()
    process.wait(60)
    return elapsed


async def two_starts(data: Path, tree: Path, n: int, has_ready: bool) -> Run:
    run = Run()
    run.first = await one_start(data, tree, f"bench-{n}-a", has_ready)
    run.second = await one_start(data, tree, f"bench-{n}-b", has_ready)
    return run


def one_run(tree: Path, n: int, has_ready: bool) -> Run:
    data = fresh_data()
    run = asyncio.run(two_starts(data, tree, n, has_ready))
    run.chat = chat_first_reply(data, tree)
    return run


def stats(values: list[float]) -> str:
    values = [v for v in values if v == v]
    if not values:
        return "—"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{statistics.median(values):.2f} / {p95:.2f}"


def table(label: str, runs: list[Run]) -> None:
    print(f"\n{label}: {len(runs)} runs, seconds after the process started (median / p95)")
    print("| figure | first start | second start |")
    print("|---|---|---|")
    for name in ("ping", "voice", "ready", "reply", "shopping"):
        first = stats([getattr(r.first, name) for r in runs])
        second = stats([getattr(r.second, name) for r in runs])
        print(f"| {name} | {first} | {second} |")
    print(f"| chat's first reply | | {stats([r.chat for r in runs])} |")
    model = sum(r.first.model_replied + r.second.model_replied for r in runs)
    print(f"model-written replies: {model} of {2 * len(runs)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", action="store_true", help=f"also time {BASELINE}")
    args = parser.parse_args()
    trees = [("this tree", REPO, True)]
    if args.baseline:
        base = Path(tempfile.mkdtemp(prefix="callswarm-baseline-")) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-f", str(base), BASELINE])
        trees.insert(0, (f"baseline {BASELINE}", base, False))
    try:
        for label, tree, has_ready in trees:
            table(label, [one_run(tree, n, has_ready) for n in range(args.runs)])
    finally:
        if args.baseline:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)])


if __name__ == "__main__":
    main()
