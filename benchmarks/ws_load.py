"""N concurrent WebSocket callers streaming speech to the gateway's voice socket.

    .venv/bin/python benchmarks/ws_load.py [--callers 1,5,10] [--spread 12] [--provider scripted]

A real gateway (uvicorn, FastAPI, the voice socket) on a loopback port in this
process; each caller connects, waits for the greeting, streams the reference
utterance in real time in 20 ms messages, releases the button and waits for the
reply. Callers arrive evenly over `--spread` seconds (0: all at once). Reported per
N: turn latency from release to the first reply audio byte as the client sees it,
p50 and p95, and errors (error events, dropped sockets, timeouts). The clients run
in the same process and share its two cores with the gateway.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from _harness import UTTERANCE, as_caller, caller_pcm, pct, serving
from sqlmodel import Session
from websockets.asyncio.client import connect

from callswarm.app import build_services
from callswarm.serve import make_gateway
from callswarm.settings import Settings
from models.search import catalogue_vocabulary
from voice.resample import resample
from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice
from web.gateway import VoiceEngines


async def one_caller(url: str, client_id: str, audio: bytes, delay: float) -> float:
    """Seconds from release to the first reply audio byte; raises on any error."""
    await asyncio.sleep(delay)  # this caller's arrival
    headers = await as_caller(url, client_id)
    async with connect(
        f"{url}/ws/voice/{client_id}", max_size=None, additional_headers=headers
    ) as ws:

        async def until(kind: str) -> dict:
            while True:
                message = await asyncio.wait_for(ws.recv(), 120)
                if isinstance(message, bytes):
                    continue
                event = json.loads(message)
                if event["type"] == "error":
                    raise RuntimeError(f"{client_id}: {event}")
                if event["type"] == kind:
                    return event

        await until("ready")
        await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
        await until("reply_done")  # the greeting, while the caller listens
        start = time.monotonic()
        for n, i in enumerate(range(0, len(audio), 640)):
            await asyncio.sleep(max(0.0, start + n * 0.02 - time.monotonic()))
            await ws.send(audio[i : i + 640].ljust(640, b"\0"))
        await ws.send(json.dumps({"type": "release"}))
        released = time.monotonic()
        while True:
            message = await asyncio.wait_for(ws.recv(), 120)
            if isinstance(message, bytes):
                first_audio = time.monotonic() - released
                break
            if json.loads(message)["type"] == "error":
                raise RuntimeError(f"{client_id}: {message}")
        await until("reply_done")
        return first_audio


async def main(counts: list[int], spread: float, provider: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        services = build_services(
            Settings(data_dir=Path(tmp), provider=provider, idle_timeout=None)
        )
        await services.warm_up()
        with Session(services.db) as db:
            vocabulary = catalogue_vocabulary(db)
        stt = WhisperSTT(bundled_whisper(), vocabulary=vocabulary)
        tts = PiperTTS(bundled_voice(), deterministic=True, cache_bytes=0)
        stt.warm_up()
        tts.warm_up()
        audio = resample(*caller_pcm(UTTERANCE), 16000) + b"\0\0" * 3200
        print(f"provider {provider}; arrivals spread over {spread:g} s; no sentence cache")
        print(f"{'callers':>7} {'p50':>7} {'p95':>7} {'errors':>7}")
        try:
            async with serving(make_gateway(services, VoiceEngines(stt, tts))) as url:
                for n in counts:
                    results = await asyncio.gather(
                        *(
                            one_caller(url, f"load-{n}-{k}", audio, k * spread / n)
                            for k in range(n)
                        ),
                        return_exceptions=True,
                    )
                    ok = [r for r in results if isinstance(r, float)]
                    errors = len(results) - len(ok)
                    p50 = f"{statistics.median(ok):.2f}s" if ok else "-"
                    p95 = f"{pct(ok, 0.95):.2f}s" if ok else "-"
                    print(f"{n:>7} {p50:>7} {p95:>7} {errors:>7}")
        finally:
            await services.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--callers", default="1,5,10")
    parser.add_argument("--spread", type=float, default=12.0)
    parser.add_argument("--provider", default="scripted")
    options = parser.parse_args()
    counts = [int(n) for n in options.callers.split(",")]
    asyncio.run(main(counts, options.spread, options.provider))
