"""The gateway's sockets end to end on the embedded model: offline, no key."""

from __future__ import annotations

from websockets.asyncio.client import connect

from callswarm.app import build_services
from callswarm.settings import Settings
from tests.voice.speech import piper, silence

from .client import Caller, caller
from .conftest import start, stop


async def test_voice_and_text_sockets_on_the_embedded_model(tmp_path, bundled_model, stt, tts):
    services = build_services(
        Settings(
            data_dir=tmp_path, provider="local", local_model_path=bundled_model, idle_timeout=None
        )
    )
    await services.warm_up()
    running, server, task = await start(services, stt, tts)
    try:
        async with caller(running.ws, "web-local") as ws:
            c = Caller(ws)
            await c.greeted()
            await c.speak(piper(tts, "Do you have any ibuprofen?") + silence(0.2))
            assert "ibuprofen" in (await c.until("transcript"))["text"].lower()
            done = await c.until("reply_done", within=300)
            assert "ibuprofen" in done["text"].lower()
            assert c.of("agent")[-1]["agent"] == "sales"
            assert len(c.audio) > 16000  # spoken back
        # The same caller types on the seed's text socket: same session, same agent.
        async with connect(f"{running.ws}/api/v1/session/web-local") as ws:
            await ws.send("What are your opening hours?")
            reply = await ws.recv()
            assert "monday" in reply.lower() or "open" in reply.lower()
    finally:
        await stop(running, server, task)
