"""A hands-free browser caller who stops to think mid-sentence is waited for, through the
gateway as `serve` wires it: Smart Turn installed, the real Whisper, the socket."""

from __future__ import annotations

import asyncio
from pathlib import Path

from callswarm.app import build_services
from callswarm.serve import end_of_turn
from callswarm.settings import Settings
from tests.voice.speech import piper, silence, trim

from .client import Caller, caller
from .conftest import start, stop

REPO = Path(__file__).resolve().parents[2]


async def test_a_caller_pausing_mid_sentence_gets_one_reply_to_the_whole_sentence(
    tmp_path, stt, tts
) -> None:
    turn = end_of_turn(Settings(data_dir=REPO / "data"))
    assert turn is not None, "make test installs Smart Turn (callswarm model install)"
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    running, server, task = await start(services, stt, tts, turn)
    try:
        async with caller(running.ws, "web-pause") as ws:
            c = Caller(ws)
            await c.greeted()
            line = (
                silence(0.3)
                + trim(piper("Do you have any"))
                + silence(0.9)
                + trim(piper("ibuprofen?"))
                + silence(2.5)
            )
            step, loop = 640, asyncio.get_running_loop()
            begun = loop.time()
            for n, i in enumerate(range(0, len(line), step)):
                # A microphone's pace, hands free: no button is released.
                await asyncio.sleep(max(0.0, begun + n * 0.02 - loop.time()))
                await ws.send(line[i : i + step].ljust(step, b"\0"))
            transcript = await c.until("transcript")
            done = await c.until("reply_done")
        assert "any" in transcript["text"].lower() and "ibuprofen" in transcript["text"].lower()
        assert "Ibuprofen" in done["text"]
        assert len(c.of("transcript")) == 1 and len(c.of("thinking")) == 1
    finally:
        await stop(running, server, task)
