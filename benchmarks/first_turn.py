"""The first caller after a start, against the callers after them: `callswarm serve` as a process.

    python benchmarks/first_turn.py [--starts 3] [--tree PATH]

Each start takes a fresh data directory (the assembled models linked in, as `make run`
leaves them), starts the gateway on the scripted provider, and waits for `/api/ready`
to say everything is loaded: a caller who rings then should wait no longer than the
ones after. Then each line below is typed on the text socket by a new caller, in
turn, and the whole round is made again by new callers. A turn is timed from sending
the line to its reply. The scripted provider answers shopping in code, so the figure
is the agents' own code, not a model's.

`--tree` runs another checkout the same way (the same venv and models): the code
before a change.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx
from startup import REPO, env_for, free_port, fresh_data, stop, until
from websockets.asyncio.client import connect

LINES = (
    "Hello, I would like to buy two boxes of paracetamol for my fever, please.",
    "have you got anything for hay fever, my eyes are streaming",
    "can I get some plasters and a tube of antiseptic cream",
    "do you sell ibuprofen gel",
)


async def one_start(tree: Path, n: int) -> tuple[float, list[float], list[float]]:
    """Seconds from spawning the gateway until it is ready, and each line's seconds to
    its reply in the first round after that, and in the second."""
    data = fresh_data()
    port = free_port()
    env = env_for(data, port) | {"CALLSWARM_PROVIDER": "scripted"}
    with (data / "serve.log").open("wb") as log:
        spawned = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "callswarm", "serve", "--port", str(port)),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log,
            env=env,
            cwd=tree,
        )
    rounds: tuple[list[float], list[float]] = ([], [])
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:

            async def ready() -> bool:
                return bool((await http.get("/api/ready")).json()["ready"])

            up = await until(ready, spawned)
            for r, times in enumerate(rounds):
                for i, line in enumerate(LINES):
                    client = f"first-{n}-{r}-{i}"
                    signed = await http.post("/api/v1/caller", json={"client_id": client})
                    cookie = signed.cookies.get("callswarm_caller")
                    url = f"ws://127.0.0.1:{port}/api/v1/session/{client}"
                    async with connect(
                        url, additional_headers={"Cookie": f"callswarm_caller={cookie}"}
                    ) as ws:
                        started = time.perf_counter()
                        await ws.send(line)
                        await asyncio.wait_for(ws.recv(), 60)
                        times.append(time.perf_counter() - started)
    finally:
        await stop(process)
    return up, *rounds


async def main(starts: int, tree: Path) -> None:
    print(f"tree {tree}, {starts} starts, scripted provider, each line by a new caller")
    print(
        f"{'start':<6} {'ready':>7} {'first line':>11} {'same line later':>16}"
        f" {'rest, 1st round':>16}"
    )
    ups, firsts, agains, rests = [], [], [], []
    for n in range(starts):
        up, first_round, second_round = await one_start(tree, n)
        ups.append(up)
        firsts.append(first_round[0])
        agains.append(second_round[0])
        rests += first_round[1:]
        print(
            f"{n:<6} {up:>6.1f}s {first_round[0] * 1000:>9.0f}ms {second_round[0] * 1000:>14.0f}ms"
            f" {statistics.median(first_round[1:]) * 1000:>14.0f}ms"
        )
    print(
        f"median {statistics.median(ups):>6.1f}s {statistics.median(firsts) * 1000:>9.0f}ms"
        f" {statistics.median(agains) * 1000:>14.0f}ms {statistics.median(rests) * 1000:>14.0f}ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=REPO)
    options = parser.parse_args()
    asyncio.run(main(options.starts, options.tree.resolve()))
