"""A long run at capacity: phone calls (sipp) and browser-protocol callers together.

    .venv/bin/python benchmarks/soak.py [--minutes 30] [--window 5] [--sip 10] [--browser 10]
        [--provider scripted]

`callswarm serve --sip` runs as its own process, as in production, on a fresh data
folder. For the whole run:

- `--sip` phone calls at a time: sipp places them in rounds spread over 10 s; each
  hears the greeting, says the reference utterance (Piper, as PCMU RTP), listens and
  hangs up; the next round starts when one ends.
- `--browser` callers on the voice socket, each in a loop: sign in (the caller's
  cookie), connect, hear the greeting, say the utterance in real time twice, hang up,
  wait a random 0-5 s, call again.

Per window of `--window` minutes it prints errors (browser exceptions and error
events, failed sipp rounds, the gateway's ERROR log lines), underruns (from the
gateway's `call_ended` lines), dropped turns (a browser turn with no reply in 60 s),
v2v p50 and p95 (the gateway's own turn table), and the gateway's RSS and open file
descriptors at the window's end. The issue's targets: 0 errors; RSS growth from the
first window's end to the last's at most 10 %; the last window's v2v p95 within 20 %
of the first's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import socket
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from _harness import UTTERANCE, as_caller, caller_pcm, pct, sip_gateway
from sqlmodel import Session, select
from websockets.asyncio.client import connect

from callswarm.app import open_database
from callswarm.settings import Settings
from models.tables import TurnRow
from tests.telephony.sipp import free_udp_port, g711_file, pause, scenario, sipp, stream
from voice.resample import resample

TOKEN = "soak-operator-token"


class Drain(threading.Thread):
    """The phone callers' ears: takes the gateway's RTP and counts it, nothing more."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.packets = 0
        self.running = True

    def run(self) -> None:
        while self.running:
            try:
                self.sock.recv(2048)
                self.packets += 1
            except TimeoutError:
                continue


