"""A gateway that serves while it warms up, on the embedded model: callers who come early
are told, greeted by code as soon as the voice is loaded, and answered once the model is."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import httpx
import pytest

from callswarm.app import build_services
from callswarm.serve import make_gateway
from callswarm.settings import Settings
from callswarm.warmup import Step, Warmup
from swarm.backends.local import LlamaCppBackend
from tests.voice.speech import piper, silence
from web.gateway import VoiceEngines

from .client import Caller, caller
from .conftest import serving, stop


async def test_a_caller_during_the_warm_up_is_greeted_then_answered_once_warm(
    tmp_path, bundled_model, stt, tts
) -> None:
    services = build_services(
        Settings(
            data_dir=tmp_path, provider="local", local_model_path=bundled_model, idle_timeout=None
        )
    )
    # The test decides when each part is loaded: the voice when the gate opens, the
    # triage model when the backend's lock (held here) is let go.
    voice_gate = threading.Event()

    def load(step: Step) -> VoiceEngines:
        voice = step("piper", lambda: tts if voice_gate.wait(120) else None)
        return VoiceEngines(step("whisper", lambda: stt), voice, step("end_of_turn", lambda: None))

    [backend] = services.backends.values()
    assert isinstance(backend, LlamaCppBackend)
    backend._lock.acquire()
    held = True
    warmup = Warmup(services, load)
    running, server, task = await serving(services, make_gateway(services, warming=warmup))
    warming = asyncio.get_running_loop().create_task(warmup.run())
    try:
        async with httpx.AsyncClient(base_url=running.url) as http:
            assert (await http.get("/api/ping")).json() == {"ok": True}
            early = (await http.get("/api/ready")).json()
            assert early["ready"] is False and early["voice"] is False
            assert early["stages"]["model:triage"] in {"waiting", "warming"}
            async with caller(running.ws, "web-early") as ws:
                c = Caller(ws)
                await c.send({"type": "start", "sample_rate": 16000})
                told = await c.until("warming")
                assert told["stages"]["piper"] in {"waiting", "warming"}
                assert not c.of("ready")
                voice_gate.set()
                # Greeted by code while the model is still warming: it is not needed.
                assert (await c.until("ready"))["resumed"] is False
                await c.until("started")
                greeting = await c.until("reply_done")
                assert "pharmacy" in greeting["text"].lower()
                c.audio.clear()
                await c.speak(piper("Hello, I need something for a headache.") + silence(0.2))
                assert "headache" in (await c.until("transcript"))["text"].lower()
                # Heard, and waiting for its model, which is still warming (a first start:
                # the voice loaded first).
                assert (await http.get("/api/ready")).json()["stages"]["model:triage"] == "warming"
                backend._lock.release()
                held = False
                done = await c.until("reply_done", within=300)
                assert done["text"] and "didn't manage" not in done["text"].lower(), done
                assert not c.of("error")
                assert len(c.audio) > 16000  # the answer was spoken
            await warmup.wait()
            late = (await http.get("/api/ready")).json()
            assert late["ready"] is True and late["voice"] is True
            assert set(late["stages"].values()) == {"ready"}
    finally:
        if held:
            backend._lock.release()
        await warming
        await stop(running, server, task)


async def test_without_local_models_or_voice_the_warm_up_is_over_at_once(tmp_path) -> None:
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    try:
        warmup = Warmup(services, None)
        await warmup.run()
        readiness = warmup.readiness()
        assert readiness.ready and not readiness.voice and not warmup.has_voice
        assert dict(readiness.stages) == {"model:triage": "ready", "model:sales": "ready"}
    finally:
        await services.aclose()


async def test_ready_does_not_wait_for_the_agencys_warm_and_closing_does(tmp_path) -> None:
    """`Agency.warm` reads beside the warm-up: `/api/ready` never waited for what it
    reads (docs/agency.md), and the services are not closed under it."""
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    let = threading.Event()
    warmed: list[str] = []

    def warm(db) -> None:
        if let.wait(60):
            warmed.append("read")

    services.agency = replace(services.agency, warm=warm)
    try:
        warmup = Warmup(services, None)
        await warmup.run()
        assert warmup.readiness().ready
        [reading] = services.agency_warming
        assert not reading.done() and warmed == []
    finally:
        let.set()
        await services.aclose()
    assert reading.done() and warmed == ["read"]


async def test_a_voice_that_cannot_load_is_reported_and_the_models_still_warm(tmp_path) -> None:
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))

    def load(step: Step) -> VoiceEngines:
        step("piper", lambda: (_ for _ in ()).throw(OSError("no voice file")))
        raise AssertionError("not reached")

    try:
        warmup = Warmup(services, load)
        await warmup.run()
        readiness = warmup.readiness()
        assert readiness.ready and not readiness.voice
        assert readiness.stages["piper"] == "failed"
        assert readiness.stages["whisper"] == readiness.stages["end_of_turn"] == "failed"
        assert readiness.stages["model:triage"] == readiness.stages["model:sales"] == "ready"
        # The page is told there is no voice, instead of "warming" for ever.
        assert not warmup.has_voice
        with pytest.raises(RuntimeError, match="no voice file"):
            await warmup.voice()
    finally:
        await services.aclose()
