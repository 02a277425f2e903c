"""How many simultaneous callers 2 cores sustain in real time.

    .venv/bin/python benchmarks/voice_capacity.py [--callers 1,2,4,6,8,10] [--spread S]

For each N, N callers each stream the reference utterance in real time (20 ms
frames on the wall clock) at the same moment, each in their own voice and swarm
session on the scripted provider (the LLM is not what this measures). Reported:
voice-to-voice p50/p95, the worst gap between paced reply frames (an underrun is
audible above ~60 ms), and CPU use as a share of both cores. N is sustained when
the worst gap stays under 100 ms and voice to voice p95 stays under twice the
one-caller p50.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from _harness import UTTERANCE, caller_pcm, gateway_vocabulary, pct

from callswarm.app import build_services
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder
from voice.events import ReplyAudioEvent, TurnMetricsEvent
from voice.frames import AudioFrame
from voice.resample import resample
from voice.session import VoiceSession
from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice


async def caller(voice: VoiceSession, audio: bytes, delay: float) -> tuple[float, float]:
    """Stream the utterance live; return voice to voice and the worst gap between reply frames."""
    await asyncio.sleep(delay)  # this caller's arrival, on the wall clock like a real one
    start = time.monotonic()
    for i in range(0, len(audio), 640):
        await asyncio.sleep(max(0.0, start + i / 32000 - time.monotonic()))
        await voice.push(AudioFrame(audio[i : i + 640].ljust(640, b"\0"), 16000))
    last_frame, worst_gap = None, 0.0
    async with asyncio.timeout(300):  # one deadline per turn, not a task per event
        while True:
            event = await voice.events.get()
            if isinstance(event, ReplyAudioEvent):
                now = time.monotonic()
                if last_frame is not None:
                    worst_gap = max(worst_gap, now - last_frame - 0.020)
                last_frame = now
            elif isinstance(event, TurnMetricsEvent):
                return event.metrics.voice_to_voice_s or float("nan"), worst_gap


async def main(
    counts: list[int], workers: int, threads: int, tts_workers: int, spread: float
) -> None:
    # No sentence cache: every caller says the same, and each must pay for its own reply.
    tts = PiperTTS(bundled_voice(), deterministic=True, workers=tts_workers, cache_bytes=0)
    vocabulary = gateway_vocabulary()
    stt = WhisperSTT(bundled_whisper(), vocabulary=vocabulary, workers=workers, threads=threads)
    stt.warm_up()
    pcm, rate = caller_pcm(UTTERANCE)
    audio = resample(pcm, rate, 16000) + b"\0\0" * 16000
    cores = os.cpu_count() or 1
    print(f"STT: {workers} worker(s) x {threads} thread(s); TTS: {tts_workers} worker(s)")
    print(
        "arrivals: all at once"
        if not spread
        else f"arrivals: spread evenly over {spread:g} s (one turn and its reply)"
    )
    print(
        f"{'callers':>7} {'v2v p50':>8} {'v2v p95':>8} {'worst gap':>10} {'CPU':>6} "
        f"{'CPU-s/turn':>10}  sustained"
    )
    baseline = None
    for n in counts:
        with tempfile.TemporaryDirectory() as tmp:
            services = build_services(
                Settings(data_dir=Path(tmp), provider="scripted", idle_timeout=None)
            )
            voices = [
                VoiceSession(
                    f"cap-{n}-{k}",
                    SwarmResponder(services.engine.session(f"cap-{n}-{k}", services.swarm)),
                    stt=stt,
                    tts=tts,
                )
                for k in range(n)
            ]
            cpu, wall = time.process_time(), time.monotonic()
            results = await asyncio.gather(
                *(caller(v, audio, k * spread / n) for k, v in enumerate(voices))
            )
            used = time.process_time() - cpu
            share = used / (time.monotonic() - wall) / cores
            for voice in voices:
                await voice.close()
            await services.aclose()
        v2v = [r[0] for r in results]
        gap = max(r[1] for r in results)
        baseline = baseline or statistics.median(v2v)
        ok = gap < 0.1 and pct(v2v, 0.95) < 2 * baseline
        print(
            f"{n:>7} {statistics.median(v2v):>7.2f}s {pct(v2v, 0.95):>7.2f}s "
            f"{gap * 1000:>8.0f}ms {share:>5.0%} {used / n:>9.2f}s  {'yes' if ok else 'no'}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--callers", default="1,2,4,6,8,10")
    parser.add_argument("--stt-workers", type=int, default=2)
    parser.add_argument("--stt-threads", type=int, default=1)
    parser.add_argument("--tts-workers", type=int, default=2)
    # 0: every turn ends at the same instant, the worst case. 12: callers arrive evenly
    # over one turn of the reference call (5.3 s of caller audio, ~6.5 s of reply).
    parser.add_argument("--spread", type=float, default=0.0)
    options = parser.parse_args()
    counts = [int(n) for n in options.callers.split(",")]
    asyncio.run(
        main(counts, options.stt_workers, options.stt_threads, options.tts_workers, options.spread)
    )