class Tally:
    """What happened, by window (minutes since the start // window)."""

    def __init__(self, started: float, window_s: float) -> None:
        self.started, self.window_s = started, window_s
        self.counts: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.samples: dict[int, tuple[float, int]] = {}
        self.errors: list[str] = []

    def window(self, at: float | None = None) -> int:
        return int(((time.monotonic() if at is None else at) - self.started) // self.window_s)

    def add(self, key: str, n: int = 1) -> None:
        self.counts[self.window()][key] += n

    def error(self, what: str) -> None:
        self.add("errors")
        if len(self.errors) < 50:
            self.errors.append(f"{time.monotonic() - self.started:7.1f}s {what}"[:300])


def rss_and_fds(pid: int) -> tuple[float, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
    return rss_kb / 1024, len(os.listdir(f"/proc/{pid}/fd"))


async def read_log(stream_: asyncio.StreamReader, tally: Tally, keep: Path) -> None:
    with keep.open("ab") as out:
        while line := await stream_.readline():
            out.write(line)
            found = re.search(rb"call_ended .* underruns=(\d+)", line)
            if found:
                tally.add("underruns", int(found.group(1)))
                tally.add("sip_calls")
            if b" ERROR " in line:
                tally.error("gateway: " + line.decode(errors="replace").strip()[-200:])


async def phone_rounds(args, gateway: str, caller_file: Path, seconds: float, tally, until):
    drain = Drain()
    drain.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            actions = pause(4.5) + stream(caller_file, "PCMU") + pause(seconds + 8)
            call = scenario(Path(tmp), drain.port, "+1555777[call_number]", actions)
            while time.monotonic() < until:
                run = await sipp(call, gateway, calls=args.sip, max_seconds=180, spread_s=10)
                if run.returncode != 0:
                    tally.error(f"sipp round failed rc={run.returncode}")
    finally:
        drain.running = False
        drain.join()


async def until_kind(ws, kind: str, client: str, tally: Tally) -> None:
    """Read the caller's socket until an event of `kind`; error events are counted."""
    while True:
        message = await asyncio.wait_for(ws.recv(), 60)
        if isinstance(message, bytes):
            continue
        event = json.loads(message)
        if event["type"] == "error":
            tally.error(f"{client}: {event}")
        if event["type"] == kind:
            return


async def browser_caller(url: str, n: int, audio: bytes, tally: Tally, until: float) -> None:
    rng = random.Random(n)
    calls = 0
    while time.monotonic() < until:
        client = f"soak-{n}-{calls}"
        calls += 1
        try:
            headers = await as_caller(url, client)
            async with connect(
                f"{url}/ws/voice/{client}", max_size=None, additional_headers=headers
            ) as ws:
                await until_kind(ws, "ready", client, tally)
                await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
                await until_kind(ws, "reply_done", client, tally)
                for _ in range(2):
                    start = time.monotonic()
                    for k, i in enumerate(range(0, len(audio), 640)):
                        # Pacing a microphone, not waiting for the gateway.
                        await asyncio.sleep(max(0.0, start + k * 0.02 - time.monotonic()))
                        await ws.send(audio[i : i + 640].ljust(640, b"\0"))
                    await ws.send(json.dumps({"type": "release"}))
                    try:
                        await until_kind(ws, "reply_done", client, tally)
                        tally.add("browser_turns")
                    except TimeoutError:
                        tally.add("dropped_turns")
        except Exception as exc:
            tally.error(f"{client}: {exc!r}")
        await asyncio.sleep(rng.uniform(0, 5))  # the caller's next call, not a wait


async def sample(pid: int, tally: Tally, until: float) -> None:
    while time.monotonic() < until:
        await asyncio.sleep(10)  # a sampling interval
        tally.samples[tally.window()] = rss_and_fds(pid)


def turn_times(data: Path, started_at: datetime, window_s: float) -> dict[int, list[float]]:
    db = open_database(Settings(data_dir=data))
    out: dict[int, list[float]] = defaultdict(list)
    with Session(db) as s:
        for row in s.exec(select(TurnRow)).all():
            if row.voice_to_voice_s is None:
                continue
            created = row.created_at.replace(tzinfo=row.created_at.tzinfo or UTC)
            out[int((created - started_at).total_seconds() // window_s)].append(
                row.voice_to_voice_s
            )
    db.dispose()
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--window", type=float, default=5, help="minutes per row")
    parser.add_argument("--sip", type=int, default=10)
    parser.add_argument("--browser", type=int, default=10)
    parser.add_argument("--provider", default="scripted")
    args = parser.parse_args()

    pcm, rate = caller_pcm(UTTERANCE)
    seconds = len(pcm) / 2 / rate
    audio = resample(pcm, rate, 16000) + b"\0\0" * 3200
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        caller_file = g711_file(data / "caller.ul", pcm, rate, "PCMU")
        sip_port = free_udp_port()
        env = {
            "CALLSWARM_OPERATOR_TOKEN": TOKEN,
            # Every browser caller of this run comes from 127.0.0.1.
            "CALLSWARM_CALLER_MAX_OPENS": "100000",
        }
        gateway, url = await sip_gateway(data, sip_port, args.provider, env)
        assert gateway.stderr is not None
        started, started_at = time.monotonic(), datetime.now(UTC)
        until = started + args.minutes * 60
        tally = Tally(started, args.window * 60)
        # Kept after the run, for the tracebacks behind the errors counted.
        kept = Path(tempfile.gettempdir()) / "callswarm-soak-gateway.log"
        kept.unlink(missing_ok=True)
        log = asyncio.create_task(read_log(gateway.stderr, tally, kept))
        ws_url = url.replace("http://", "ws://")
        await asyncio.gather(
            phone_rounds(args, f"127.0.0.1:{sip_port}", caller_file, seconds, tally, until),
            *(browser_caller(ws_url, n, audio, tally, until) for n in range(args.browser)),
            sample(gateway.pid, tally, until),
        )
        tally.samples[tally.window(until - 1)] = rss_and_fds(gateway.pid)
        gateway.terminate()
        await gateway.wait()
        await log
        times = turn_times(data, started_at, args.window * 60)

    windows = range(max(1, int(args.minutes // args.window)))
    print(
        f"\nsoak: {args.minutes:g} min, {args.sip} phone calls and {args.browser} browser "
        f"callers at a time, provider={args.provider}, {os.cpu_count()} cores, gateway in "
        "its own process"
    )
    print(
        "| minutes | errors | underruns | dropped turns | phone calls | browser turns "
        "| v2v p50 / p95 (s) | RSS (MiB) | open fds |"
    )
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    for w in windows:
        c = tally.counts[w]
        v = times.get(w, [])
        lat = f"{statistics.median(v):.2f} / {pct(v, 0.95):.2f}" if v else "-"
        rss, fds = tally.samples.get(w, (float("nan"), 0))
        print(
            f"| {w * args.window:g}-{(w + 1) * args.window:g} | {c['errors']} | {c['underruns']} "
            f"| {c['dropped_turns']} | {c['sip_calls']} | {c['browser_turns']} | {lat} "
            f"| {rss:.0f} | {fds} |"
        )
    first, last = tally.samples.get(0), tally.samples.get(windows[-1])
    if first and last:
        print(
            f"\nRSS growth, end of the first window to the end of the last: "
            f"{100 * (last[0] / first[0] - 1):+.1f} %"
        )
    for line in tally.errors:
        print("  error:", line)
    print(f"\nthe gateway's log: {kept}")


if __name__ == "__main__":
    asyncio.run(main())
