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

from _harness import UTTERANCE, gateway_vocabulary, pct
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


def cpu_of(call, repeat: int) -> tuple[float, float, float]:
    """Median and p95 of CPU seconds, and the median wall seconds, of `repeat` calls."""
    cpu, wall = [], []
    for _ in range(repeat):
        started_cpu, started = time.process_time(), time.perf_counter()
        call()
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
    return statistics.median(cpu), pct(cpu, 0.95), statistics.median(wall)


def main(repeat: int) -> None:
    tts = PiperTTS(bundled_voice(), deterministic=True, cache_bytes=0)
    caller = resample(tts.synthesize_sync(UTTERANCE), tts.sample_rate, 16000)
    vocabulary = gateway_vocabulary()
    stt = WhisperSTT(bundled_whisper(), vocabulary=vocabulary)  # sets BLAS to one thread
    stt.warm_up()
    spoken = sum(len(tts.synthesize_sync(piece)) for piece in REPLY) / 2 / tts.sample_rate
    rows = []
    for blas in (1, os.cpu_count() or 1):
        with threadpool_limits(blas, user_api="blas"):
            stt.transcribe_sync(caller)  # BLAS threads start on first use
            rows.append(
                (
                    f"Whisper decode, BLAS {blas} thread(s)",
                    *cpu_of(lambda: stt.transcribe_sync(caller), repeat),
                )
            )
    for urgent in (False, True):
        label = f"Piper, the {spoken:.1f} s reply, {'urgent' if urgent else 'plain'}"

        def say(urgent: bool = urgent) -> None:
            for piece in REPLY:
                tts.synthesize_sync(piece, urgent=urgent)

        rows.append((label, *cpu_of(say, repeat)))
    print(f"{'engine call':<44} {'CPU p50':>8} {'CPU p95':>8} {'wall p50':>9}")
    for label, p50, p95, wall in rows:
        print(f"{label:<44} {p50:>7.3f}s {p95:>7.3f}s {wall:>8.3f}s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    main(parser.parse_args().repeat)
