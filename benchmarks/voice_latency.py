"""Voice-to-voice latency per stage, fed in real time like a caller.

    .venv/bin/python benchmarks/voice_latency.py [--turns 20] [--provider scripted|local|both]
                                                [--say "words" --say "other words" ...]
                                                [--end model|silence] [--read-ahead alternate]
                                                [--parts alternate]

The caller is the 4.35 s utterance of issue 4 ("Hello, I would like to buy two
boxes of paracetamol for my fever, please."), spoken by Piper and streamed in
20 ms frames on the wall clock, followed by silence. Turns end as the gateway ends
them: Smart Turn and the pause's words (`--end silence`: 500 ms of silence, what this
benchmark measured until 2026-12-05). Voice to voice runs from
the last voiced sample in to the first reply audio out. CPU is process time per
turn (all threads).

The reference utterance is plain shopping, which the agents' routers answer in
code without asking the model (agents/routing.py). `--say` (repeatable) takes other
words, such as questions only the model can answer; turns take them in turn. Give
several: llama.cpp keeps the previous call's tokens, and the same words every turn
would find the whole prompt already read.

`--read-ahead alternate` hands the pause's words to the agents ahead of the turn
(`Anticipator`, the gateway's way) on even turns only, and prints both halves: the
two are measured in one process, minutes apart, so the host's drift between runs
(CPU per turn moves by 0.1 s from one run to the next here) does not decide.
`--parts alternate` does the same with Piper's parts (`PiperTTS.speak`): on odd
turns every piece is said whole, as before 2026-12-06.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from _harness import REPO, UTTERANCE, caller_pcm, gateway_vocabulary, pct
from sqlmodel import Session

from callswarm.app import build_services
from callswarm.bundled import QWEN_05B, ensure_model
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder, TurnRecorder
from models.turns import latency_summary
from voice.events import TurnMetricsEvent
from voice.frames import AudioFrame
from voice.resample import resample
from voice.session import VoiceSession
from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice
from voice.turn import EndOfTurn, SmartTurn, installed_smart_turn


class Whole:
    """Piper without its parts: the voice loop says every piece whole."""

    def __init__(self, tts: PiperTTS) -> None:
        self._tts = tts
        self.sample_rate = tts.sample_rate
        self.on_synthesis = None

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        return await self._tts.synthesize(text, urgent=urgent)


class Unanticipating:
    """The agents without their read-ahead: they hear the caller only when the turn ends."""

    def __init__(self, agents: SwarmResponder) -> None:
        self._agents = agents

    def reply(self, text: str) -> AsyncIterator[str]:
        return self._agents.reply(text)

    async def interrupted(self, spoken: str) -> None:
        await self._agents.interrupted(spoken)


async def one_provider(
    provider: str,
    turns: int,
    stt: WhisperSTT,
    tts: PiperTTS,
    callers: list[bytes],
    turn: EndOfTurn | None,
    halves: dict[str, list[tuple[float, float, float]]] | None = None,
    alternating: str = "read-ahead",
) -> dict:
    rows: dict[str, list[float]] = {"cpu_s": [], "loop_cpu_s": []}
    with tempfile.TemporaryDirectory() as tmp:
        model = ensure_model(QWEN_05B, REPO / "data") if provider == "local" else None
        services = build_services(
            Settings(
                data_dir=Path(tmp), provider=provider, local_model_path=model, idle_timeout=None
            )
        )
        await services.warm_up()
        for n in range(turns):
            session = services.engine.session(f"bench-{n}", services.swarm)
            agents = SwarmResponder(session)
            ahead = halves is None or n % 2 == 0
            off = not ahead
            responder = Unanticipating(agents) if off and alternating == "read-ahead" else agents
            voice = VoiceSession(
                f"bench-{n}",
                responder,
                stt=stt,
                tts=Whole(tts) if off and alternating == "parts" else tts,
                turn=turn,
            )
            recorder = TurnRecorder(services.db, session.client_id)
            tts.clear_cache()  # each turn pays for its own speech: the worst case
            cpu, loop_cpu = time.process_time(), time.thread_time()
            start = time.monotonic()
            caller = callers[n % len(callers)]
            for i in range(0, len(caller), 640):  # 20 ms frames, paced like a live caller
                await asyncio.sleep(max(0.0, start + i / 32000 - time.monotonic()))
                await voice.push(AudioFrame(caller[i : i + 640].ljust(640, b"\0"), 16000))
            # One deadline for the whole turn, read like the gateway reads its events: a
            # wait_for per event would start a task per frame and bill it to the turn.
            async with asyncio.timeout(120):
                while not isinstance(event := await voice.events.get(), TurnMetricsEvent):
                    pass  # every event of the turn; its metrics come last
            rows["cpu_s"].append(time.process_time() - cpu)
            rows["loop_cpu_s"].append(time.thread_time() - loop_cpu)
            metrics = event.metrics
            if halves is not None and n >= 2 and metrics.voice_to_voice_s is not None:
                # The first turn of each half loads and warms what it uses: left out.
                halves["on" if ahead else "off"].append(
                    (rows["cpu_s"][-1], metrics.voice_to_voice_s, metrics.first_token_s or 0.0)
                )
            await recorder.record(event)
            await voice.close()
        # The stages as the gateway stores them, summarised by the database.
        with Session(services.db) as db:
            summary = latency_summary(db)
        await services.aclose()
    return {stage: (s.p50, s.p95) for stage, s in summary.items()} | {
        stage: (statistics.median(values), pct(values, 0.95)) for stage, values in rows.items()
    }


async def main(
    turns: int, providers: list[str], lines: list[str], end: str, alternate: str | None
) -> None:
    tts = PiperTTS(bundled_voice(), deterministic=True)
    callers = [
        # Silence past the end-of-turn hold (1.6 s): a line the model hears as unfinished
        # still ends, and the VAD only moves on the audio it is given.
        resample(*caller_pcm(words), 16000) + b"\0\0" * 32000
        for words in lines
    ]
    vocabulary = gateway_vocabulary()
    stt = WhisperSTT(bundled_whisper(), vocabulary=vocabulary)
    stt.warm_up()
    tts.warm_up()
    if alternate == "parts":
        # The whole turns' first pieces run on two threads, as before parts: made here,
        # not in the first measured turn.
        tts.synthesize_sync("Hello.", urgent=True)
    turn: SmartTurn | None = None
    if end == "model":
        path = installed_smart_turn(REPO / "data")
        if path is None:
            raise SystemExit(
                "no end-of-turn model: run `callswarm model install`, or --end silence"
            )
        turn = SmartTurn(path)
        turn.warm_up()
    print(
        "callers: "
        + "; ".join(
            f"{w!r} ({len(c) / 32000 - 2:.2f} s)" for w, c in zip(lines, callers, strict=True)
        )
        + f", each then 2 s of silence; {turns} turns per provider; end of turn: {end}"
    )
    print(f"{'provider':<9} {'stage':<17} {'p50':>7} {'p95':>7}")
    for provider in providers:
        halves: dict[str, list[tuple[float, float, float]]] | None = (
            {"on": [], "off": []} if alternate else None
        )
        rows = await one_provider(
            provider, turns, stt, tts, callers, turn, halves, alternate or "read-ahead"
        )
        for stage, (p50, p95) in rows.items():
            if p50 is not None:
                print(f"{provider:<9} {stage:<17} {p50:>6.2f}s {p95:>6.2f}s")
        if halves is not None:
            print(
                f"{'provider':<9} {alternate:<10} {'turns':>5} {'v2v p50':>8} {'p95':>6}"
                f" {'first text p50':>15} {'CPU p50':>8} {'p95':>6}"
            )
            for half, got in halves.items():
                cpu, v2v, first = (sorted(column) for column in zip(*got, strict=True))
                print(
                    f"{provider:<9} {half:<10} {len(got):>5} {statistics.median(v2v):>7.3f}s"
                    f" {pct(v2v, 0.95):>5.2f}s {statistics.median(first):>14.3f}s"
                    f" {statistics.median(cpu):>7.3f}s {pct(cpu, 0.95):>5.2f}s"
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--provider", choices=["scripted", "local", "both"], default="both")
    parser.add_argument("--say", action="append", help="the caller's words (repeatable)")
    parser.add_argument(
        "--end",
        choices=["model", "silence"],
        default="model",
        help="end of turn: Smart Turn and the pause's words, as the gateway runs, or 500 ms",
    )
    parser.add_argument(
        "--read-ahead",
        choices=["on", "alternate"],
        default="on",
        help="alternate: the agents read the pause's words ahead on even turns only",
    )
    parser.add_argument(
        "--parts",
        choices=["on", "alternate"],
        default="on",
        help="alternate: urgent pieces spoken in parts on even turns only, whole on odd",
    )
    options = parser.parse_args()
    if options.read_ahead == options.parts == "alternate":
        parser.error("alternate one thing at a time")
    chosen = ["scripted", "local"] if options.provider == "both" else [options.provider]
    asyncio.run(
        main(
            options.turns,
            chosen,
            options.say or [UTTERANCE],
            options.end,
            "read-ahead"
            if options.read_ahead == "alternate"
            else "parts"
            if options.parts == "alternate"
            else None,
        )
    )
