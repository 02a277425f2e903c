"""`/metrics`: a real voice call moves the gauges, the stage histograms and the STT, TTS
and LLM timers; rescues and errors are counted from the swarm's events."""

from __future__ import annotations

import time

import httpx
from prometheus_client.parser import text_string_to_metric_families

from swarm import ErrorOccurred, Rescued
from tests.voice.speech import piper, silence
from web.metrics import Metrics

from .client import Caller, caller
from .console import call_ended


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample by (name, sorted labels): what Prometheus would store."""
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(gateway) -> dict:
    await gateway.gateway.metrics.settled()
    token = gateway.gateway.auth.token
    async with httpx.AsyncClient(base_url=gateway.url) as client:
        response = await client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        return samples(response.text)


async def test_a_voice_call_shows_in_the_gauges_histograms_and_timers(gateway, tts) -> None:
    tts.clear_cache()  # shared by the session's tests: cached pieces are not timed
    listener = gateway.gateway.journal.hub.listen()
    async with caller(gateway.ws, "web-metrics") as ws:
        c = Caller(ws)
        await c.greeted()
        during = await scrape(gateway)
        assert during[("callswarm_active_calls", (("channel", "web"),))] == 1
        assert during[("callswarm_active_calls", (("channel", "sip"),))] == 0
        assert during[("callswarm_active_sessions", ())] == 1
        await c.speak(silence(0.3) + piper("Do you have any ibuprofen?") + silence(0.2))
        await c.until("turn_metrics")
    await call_ended(gateway, "web-metrics", listener)
    after = await scrape(gateway)
    assert after[("callswarm_active_calls", (("channel", "web"),))] == 0
    assert after[("callswarm_active_sessions", ())] == 0  # disposed with its last call
    for stage in ("stt", "first_token", "first_audio", "voice_to_voice"):
        assert after[("callswarm_turn_stage_seconds_count", (("stage", stage),))] == 1
        assert after[("callswarm_turn_stage_seconds_sum", (("stage", stage),))] > 0
    assert after[("callswarm_stt_seconds_count", ())] >= 1
    assert after[("callswarm_tts_seconds_count", ())] >= 1  # the greeting, at least
    llm = after[("callswarm_llm_seconds_count", (("completion", "scripted"), ("outcome", "ok")))]
    assert llm >= 1
    ended = [v for (name, labels), v in after.items() if name == "callswarm_calls_ended_total"]
    assert ended == [1]


async def test_rescues_and_errors_are_counted_by_kind(gateway) -> None:
    metrics: Metrics = gateway.gateway.metrics
    bus = gateway.services.engine.bus
    now = time.time()
    for strategy in ("retry", "placeholder"):
        bus.publish(
            Rescued(
                session_id="c",
                agent="sales",
                seq=1,
                time=now,
                reason="unknown_tool",
                strategy=strategy,
            )
        )
    bus.publish(
        ErrorOccurred(
            session_id="c",
            agent="sales",
            seq=2,
            time=now,
            error="OperationalError()",
            where="store",
        )
    )
    await metrics.settled()
    got = await scrape(gateway)
    rescued = (("reason", "unknown_tool"), ("strategy", "retry"))
    assert got[("callswarm_rescues_total", rescued)] == 1
    assert got[("callswarm_errors_total", (("where", "store"),))] == 1
