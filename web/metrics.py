"""`/metrics` in Prometheus' text format: what one gateway is doing and how fast.

Each instance serves its own; Prometheus scrapes them all and sums. Counters and
histograms are fed by the swarm's event bus (turns, rescues, errors, calls ended) and
by the timing hooks of Whisper, Piper and the swarm's completions; gauges are read
when scraped.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter as Tally
from collections.abc import Iterator
from contextlib import suppress

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram
from prometheus_client import generate_latest as render
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from models.calls import LOST
from swarm import CompletionTiming, Engine, ErrorOccurred, Rescued
from web.auth import Operator
from web.call_events import CallEnded, TurnTaken
from web.live import LiveCalls

log = logging.getLogger("web.metrics")

# Seconds: voice turns live between 0.2 and a few seconds, a local model's step up to 30.
LATENCY = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)


class _Live(Collector):
    """Gauges read at scrape time: nothing to keep in step."""

    def __init__(self, calls: LiveCalls, engine: Engine) -> None:
        self._calls, self._engine = calls, engine

    def collect(self) -> Iterator[GaugeMetricFamily]:
        calls = GaugeMetricFamily(
            "callswarm_active_calls", "Callers connected to this gateway now.", labels=["channel"]
        )
        by_channel = Tally(call.channel.value for call in self._calls)
        for channel in ("sip", "web"):
            calls.add_metric([channel], by_channel[channel])
        yield calls
        yield GaugeMetricFamily(
            "callswarm_active_sessions",
            "Swarm sessions held in memory (live calls, and text callers not yet idle).",
            value=len(self._engine.sessions),
        )


class Metrics:
    def __init__(self, calls: LiveCalls, engine: Engine) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.stage = Histogram(
            "callswarm_turn_stage_seconds",
            "Voice turn latency per stage: stt (end of speech to transcript), first_token "
            "(transcript to first reply text), first_audio (text to audio), voice_to_voice.",
            ["stage"],
            buckets=LATENCY,
            registry=r,
        )
        self.stt = Histogram(
            "callswarm_stt_seconds",
            "Whisper's decoding of one utterance.",
            buckets=LATENCY,
            registry=r,
        )
        self.tts = Histogram(
            "callswarm_tts_seconds",
            "Piper's synthesis of one piece of a reply (cached pieces not counted).",
            buckets=LATENCY,
            registry=r,
        )
        self.turn = Histogram(
            "callswarm_turn_decision_seconds",
            "The end-of-turn model's judgement of one pause.",
            buckets=LATENCY,
            registry=r,
        )
        self.llm = Histogram(
            "callswarm_llm_seconds",
            "One completion, request to last token, per completion backend.",
            ["completion", "outcome"],
            buckets=LATENCY,
            registry=r,
        )
        self.rescues = Counter(
            "callswarm_rescues",
            "Model outputs the swarm rescued, by what was wrong and how it was mended.",
            ["reason", "strategy"],
            registry=r,
        )
        self.errors = Counter(
            "callswarm_errors",
            "Errors the swarm reported, by where they happened.",
            ["where"],
            registry=r,
        )
        self.calls_ended = Counter(
            "callswarm_calls_ended", "Calls that ended, by outcome.", ["outcome"], registry=r
        )
        self.calls_lost = Counter(
            "callswarm_calls_lost",
            "Calls a gateway left open when it died, ended here: by this gateway as it "
            "restarted, or by a peer sharing the database once it stopped beating.",
            registry=r,
        )
        self.recordings_lost = Counter(
            "callswarm_recordings_lost",
            "Voice calls whose recording the disk would not take (full or failing).",
            registry=r,
        )
        self.interrupted = Counter(
            "callswarm_barge_ins", "Voice turns the caller cut by speaking.", registry=r
        )
        r.register(_Live(calls, engine))
        self._subscription = engine.bus.subscribe(10_000)
        self._task: asyncio.Task[None] | None = None
        self._idle = asyncio.Event()

    def completion(self, timing: CompletionTiming) -> None:
        """For `Engine.on_completion`."""
        outcome = "ok" if timing.ok else "failed"
        self.llm.labels(timing.completion, outcome).observe(timing.seconds)

    def observe(self, event: object) -> None:
        if isinstance(event, TurnTaken):
            timed = event.metrics
            for stage, value in (
                ("stt", timed.stt_s),
                ("first_token", timed.first_token_s),
                ("first_audio", timed.first_audio_s),
                ("voice_to_voice", timed.voice_to_voice_s),
            ):
                if value is not None:
                    self.stage.labels(stage).observe(value)
            if timed.interrupted:
                self.interrupted.inc()
        elif isinstance(event, CallEnded):
            self.calls_ended.labels(str(event.outcome)).inc()
            if event.ended_by == LOST:
                self.calls_lost.inc()
            if event.recording_lost:
                self.recordings_lost.inc()
        elif isinstance(event, Rescued):
            self.rescues.labels(event.reason, event.strategy).inc()
        elif isinstance(event, ErrorOccurred):
            self.errors.labels(event.where).inc()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="metrics")

    async def _run(self) -> None:
        async for event in self._subscription:
            self.observe(event)
            if self._subscription.empty:
                self._idle.set()

    async def settled(self) -> None:
        """Until every event published so far is counted (observe() never awaits)."""
        while not self._subscription.empty:
            self._idle.clear()
            await self._idle.wait()

    def render(self) -> bytes:
        return render(self.registry)

    async def aclose(self) -> None:
        self._subscription.close()
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task


router = APIRouter(tags=["gateway"])


@router.get("/metrics", response_class=Response)
async def metrics(request: Request, _: Operator) -> Response:
    """Prometheus metrics of this gateway (scrape with the operator token as Bearer)."""
    return Response(request.app.state.gateway.metrics.render(), media_type=CONTENT_TYPE_LATEST)
