"""Operator takeover of live calls, and each call's two-track recording."""

from __future__ import annotations

import asyncio
import wave

import numpy as np

from swarm import AssistantMessage, CompletionArgs, FunctionBackend
from tests.voice.speech import espeak, piper, silence
from voice.stt import WhisperSTT
from web.live import _Guarded

from .client import Caller, caller, typed
from .console import Sse, call_ended, journaled, operator

OPERATOR_WORDS = "This is Sam from the pharmacy. Your prescription is ready for collection."


async def live_call(api, client_id: str) -> dict:
    response = await api.get("/api/calls", params={"caller": client_id, "live": True})
    [call] = response.json()["items"]
    return call


async def test_an_operator_takes_over_a_voice_call_speaks_and_hands_back(
    gateway, tts, stt: WhisperSTT
) -> None:
    async with operator(gateway, "sam") as api, caller(gateway.ws, "web-held") as ws:
        c = Caller(ws)
        await c.greeted()
        call = await live_call(api, "web-held")
        async with api.stream("GET", f"/api/calls/{call['id']}/events") as stream:
            events = Sse(stream)
            taken = await api.post(f"/api/calls/{call['id']}/takeover")
            assert taken.status_code == 200 and taken.json()["operator"] == "sam"
            await events.until("takeover", operator="sam")

            # Held: the caller's words reach the operator, and no agent answers them.
            await c.speak(piper("Is my prescription ready?") + silence(0.2))
            assert "prescription" in (await c.until("transcript"))["text"].lower()
            assert (await c.until("reply_done"))["text"] == ""
            said = await events.until("user_message")
            assert "prescription" in said[-1]["data"]["content"].lower()
            assert not [e for e in said if e["kind"] == "assistant_message"]

            c.audio.clear()
            spoken = await api.post(f"/api/calls/{call['id']}/say", json={"text": OPERATOR_WORDS})
            assert spoken.status_code == 200
            done = await c.until("reply_done")
            assert done["text"] == OPERATOR_WORDS
            heard = stt.transcribe_sync(bytes(c.audio)).text.lower()
            assert "prescription" in heard and "collection" in heard
            operator_said = await events.until("operator_said")
            assert operator_said[-1]["data"] == {"operator": "sam", "text": OPERATOR_WORDS}

            back = await api.post(f"/api/calls/{call['id']}/handback")
            assert back.status_code == 200 and back.json()["operator"] is None
            await c.speak(piper("Do you have any ibuprofen?") + silence(0.2))
            assert "Ibuprofen" in (await c.until("reply_done"))["text"]

        twice = await api.post(f"/api/calls/{call['id']}/say", json={"text": "hello"})
        assert twice.status_code == 409  # handed back: speak only while holding
        transcript = (await api.get(f"/api/calls/{call['id']}/transcript")).json()
        by_operator = [m for m in transcript["messages"] if m["agent"] == "operator"]
        assert [m["content"] for m in by_operator] == [OPERATOR_WORDS]
        audit = (await api.get("/api/audit", params={"operator": "sam"})).json()
        assert [a["action"] for a in audit][:4] == ["handback", "say", "takeover", "login"]
        assert audit[1]["detail"] == OPERATOR_WORDS and audit[1]["target"] == call["id"]


async def test_takeover_of_a_text_call_and_of_calls_that_are_not_live(gateway) -> None:
    listener = gateway.gateway.journal.hub.listen()
    async with (
        operator(gateway) as api,
        typed(gateway.ws, "web-typed") as ws,
    ):
        await journaled(listener, "call_started", "web-typed")
        call = await live_call(api, "web-typed")
        assert (
            await api.post(f"/api/calls/{call['id']}/say", json={"text": "hi"})
        ).status_code == 409
        assert (await api.post(f"/api/calls/{call['id']}/takeover")).status_code == 200
        held = await api.post(
            f"/api/calls/{call['id']}/threads/user/messages", json={"text": "hello"}
        )
        assert held.status_code == 409
        await ws.send("can a person help me?")
        await api.post(f"/api/calls/{call['id']}/say", json={"text": "Hello, Sam here."})
        # The operator's words are the first thing the caller receives: no agent replied.
        assert await asyncio.wait_for(ws.recv(), 30) == "Hello, Sam here."
    await journaled(listener, "call_ended", "web-typed")
    async with operator(gateway) as api:
        ended = (await api.get(f"/api/calls/{call['id']}")).json()
        assert not ended["live"] and ended["outcome"] == "transferred"
        assert ended["operator"] == "alice"
        for action in ("takeover", "handback"):
            gone = await api.post(f"/api/calls/{call['id']}/{action}")
            assert gone.status_code == 409


async def test_a_takeover_stops_a_text_turn_the_model_is_still_writing(gateway) -> None:
    """The takeover waited for the model's whole turn, and its reply reached the caller."""
    called, never = asyncio.Event(), asyncio.Event()

    async def slow(args: CompletionArgs) -> AssistantMessage:
        called.set()
        await never.wait()
        return AssistantMessage(content="The agents' late answer.")

    registry = gateway.gateway.engine.registry
    for agent in registry.agents.values():
        registry.completions[agent.completion] = FunctionBackend(slow)
    listener = gateway.gateway.journal.hub.listen()
    async with operator(gateway) as api, typed(gateway.ws, "web-slow") as ws:
        await journaled(listener, "call_started", "web-slow")
        call = await live_call(api, "web-slow")
        await ws.send("Hello there, I'm new in town. What sort of shop are you, exactly?")
        await asyncio.wait_for(called.wait(), 30)
        taken = await asyncio.wait_for(api.post(f"/api/calls/{call['id']}/takeover"), 5)
        assert taken.status_code == 200
        await api.post(f"/api/calls/{call['id']}/say", json={"text": "Hello, Sam here."})
        assert await asyncio.wait_for(ws.recv(), 30) == "Hello, Sam here."
    never.set()
    await journaled(listener, "call_ended", "web-slow")


