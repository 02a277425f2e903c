"""Hostile frames on both caller sockets: thousands of them, from a seeded grammar of
what goes wrong (audio of any length and content, control messages with every field
wrong, JSON that is not an object or nests too deep, text too long or not text). No
socket may be dropped by the gateway, no exception may reach uvicorn, and afterwards
the same caller's session still answers a real turn.

A failure prints the seed and the frame's number: `FUZZ_SEED=... pytest -k fuzz`
replays it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random

import pytest
from sqlmodel import Session, func, select

from models.tables import MessageRow
from tests.voice.speech import piper, silence

from .client import Caller, caller, typed

# PostgreSQL refuses what SQLite takes (a NUL character in text): both run.
pytestmark = pytest.mark.databases


@pytest.fixture(autouse=True)
def phrases_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sockets under 2,300 frames, on the safety phrases alone: the probe reads each
    text turn in about 0.2 s, which took these tests to their timeout. The probe under
    the same frames is `test_fuzzed_lines_never_break_the_safety_probe` below."""
    monkeypatch.setenv("CALLSWARM_SAFETY_PROBE", "false")


SEED = int(os.environ.get("FUZZ_SEED", "20261204"))
VOICE_FRAMES = 1500
TEXT_FRAMES = 800

_TYPES = ["start", "release", "interrupt", "dance", "", None, 5, "START", "start ", ["start"]]
_RATES = [8000, 16000, 48000, 0, -1, 11025, "16000", None, True, 2**70, 1.5, [], {}]
_ENCODINGS = ["pcm16", "opus", None, 5, "", "PCM16"]


def voice_frame(rng: random.Random) -> str | bytes:
    roll = rng.random()
    if roll < 0.35:
        size = rng.choice([0, 1, 2, 639, 640, 641, 1280, 96_000, 96_002, rng.randrange(4000)])
        fill = rng.choice(["random", "zeros", "loud"])
        if fill == "random":
            return rng.randbytes(size)
        return (b"\x00" if fill == "zeros" else b"\xff\x7f") * (
            size // (1 if fill == "zeros" else 2)
        )
    if roll < 0.70:
        message: dict = {"type": rng.choice(_TYPES)}
        if rng.random() < 0.7:
            message["sample_rate"] = rng.choice(_RATES)
        if rng.random() < 0.3:
            message["encoding"] = rng.choice(_ENCODINGS)
        if rng.random() < 0.2:
            message[rng.choice(["x", "type2", "", "sample_rate "])] = rng.random()
        return json.dumps(message)
    if roll < 0.85:
        depth = rng.choice([1, 10, 1000, 100_000])
        return rng.choice(
            ["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth, "3", "null", '"x"']
        )
    return rng.choice(["x" * rng.choice([1, 5000, 200_000]), "", "{", "\u202e\u0000é漢", "{}"])


def text_frame(rng: random.Random) -> str | bytes:
    roll = rng.random()
    if roll < 0.3:
        return rng.randbytes(rng.randrange(1, 200))
    if roll < 0.5:
        return "y" * rng.randrange(4001, 20_000)
    if roll < 0.6:
        return rng.choice(["", " ", "\n\t "])
    alphabet = "abcdefghij klmnop qrstuvwxyz0123456789 .,?!'é漢\u202e\u0000"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 200)))


def no_crash(caplog) -> None:
    crashes = [r for r in caplog.records if r.name.startswith("uvicorn") and r.levelno >= 40]
    assert crashes == [], [r.getMessage() for r in crashes]


async def test_fuzzed_voice_frames_drop_no_socket_and_the_session_still_answers(
    gateway, caplog
) -> None:
    caplog.set_level(logging.ERROR)
    rng = random.Random(SEED)
    async with caller(gateway.ws, "web-fuzz-voice") as ws:
        c = Caller(ws)
        await c.until("ready")
        received: list[dict] = []

        async def read() -> None:
            async for message in ws:  # ends early only if the gateway closes the socket
                if isinstance(message, str):
                    received.append(json.loads(message))
                    if "fuzz-done" in received[-1].get("message", ""):
                        return

        reader = asyncio.create_task(read())
        for n in range(VOICE_FRAMES):
            frame = voice_frame(rng)
            if rng.random() < 0.05:
                frame = json.dumps({"type": "start", "sample_rate": 16000})
            await ws.send(frame)
            assert not reader.done(), f"seed {SEED}: the socket closed at frame {n}: {frame!r:.80}"
        # Every frame was read, in order, once the answer to this one comes back.
        await ws.send(json.dumps({"type": "fuzz-done"}))
        await asyncio.wait_for(reader, 120)
        assert "fuzz-done" in received[-1]["message"]
        await ws.send(json.dumps({"type": "start", "sample_rate": 16000}))
        errors = [e for e in received if e["type"] == "error"]
        assert len(errors) > VOICE_FRAMES // 4  # the junk was read, and answered
        assert {e["code"] for e in errors} >= {"bad_message", "too_large", "bad_sample_rate"}
        await c.speak(piper("What are your opening hours?") + silence(0.3))
        assert "open" in (await c.until("reply_done", within=120))["text"].lower()
    no_crash(caplog)


async def test_fuzzed_text_frames_drop_no_socket_and_the_session_still_answers(
    gateway, caplog
) -> None:
    caplog.set_level(logging.ERROR)
    rng = random.Random(SEED + 1)
    turns = 0
    async with typed(gateway.ws, "web-fuzz-text") as ws:
        for n in range(TEXT_FRAMES):
            frame = text_frame(rng)
            await ws.send(frame)
            if isinstance(frame, str) and not frame.strip():
                continue  # nothing to answer: the gateway skips blank messages
            reply = await asyncio.wait_for(ws.recv(), 60)
            assert isinstance(reply, str) and reply, f"seed {SEED + 1}, frame {n}: {frame!r:.80}"
            turns += isinstance(frame, str) and len(frame) <= 4000
        await ws.send("What are your opening hours?")
        assert "open" in (await asyncio.wait_for(ws.recv(), 60)).lower()
    no_crash(caplog)
    with Session(gateway.services.db) as db:
        stored = db.exec(
            select(func.count())
            .select_from(MessageRow)
            .where(MessageRow.client_id == "web-fuzz-text", MessageRow.role == "user")
        ).one()
    assert stored >= turns + 1 > 100


async def test_fuzzed_lines_never_break_the_safety_probe(caplog) -> None:
    """What the text socket hands a turn, through the real probe: a reading or none,
    and never an error."""
    from agents.risk import ProbeReader, load_probe
    from callswarm.app import safety_embedder
    from callswarm.settings import Settings

    reader = ProbeReader(safety_embedder(Settings()), load_probe())
    rng = random.Random(SEED + 3)
    caplog.set_level(logging.ERROR)
    lines = [frame for frame in (text_frame(rng) for _ in range(40)) if isinstance(frame, str)]
    readings = [await reader.concern(line) for line in lines]
    assert len(readings) == len(lines) > 15
    assert "safety_probe" not in caplog.text
