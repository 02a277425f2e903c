"""The whole voice loop: caller audio in, the pharmacy's spoken reply out."""

from __future__ import annotations

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
        caller = silence(0.5) + piper(tts, "Do you have any ibuprofen?") + silence(1.0)
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
