"""The voice socket's protocol, every error path, and the REST basics, over real sockets."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlmodel import Session, select
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from models.tables import MessageRow, TurnRow
from tests.voice.speech import piper, silence
from voice.stt import WhisperSTT

from .client import Caller, caller, typed
from .console import call_ended


async def test_ping_info_and_openapi(gateway) -> None:
    async with httpx.AsyncClient(base_url=gateway.url) as http:
        assert (await http.get("/api/ping")).json() == {"ok": True}
        info = (await http.get("/api/info")).json()
        assert info["swarm"] and info["mission"]
        assert [a["name"] for a in info["agents"]] == ["triage", "sales"]
        assert "navigate_to_sales" in info["agents"][0]["tools"]
        assert info["voice"] is True
        spec = (await http.get("/openapi.json")).json()
        assert "/api/info" in spec["paths"]
        assert (await http.get("/docs")).status_code == 200
        page = await http.get("/")
        assert page.status_code == 200 and 'id="talk"' in page.text


async def test_a_new_caller_is_greeted_in_words_and_audio(gateway) -> None:
    async with caller(gateway.ws, "web-greet") as ws:
        c = Caller(ws)
        ready = await c.until("ready")
        assert ready["resumed"] is False and ready["history"] == [] and ready["agent"] == "triage"
        assert ready["sample_rate"] == 16000
        await c.send({"type": "start", "sample_rate": 16000})
        await c.until("started")
        done = await c.until("reply_done")
        assert "Riverside Pharmacy" in done["text"]
        assert len(c.audio) > 16000 * 2  # over a second of greeting


async def test_a_spoken_turn_gets_transcript_reply_audio_and_stored_metrics(
    gateway, tts, stt: WhisperSTT
) -> None:
    async with caller(gateway.ws, "web-turn") as ws:
        c = Caller(ws)
        await c.greeted()
        await c.speak(silence(0.3) + piper("Do you have any ibuprofen?") + silence(0.2))
        transcript = await c.until("transcript")
        assert "ibuprofen" in transcript["text"].lower()
        done = await c.until("reply_done")
        assert "Ibuprofen" in done["text"]
        assert c.of("agent")[-1]["agent"] == "sales"
        metrics = await c.until("turn_metrics")
        # Released, not waited out: no 500 ms stop silence between release and transcript.
        assert metrics["voice_to_voice_s"] is not None
        heard = stt.transcribe_sync(bytes(c.audio)).text.lower()
        assert "ibuprofen" in heard
    with Session(gateway.services.db) as db:
        rows = db.exec(select(TurnRow).where(TurnRow.client_id == "web-turn")).all()
    assert len(rows) == 1 and "ibuprofen" in rows[0].transcript.lower()


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ("not json", "bad_message"),
        ('["start"]', "bad_message"),
        ('{"type": "dance"}', "unknown_type"),
        ('{"type": "start", "sample_rate": 12345}', "bad_sample_rate"),
        ('{"type": "start", "sample_rate": 16000.0}', "bad_sample_rate"),
        ('{"type": "start", "sample_rate": "16000"}', "bad_sample_rate"),
        ('{"type": "start", "sample_rate": 16000, "encoding": "opus"}', "bad_encoding"),
        ("x" * 5000, "too_large"),
    ],
)
async def test_bad_control_messages_get_an_error_and_the_session_goes_on(
    gateway, payload, code
) -> None:
    async with caller(gateway.ws, "web-bad") as ws:
        c = Caller(ws)
        await c.until("ready")
        await c.send(payload)
        error = await c.until("error")
        assert error["code"] == code and error["message"]
        await c.send({"type": "start", "sample_rate": 16000})
        assert (await c.until("started"))["sample_rate"] == 16000


async def test_bad_audio_gets_an_error_and_the_session_goes_on(gateway, tts) -> None:
    async with caller(gateway.ws, "web-bad-audio") as ws:
        c = Caller(ws)
        await c.until("ready")
        await c.send(b"\x00\x01" * 160)
        assert (await c.until("error"))["code"] == "not_started"
        await c.send({"type": "start", "sample_rate": 16000})
        await c.until("started")
        await c.send(b"\x00" * 641)
        assert (await c.until("error"))["code"] == "bad_audio"
        await c.send(b"\x00" * 200_000)
        assert (await c.until("error"))["code"] == "too_large"
        # Still a working session: a real turn goes through.
        await c.until("reply_done")  # the greeting
        await c.speak(piper("What are your opening hours?") + silence(0.2))
        assert "open" in (await c.until("reply_done"))["text"].lower()


async def test_a_wrong_sample_rate_is_refused_and_a_right_one_at_8k_works(gateway, tts) -> None:
    from voice.resample import resample

    async with caller(gateway.ws, "web-8k") as ws:
        c = Caller(ws)
        await c.until("ready")
        await c.send({"type": "start", "sample_rate": 11025})
        assert (await c.until("error"))["code"] == "bad_sample_rate"
        await c.send({"type": "start", "sample_rate": 8000})
        await c.until("started")
        await c.until("reply_done")
        speech = resample(piper("Do you have any ibuprofen?"), 16000, 8000)
        await c.speak(speech, rate=8000)
        # Telephone-band audio: the words arrive, the spelling of a drug name may not
        # ("Ibupurlphin" once); the rate handling is what this tests.
        assert (await c.until("transcript"))["text"].lower().startswith("do you have any")
        await c.until("reply_done")


async def test_reconnecting_resumes_the_session_and_its_history(gateway, tts) -> None:
    async with caller(gateway.ws, "web-resume") as ws:
        c = Caller(ws)
        await c.greeted()
        await c.speak(piper("Do you have any ibuprofen?") + silence(0.2))
        said = (await c.until("transcript"))["text"]
        reply = (await c.until("reply_done"))["text"]
    async with caller(gateway.ws, "web-resume") as ws:
        c = Caller(ws)
        ready = await c.until("ready")
        assert ready["resumed"] is True and ready["agent"] == "sales"
        texts = [(m["role"], m["text"]) for m in ready["history"]]
        assert ("user", said) in texts and ("assistant", reply) in texts
        await c.send({"type": "start", "sample_rate": 16000})
        await c.until("started")
        assert not c.of("reply_done")  # no second greeting


async def test_a_disconnect_mid_turn_loses_no_committed_message(gateway, tts) -> None:
    listener = gateway.gateway.journal.hub.listen()
    async with caller(gateway.ws, "web-drop") as ws:
        c = Caller(ws)
        await c.greeted()
        await c.speak(piper("I would like two boxes of paracetamol please.") + silence(0.2))
        said = (await c.until("transcript"))["text"]
        await c.until("reply_text")  # the reply has started playing: hang up now
    await call_ended(gateway, "web-drop", listener)
    # The cut turn's latencies are stored too, marked interrupted.
    with Session(gateway.services.db) as db:
        [turn] = db.exec(select(TurnRow).where(TurnRow.client_id == "web-drop")).all()
    assert turn.interrupted and turn.voice_to_voice_s is not None
    async with caller(gateway.ws, "web-drop") as ws:
        ready = await Caller(ws).until("ready")
    with Session(gateway.services.db) as db:
        stored = db.exec(select(MessageRow).where(MessageRow.client_id == "web-drop")).all()
    assert any(m.role == "user" and m.content == said for m in stored)
    assert ("user", said) in [(m["role"], m["text"]) for m in ready["history"]]


async def test_a_second_socket_for_the_same_caller_takes_over(gateway) -> None:
    async with caller(gateway.ws, "web-twice") as first:
        await Caller(first).until("ready")
        async with caller(gateway.ws, "web-twice") as second:
            await Caller(second).until("ready")
            with pytest.raises(ConnectionClosed) as closed:
                while True:  # the greeting sent before the take-over comes first
                    await asyncio.wait_for(first.recv(), 30)
            assert closed.value.rcvd.code == 4001


@pytest.mark.parametrize("client_id", ["..", "a..b", "a%2F..%2Fb", "x" * 65, "semi;colon"])
async def test_unsafe_client_ids_are_refused_at_the_handshake(gateway, client_id) -> None:
    with pytest.raises(InvalidStatus) as refused:
        async with connect(f"{gateway.ws}/ws/voice/{client_id}"):
            pass
    assert refused.value.response.status_code in (403, 404)


async def test_the_text_socket_answers_each_message_over_the_same_session(gateway) -> None:
    async with typed(gateway.ws, "web-text") as ws:
        await ws.send("Do you have any ibuprofen?")
        assert "Ibuprofen" in await ws.recv()
        await ws.send("x" * 5000)
        assert (await ws.recv()).startswith("error: message too long")
        await ws.send(b"\x00\x01")
        assert (await ws.recv()).startswith("error:")
        await ws.send("What are your opening hours?")
        assert "open" in (await ws.recv()).lower()


async def test_interrupt_stops_the_reply_and_the_history_keeps_only_what_was_heard(
    gateway, tts
) -> None:
    async with caller(gateway.ws, "web-interrupt") as ws:
        c = Caller(ws)
        await c.greeted()
        # Not "ibuprofen": on some hosts tiny.en hears "Ibupurlfin", and the reply is a
        # list whose first sentence, "We have 3 options:", is over before the cut.
        await c.speak(piper("Do you have any plasters?") + silence(0.2))
        first = await c.until("reply_text")
        await c.until_audio(48000)  # 1.5 s of its ~4 s have been played
        await c.send({"type": "interrupt"})  # the caller pressed talk while it spoke
        interrupted = await c.until("interrupted")
        spoken = interrupted["spoken"]
        assert spoken and first["text"].startswith(spoken)
        assert len(spoken) < len(first["text"])  # cut within the first sentence
        assert len(c.of("reply_done")) == 1  # the greeting's: this reply never finished
        session = gateway.services.engine.session("web-interrupt", gateway.services.swarm)
        assert await session.get_last_assistant_message() == spoken
