"""The gateway's sockets end to end on the embedded model: offline, no key."""

from __future__ import annotations

import re

from sqlmodel import Session

from callswarm.app import build_services
from callswarm.settings import Settings
from models.search import search_products
from tests.voice.speech import hacking_cough, piper, silence

from .client import Caller, caller, typed
from .conftest import start, stop
from .console import call_ended, operator


async def test_voice_and_text_sockets_on_the_embedded_model(tmp_path, bundled_model, stt, tts):
    services = build_services(
        Settings(
            data_dir=tmp_path, provider="local", local_model_path=bundled_model, idle_timeout=None
        )
    )
    await services.warm_up()
    running, server, task = await start(services, stt, tts)
    try:
        listener = running.gateway.journal.hub.listen()
        async with caller(running.ws, "web-local") as ws:
            c = Caller(ws)
            await c.greeted()
            # A cough first: Whisper makes words of it, and nobody answers them.
            await c.speak(hacking_cough(0.4, 1) + silence(0.2))
            assert (await c.until("transcript"))["text"] == ""
            await c.speak(piper("Do you have any ibuprofen?") + silence(0.2))
            # What Whisper writes for the name varies with the CPU's int8 kernels ("Do
            # you have any ibupurlfin?" on one machine): the catalogue must still read it.
            heard = (await c.until("transcript"))["text"]
            with Session(services.db) as db:
                [hit] = search_products(db, heard, limit=1)
            assert hit.product.name.startswith("Ibuprofen"), heard
            done = await c.until("reply_done", within=300)
            assert "ibuprofen" in done["text"].lower()
            assert c.of("agent")[-1]["agent"] == "sales"
            assert len(c.audio) > 16000  # spoken back
        await call_ended(running, "web-local", listener)
        # The same caller types on the seed's text socket: same session, same agent.
        async with typed(running.ws, "web-local") as ws:
            # (Opening hours are facts code says now; a symptom still takes the model.)
            await ws.send("Have you got anything for a sore throat?")
            reply = await ws.recv()
            assert "throat" in reply.lower(), reply
        # The operators see the voice call as the model ran it: tools, hand-off, latency.
        async with operator(running) as api:
            calls = (await api.get("/api/calls", params={"caller": "web-local"})).json()
            voice_call = calls["items"][-1]  # newest first: the voice call came first
            body = (await api.get(f"/api/calls/{voice_call['id']}/transcript")).json()
            said = [m["content"] for m in body["messages"] if m["role"] == "user"]
            assert said == [heard], said  # the cough never reached the agents
            tools = [c["name"] for m in body["messages"] for c in m["tool_calls"]]
            assert "navigate_to_sales" in tools, tools
            assert all(c["output"] for m in body["messages"] for c in m["tool_calls"])
            kinds = {e["kind"] for e in body["events"]}
            assert {"agent_changed", "turn"} <= kinds
            assert "sales" in voice_call["agents"]
            # /metrics timed the embedded model's completions and the voice turn's stages.
            await running.gateway.metrics.settled()
            metrics = (await api.get("/metrics")).text
            local = re.search(
                r'^callswarm_llm_seconds_count\{completion="local",outcome="ok"\} (\S+)$',
                metrics,
                re.M,
            )
            assert local and float(local.group(1)) >= 2, metrics[-2000:]
            assert 'callswarm_turn_stage_seconds_count{stage="voice_to_voice"} 1.0' in metrics
    finally:
        await stop(running, server, task)
