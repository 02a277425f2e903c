"""How many phone calls at once the gateway carries with clean audio.

    .venv/bin/python benchmarks/sip_load.py [--calls 1,4,8,12,16] [--spread 10] [--provider scripted]

`callswarm serve --sip` runs as its own process, as in production. For each N, sipp
places N calls evenly within `--spread` seconds (0: all in the same millisecond); each
hears the greeting, says the reference utterance (Piper, streamed as PCMU RTP), listens
for `--listen` seconds and hangs up, so with the defaults all N calls are up at once
for a while. The gateway's RTP goes to a capture socket in this process, read on its
own thread, which timestamps every packet.

Clean audio means, for every call: no underrun (a packet padded with silence in the
middle of a reply, counted by the gateway and logged with `call_ended`), packets paced
at 20 ms (p99 of the gaps between packets ≤ 30 ms), and a reply in the audio. Also
reported: release of speech → first reply audio (the gateway's own turn metrics, p50
and p95) and the gateway's CPU seconds per call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from _harness import UTTERANCE, caller_pcm, pct, sip_gateway
from sqlmodel import Session, select

from callswarm.app import open_database
from callswarm.settings import Settings
from models.tables import TurnRow
from telephony.wire import BadPacket, parse_rtp
from tests.telephony.sipp import (
    Stream,
    free_udp_port,
    g711_file,
    pause,
    scenario,
    sipp,
    stream,
)


class Capture(threading.Thread):
    """The callers' ears: every RTP packet with its arrival time, per SSRC."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.streams: dict[int, Stream] = {}
        self.running = True

    def run(self) -> None:
        while self.running:
            try:
                data = self.sock.recv(2048)
            except TimeoutError:
                continue
            arrived = time.monotonic()
            try:
                packet = parse_rtp(data)
            except BadPacket:
                continue
            self.streams.setdefault(packet.ssrc, Stream(packet.payload_type)).packets.append(
                (arrived, packet)
            )

    def stop(self) -> None:
        self.running = False
        self.join()
        self.sock.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class GatewayLog:
    """The gateway's stderr, line by line: each call's `call_ended` line has its underruns."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.underruns: list[int] = []
        self._changed = asyncio.Condition()
        self._task = asyncio.get_running_loop().create_task(self._read(stream))

    async def _read(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            found = re.search(rb"call_ended .* underruns=(\d+)", line)
            if found:
                async with self._changed:
                    self.underruns.append(int(found.group(1)))
                    self._changed.notify_all()

    async def ended(self, count: int) -> list[int]:
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.underruns) >= count)
        return self.underruns[:count]


async def level(calls: int, gateway: str, pid: int, caller_file: Path, seconds: float, log, args):
    capture = Capture()
    capture.start()
    with tempfile.TemporaryDirectory() as tmp:
        actions = pause(4.5) + stream(caller_file, "PCMU") + pause(seconds + args.listen)
        call = scenario(
            Path(tmp), capture.port, "+1555" + str(calls).zfill(3) + "[call_number]", actions
        )
        before = len(log.underruns)
        cpu = cpu_seconds(pid)
        run = await sipp(call, gateway, calls=calls, max_seconds=180, spread_s=args.spread)
        cpu = cpu_seconds(pid) - cpu
    capture.stop()
    # Every call logs one call_ended line; wait for this level's.
    ended = (await asyncio.wait_for(log.ended(before + calls), 60))[before:]
    gaps, replies = [], 0
    for line in capture.streams.values():
        gaps += list(np.diff([t for t, _ in line.packets]) * 1000)
        replies += int(line.voiced_seconds() > 8)  # the greeting (3.5 s) and a reply
    underruns = sum(ended)
    p99 = pct(gaps, 0.99)
    clean = run.returncode == 0 and underruns == 0 and p99 <= 30 and replies == calls
    return {
        "calls": calls,
        "ok": run.returncode == 0,
        "streams": len(capture.streams),
        "replies": replies,
        "underruns": underruns,
        "gap_p50": pct(gaps, 0.5),
        "gap_p99": p99,
        "gap_max": max(gaps),
        "cpu_per_call": cpu / calls,
        "clean": clean,
    }


def v2v(data_dir: Path) -> dict[int, tuple[float, float]]:
    """Release of speech → first reply audio, per level, from the gateway's turn table."""
    db = open_database(Settings(data_dir=data_dir))
    out: dict[int, list[float]] = defaultdict(list)
    with Session(db) as s:
        for row in s.exec(select(TurnRow)).all():
            if row.voice_to_voice_s is not None:
                out[int(row.client_id[5:8])].append(row.voice_to_voice_s)
    db.dispose()
    return {n: (pct(v, 0.5), pct(v, 0.95)) for n, v in out.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", default="1,4,8,12,16")
    parser.add_argument("--provider", default="scripted")
    parser.add_argument("--spread", type=float, default=10.0)
    parser.add_argument("--listen", type=float, default=12.0)
    args = parser.parse_args()

    pcm, rate = caller_pcm(UTTERANCE)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        caller = g711_file(data / "caller.ul", pcm, rate, "PCMU")
        seconds = len(pcm) / 2 / rate
        sip_port = free_udp_port()
        gateway, _url = await sip_gateway(data, sip_port, args.provider)
        assert gateway.stderr is not None
        log = GatewayLog(gateway.stderr)
        rows = []
        for n in [int(x) for x in args.calls.split(",")]:
            rows.append(
                await level(n, f"127.0.0.1:{sip_port}", gateway.pid, caller, seconds, log, args)
            )
            print(f"  {n} calls done", file=sys.stderr, flush=True)
        gateway.terminate()
        await gateway.wait()
        latency = v2v(data)

    print(
        f"\nsip_load: provider={args.provider}, {os.cpu_count()} cores, arrivals over "
        f"{args.spread:g} s, caller listens {args.listen:g} s, gateway in its own process"
    )
    print(
        "| calls | completed | replies | underruns | RTP gap p50 / p99 / max (ms) "
        "| v2v p50 / p95 (s) | gateway CPU-s per call | clean |"
    )
    print("|---:|---|---:|---:|---|---|---:|---|")
    for r in rows:
        p50, p95 = latency.get(r["calls"], (float("nan"), float("nan")))
        print(
            f"| {r['calls']} | {'yes' if r['ok'] else 'NO'} | {r['replies']}/{r['calls']} "
            f"| {r['underruns']} | {r['gap_p50']:.1f} / {r['gap_p99']:.1f} / {r['gap_max']:.1f} "
            f"| {p50:.2f} / {p95:.2f} | {r['cpu_per_call']:.2f} | {'yes' if r['clean'] else 'no'} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
