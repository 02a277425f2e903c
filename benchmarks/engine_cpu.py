"""CPU seconds per call of each voice engine, on their own, with process time.

    .venv/bin/python benchmarks/engine_cpu.py [--repeat 9]

Whisper decodes issue 4's reference utterance, biased with the catalogue as the
gateway does, with numpy's BLAS at one thread (as WhisperSTT sets it) and at one
per core (numpy's default). Piper says the reference reply, piece by piece as the
voice session cuts it, on its plain (one thread) and urgent (two threads) voices.
Process time counts every thread, spinning ones included.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from functools import partial

from _harness import UTTERANCE, caller_pcm, gateway_vocabulary, pct
from threadpoolctl import threadpool_limits

from voice.resample import resample
from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice

REPLY = [
    "I've added 2 packs of Paracetamol,",
    "at 2 dollars 99 each.",
    "That's 5 dollars 98.",
    "Anything else?",
]


def cpu_of(calls: dict[str, Callable[[], object]], repeat: int) -> list[tuple]:
    """Per call: median and p95 of CPU seconds, and the median wall seconds, of
    `repeat` rounds. The calls take turns within a round, so a drift in this VM's
    speed falls on all of them alike."""
    cpu: dict[str, list[float]] = {label: [] for label in calls}
    wall: dict[str, list[float]] = {label: [] for label in calls}
    for _ in range(repeat):
        for label, call in calls.items():
            started_cpu, started = time.process_time(), time.perf_counter()
            call()
            cpu[label].append(time.process_time() - started_cpu)
            wall[label].append(time.perf_counter() - started)
    return [
        (
            label,
            statistics.median(cpu[label]),
            pct(cpu[label], 0.95),
            statistics.median(wall[label]),
        )
        for label in calls
    ]


def main(repeat: int) -> None:
    voices = {
        graph: PiperTTS(bundled_voice(), deterministic=True, cache_bytes=0, rewrite_graph=rewrite)
        for graph, rewrite in (("rewritten", True), ("as shipped", False))
    }
    tts = voices["rewritten"]
    caller = resample(*caller_pcm(UTTERANCE), 16000)
    vocabulary = gateway_vocabulary()
    stt = WhisperSTT(bundled_whisper(), vocabulary=vocabulary)  # sets BLAS to one thread
    stt.warm_up()
    spoken = sum(len(tts.synthesize_sync(piece)) for piece in REPLY) / 2 / tts.sample_rate

    def decode(blas: int) -> None:
        with threadpool_limits(blas, user_api="blas"):
            stt.transcribe_sync(caller)

    def say(voice: PiperTTS, urgent: bool) -> None:
        for piece in REPLY:
            voice.synthesize_sync(piece, urgent=urgent)

    calls: dict[str, Callable[[], object]] = {}
    for blas in (1, os.cpu_count() or 1):
        decode(blas)  # BLAS threads start on first use
        calls[f"Whisper decode, BLAS {blas} thread(s)"] = partial(decode, blas)
    for urgent in (False, True):
        for graph, voice in voices.items():
            say(voice, urgent)
            label = f"Piper, {spoken:.1f} s reply, {'urgent' if urgent else 'plain'}, {graph}"
            calls[label] = partial(say, voice, urgent)
    print(f"{'engine call':<50} {'CPU p50':>8} {'CPU p95':>8} {'wall p50':>9}")
    for label, p50, p95, wall in cpu_of(calls, repeat):
        print(f"{label:<50} {p50:>7.3f}s {p95:>7.3f}s {wall:>8.3f}s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    main(parser.parse_args().repeat)
