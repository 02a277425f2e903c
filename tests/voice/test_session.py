"""The whole voice loop: caller audio in, the pharmacy's spoken reply out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import numpy as np
import pytest
from sqlmodel import Session as DbSession

from callswarm.app import build_services
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder, TurnRecorder
from models.turns import latency_summary
from voice.events import (
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyTextEvent,
    TranscriptEvent,
    TurnMetricsEvent,
)
from voice.frames import AudioFrame
from voice.resample import resample
from voice.session import VoiceSession

from .speech import frames, piper, silence
from .waiting import next_of


async def test_a_caller_wav_gets_a_spoken_reply_that_says_the_reply_text(
    tmp_path, stt, tts
) -> None:
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    try:
        session = services.engine.session("+15550123", services.swarm)
        voice = VoiceSession("+15550123", SwarmResponder(session), stt=stt, tts=tts, realtime=False)
        caller = silence(0.5) + piper("Do you have any ibuprofen?") + silence(1.0)
        for chunk in frames(caller):
            await voice.push(AudioFrame(chunk, 16000))
        events: list = []
        done = await next_of(voice, ReplyDoneEvent, events)
        metrics = await next_of(voice, TurnMetricsEvent, events)

        transcript = next(e for e in events if isinstance(e, TranscriptEvent))
        assert "ibuprofen" in transcript.text.lower()
        sentences = [e.text for e in events if isinstance(e, ReplyTextEvent)]
        assert " ".join(sentences) == done.text
        assert "Ibuprofen" in done.text and "3 dollars 99" in done.text
        audio = b"".join(e.frame.pcm for e in events if isinstance(e, ReplyAudioEvent))
        heard = stt.transcribe_sync(audio).text.lower()
        # Whisper writes the spoken "3 dollars 99" as "$3.99".
        assert "ibuprofen" in heard and ("3 dollars 99" in heard or "$3.99" in heard)
        assert "would you like to order it" in heard
        assert np.frombuffer(audio, "<i2").std() > 500  # speech, not silence
        # The turn reached the swarm: the agent handed over and the reply is in the history.
        assert await session.get_agent_name() == "sales"
        assert await session.get_last_assistant_message() == done.text
        assert metrics.metrics.voice_to_voice_s is not None and not metrics.metrics.interrupted
        assert 1.0 < metrics.metrics.speech_s < 3.5  # the caller's utterance, pre-roll included
        # Stored with the turn and aggregable.
        await TurnRecorder(services.db, "+15550123").record(metrics)
        with DbSession(services.db) as db:
            summary = latency_summary(db, client_id="+15550123")
        v2v = summary["voice_to_voice_s"]
        assert v2v.count == 1
        assert v2v.p50 == v2v.p95 == pytest.approx(metrics.metrics.voice_to_voice_s)
        assert summary["stt_s"].p50 == pytest.approx(metrics.metrics.stt_s)
        await voice.close()
    finally:
        await services.aclose()


class WatchedTTS:
    """The real Piper, noting which pieces were asked for urgently and how long each is."""

    def __init__(self, tts) -> None:
        self.tts = tts
        self.sample_rate = tts.sample_rate
        self.asked: list[tuple[str, bool]] = []
        self.frames: list[int] = []  # 20 ms frames of each piece, at the session's 16 kHz

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        self.asked.append((text, urgent))
        pcm = await self.tts.synthesize(text, urgent=urgent)
        self.frames.append(-(-len(resample(pcm, self.sample_rate, 16000)) // 640))
        return pcm


class PausingResponder:
    """Says a long first part, then waits to be told to say the rest."""

    def __init__(self) -> None:
        self.go_on = asyncio.Event()

    async def reply(self, text: str) -> AsyncIterator[str]:
        yield "We have three options for a headache, all in stock today. "
        yield "Aspirin costs 2 dollars 49 for a pack of 32 tablets. "
        await self.go_on.wait()
        yield "Anything else?"

    async def interrupted(self, spoken: str) -> None:
        raise AssertionError("nothing interrupts this reply")


async def test_pieces_are_urgent_only_while_the_player_has_little_ahead(stt, tts) -> None:
    watched, responder = WatchedTTS(tts), PausingResponder()
    voice = VoiceSession("c", responder, stt=stt, tts=watched, realtime=True)  # type: ignore[arg-type]
    for chunk in frames(silence(0.5) + piper("I need something for a headache.") + silence(1)):
        await voice.push(AudioFrame(chunk, 16000))
    events: list = []
    sent = 0
    # The first part is three pieces (the first clause, the rest of its sentence, the
    # second sentence); once every frame of them is sent, the player has nothing ahead.
    while len(watched.asked) < 3 or sent < sum(watched.frames):
        await next_of(voice, ReplyAudioEvent, events)
        sent += 1
    responder.go_on.set()
    await next_of(voice, ReplyDoneEvent, events)

    urgent = [flag for _text, flag in watched.asked]
    # The first clause is urgent; those behind it, with seconds of audio ahead, are
    # plain; the last, asked for once the player had run dry, is urgent again.
    assert urgent[0] and urgent[-1]
    assert not any(urgent[1:-1]) and len(urgent) >= 4
    assert watched.asked[-1][0] == "Anything else?"
    await voice.close()
