"""CPU of the event loop's own work in a voice turn: the agents' text turn, and the
caller's frames through the turn detector and the echo gate.

    .venv/bin/python benchmarks/loop_cpu.py [--rounds 40]

*Text turn*: `Session.complete` on the scripted provider, a new caller each round (as
each voice benchmark turn is), safety probe off (its embedding runs in its own thread,
and `voice_latency.py` bills it), for issue 4's reference line and three other lines
of the bench's kinds. *Frames*: issue 4's reference line (Piper), then 8.5 s of a
quiet line while a 6.5 s reply goes out, through `TurnDetector` (with its Silero gauge,
as the gateway builds it) and `EchoGate`, in 20 ms frames as `VoiceSession.push`
feeds them. Process CPU time: the text turn's database work runs in worker threads,
and nothing else runs meanwhile. Run from another checkout for its baseline (the script
puts its own checkout first).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import numpy as np
from _harness import REPO, UTTERANCE, caller_pcm, pct

from callswarm.app import build_services
from callswarm.settings import Settings
from voice.echo import EchoGate
from voice.resample import resample
from voice.vad import TurnDetector, VadConfig
from voice.voiced import silero_latest

LINES = {
    "reference": UTTERANCE,
    "question": "Do you have anything for hay fever that won't make me drowsy?",
    "two items": "Can I get one box of ibuprofen and two packs of loratadine please",
    "hours": "What time do you close today?",
}


async def text_turns(rounds: int) -> dict[str, list[float]]:
    cpu: dict[str, list[float]] = {kind: [] for kind in LINES}
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp), provider="scripted", idle_timeout=None, safety_probe=False
        )
        services = build_services(settings)
        try:
            for n in range(rounds + 2):
                for kind, line in LINES.items():
                    session = services.engine.session(f"{kind}-{n}", services.swarm)
                    started = time.process_time()
                    await session.complete(line)
                    if n >= 2:  # the first rounds fill the search's and the database's caches
                        cpu[kind].append(time.process_time() - started)
        finally:
            await services.aclose()
    return cpu


def frame_turns(rounds: int) -> list[float]:
    pcm, rate = caller_pcm(UTTERANCE)
    line = resample(pcm, rate, 16000)
    quiet = np.random.default_rng(0).normal(0, 30, 16000 * 85 // 10).astype("<i2").tobytes()
    reply = (np.sin(np.arange(16000 * 65 // 10) / 7.0) * 3000).astype("<i2").tobytes()
    audio, frame = line + quiet, 640
    detector = TurnDetector(VadConfig(), 16000, gauge=silero_latest)
    gate = EchoGate(16000)
    reply_from = len(line) // frame + 25  # the reply starts 0.5 s after the line
    now, cpu = 0.0, []
    for n in range(rounds + 2):
        started = time.process_time()
        for k, offset in enumerate(range(0, len(audio) - frame + 1, frame)):
            at = now + k * 0.02
            j = k - reply_from
            if 0 <= j < len(reply) // frame:
                gate.played(reply[j * frame : (j + 1) * frame], at)
            chunk = audio[offset : offset + frame]
            gate.heard(chunk)
            detector.feed(chunk, echo=lambda at=at: gate.is_echo(at))
        now += len(audio) / 32000
        if n >= 2:
            cpu.append(time.process_time() - started)
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    print(f"code: {REPO}, {args.rounds} rounds")
    print(f"{'measure':<22} {'CPU p50':>9} {'p95':>9} {'min':>9}")
    rows = {f"text turn, {k}": v for k, v in asyncio.run(text_turns(args.rounds)).items()}
    rows["frames of a turn"] = frame_turns(args.rounds)
    for label, values in rows.items():
        print(
            f"{label:<22} {1000 * pct(values, 0.5):>7.1f}ms {1000 * pct(values, 0.95):>7.1f}ms "
            f"{1000 * min(values):>7.1f}ms"
        )


if __name__ == "__main__":
    main()