async def test_a_caller_with_two_sockets_reaches_the_operator_on_the_one_held(gateway) -> None:
    """The takeover of a caller's older call answered 200, and the agents went on
    answering them: only the newest call was looked at."""
    listener = gateway.gateway.journal.hub.listen()
    async with operator(gateway) as api, typed(gateway.ws, "web-two") as older:
        await journaled(listener, "call_started", "web-two")
        [first] = (await api.get("/api/calls", params={"caller": "web-two", "live": True})).json()[
            "items"
        ]
        async with typed(gateway.ws, "web-two") as newer:
            await journaled(listener, "call_started", "web-two")
            assert (await api.post(f"/api/calls/{first['id']}/takeover")).status_code == 200
            await newer.send("what time do you open?")
        await journaled(listener, "call_ended", "web-two")  # the newer one hung up
        await older.send("hello, is anyone there?")
        await api.post(f"/api/calls/{first['id']}/say", json={"text": "Hello, Sam here."})
        assert await asyncio.wait_for(older.recv(), 30) == "Hello, Sam here."
    await journaled(listener, "call_ended", "web-two")


async def test_a_caller_quiet_past_the_idle_timeout_keeps_their_call(gateway) -> None:
    listener = gateway.gateway.journal.hub.listen()
    async with typed(gateway.ws, "web-quiet") as ws:
        await journaled(listener, "call_started", "web-quiet")
        gateway.gateway.engine.sessions["web-quiet"]._idle_expired()  # the timeout passes
        await ws.send("what time do you open?")
        reply = await asyncio.wait_for(ws.recv(), 30)
        assert reply.startswith("We are open") and "error" not in reply
    ended = await journaled(listener, "call_ended", "web-quiet")
    assert ended["data"]["outcome"] == "completed"


async def test_each_call_is_recorded_with_the_caller_and_the_assistant_apart(gateway, tts) -> None:
    words = espeak("Do you have any ibuprofen?", voice="en-gb")
    listener = gateway.gateway.journal.hub.listen()
    async with caller(gateway.ws, "web-rec") as ws:
        c = Caller(ws)
        await c.greeted()
        await c.speak(silence(0.5) + words + silence(0.2), realtime=True)
        await c.until("reply_done")
    await call_ended(gateway, "web-rec", listener)  # the server closes it after the socket
    async with operator(gateway) as api:
        [call] = (await api.get("/api/calls", params={"caller": "web-rec"})).json()["items"]
        response = await api.get(call["recording"])
        assert response.status_code == 200
        assert response.headers["content-type"] == "audio/wav"
    path = gateway.services.settings.data_dir / "recording.wav"
    path.write_bytes(response.content)
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getframerate()) == (2, 16000)
        both = np.frombuffer(w.readframes(w.getnframes()), "<i2").reshape(-1, 2)
    rate = 16000

    def loud(track: np.ndarray) -> np.ndarray:
        """Which 100 ms windows of a track hold sound."""
        windows = track[: len(track) // 1600 * 1600].astype(float).reshape(-1, 1600)
        return np.sqrt((windows**2).mean(axis=1)) > 200

    caller_loud, assistant_loud = loud(both[:, 0]), loud(both[:, 1])
    # The caller's track holds about the length of their words; the assistant's holds the
    # greeting and the reply; and they take turns rather than overlap.
    assert abs(caller_loud.sum() / 10 - len(words) / 2 / rate) < 1.0
    assert assistant_loud.sum() / 10 > 3
    assert (caller_loud & assistant_loud).sum() <= 3
    first_caller = int(np.argmax(caller_loud))
    assert assistant_loud[:first_caller].sum() > 10  # the greeting came first
    assert assistant_loud[first_caller:].sum() > 5  # then the reply


class _Reading:
    """The agents' side of a call: records what it was handed to read ahead."""

    def __init__(self) -> None:
        self.anticipated: list[str] = []

    async def reply(self, text: str):
        yield text

    async def interrupted(self, spoken: str) -> None:
        pass

    async def anticipate(self, text: str) -> None:
        self.anticipated.append(text)


class _Held:
    def __init__(self) -> None:
        self.operator: str | None = None

    def held(self, client_id: str) -> object | None:
        return self if self.operator else None


async def test_a_held_callers_words_are_not_read_ahead_by_the_agents() -> None:
    """While an operator holds the call no agent answers, so none reads ahead either."""
    calls, agents = _Held(), _Reading()
    guarded = _Guarded(calls, "caller", agents)  # type: ignore[arg-type]
    await guarded.anticipate("do you have any ibuprofen")
    calls.operator = "sam"
    await guarded.anticipate("is my prescription ready")
    assert agents.anticipated == ["do you have any ibuprofen"]
