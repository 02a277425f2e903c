"""The speech engines' fakes drive the whole loop, real VAD and swarm included, with
no model loaded: what tests not about recognition or synthesis can use."""

from __future__ import annotations

import numpy as np
import pytest
import webrtcvad

from callswarm.app import build_services
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder
from voice.events import ReplyAudioEvent, ReplyDoneEvent, TranscriptEvent, TurnMetricsEvent
from voice.fakes import FakeSTT, FakeTTS, buzz, loud_is_speech
from voice.frames import AudioFrame
from voice.session import VoiceSession
from voice.speech import SpeechToText, TextToSpeech

from .speech import frames, silence
from .waiting import next_of


def on_the_fakes(session, stt: FakeSTT, tts: FakeTTS) -> VoiceSession:
    """A voice loop on the fakes for a swarm session, fed in stream time."""
    return VoiceSession(
        session.client_id,
        SwarmResponder(session),
        stt=stt,
        tts=tts,
        realtime=False,
        gauge=loud_is_speech,
    )


def test_the_fakes_are_the_engines_ports() -> None:
    stt: SpeechToText = FakeSTT()
    tts: TextToSpeech = FakeTTS()
    assert stt.on_decode is None and tts.sample_rate == 22050


def test_the_buzz_is_speech_to_the_vad_and_silence_is_not() -> None:
    # A VAD for each: webrtcvad holds on to speech for a few frames after it ends.
    heard, unheard = webrtcvad.Vad(3), webrtcvad.Vad(3)
    spoken = [heard.is_speech(f, 16000) for f in frames(buzz(1.0))]
    quiet = [unheard.is_speech(f, 16000) for f in frames(silence(1.0))]
    assert all(spoken) and not any(quiet)


async def test_a_turn_through_the_loop_on_the_fakes(tmp_path) -> None:
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    stt, tts = FakeSTT(["Do you have any ibuprofen?"]), FakeTTS()
    decodes: list[float] = []
    stt.on_decode = decodes.append
    try:
        session = services.engine.session("web-fakes", services.swarm)
        voice = on_the_fakes(session, stt, tts)
        for chunk in frames(silence(0.5) + buzz(1.5) + silence(1.0)):
            await voice.push(AudioFrame(chunk, 16000))
        events: list = []
        done = await next_of(voice, ReplyDoneEvent, events)
        metrics = await next_of(voice, TurnMetricsEvent, events)
        [transcript] = [e for e in events if isinstance(e, TranscriptEvent)]
        assert transcript.text == "Do you have any ibuprofen?"
        # The VAD cut one utterance of about the buzz's length, pre-roll included.
        assert len(stt.heard) == 1 and 1.4 < len(stt.heard[0]) / 32000 < 2.2
        assert decodes == [0.0]
        # The swarm answered it, and the fake voice spoke each sentence of the reply.
        assert "Ibuprofen" in done.text
        assert " ".join(tts.spoken) == done.text
        audio = b"".join(e.frame.pcm for e in events if isinstance(e, ReplyAudioEvent))
        assert np.frombuffer(audio, "<i2").std() > 500
        assert await session.get_last_assistant_message() == done.text
        assert metrics.metrics.voice_to_voice_s is not None
        await voice.close()
    finally:
        await services.aclose()


async def test_one_utterance_is_one_line_however_often_it_is_read() -> None:
    stt = FakeSTT(["A box of", "Thanks."])
    start, more = buzz(0.6), buzz(0.4, pitch=180.0)
    assert (await stt.transcribe(start)).text == "A box of"  # a speculative decode
    assert (await stt.transcribe(start + more, plain=True)).text == "A box of"  # it went on
    assert (await stt.transcribe(start + more, primer="Mm-hmm.")).text == "A box of"
    assert await stt.score(start + more, ["A box of", "Mm-hmm."]) == [0.0, -5.0]
    assert (await stt.transcribe(buzz(0.3, pitch=220.0))).text == "Thanks."
    assert (await stt.transcribe(buzz(0.3, pitch=260.0))).text == ""  # nothing left to hear
    assert len(stt.heard) == 3


async def test_words_come_as_whisper_places_them() -> None:
    words = await FakeSTT().words(buzz(1.0), "Two boxes, please.")
    assert [w.text for w in words] == [" Two", " boxes", ",", " please", "."]
    assert words[0].start == 0.0 and words[-1].end == 1.0
    assert "".join(w.text for w in words).strip() == "Two boxes, please."


def test_the_fake_gauge_hears_the_fake_voice_and_not_silence() -> None:
    assert loud_is_speech(buzz(0.3)) == 1.0
    assert loud_is_speech(b"\0\0" * 8000) == 0.0
    assert loud_is_speech(b"") == 0.0


async def test_the_last_word_is_dated_when_it_was_heard_not_when_its_chunk_came(
    tmp_path,
) -> None:
    """A chunk of audio arrives after all of it was said: a browser's few hundred ms, or
    a phone line's quiet, which reaches the loop as one chunk of silence when it is over
    (telephony/quiet.py). A word at its start was heard that much before it came."""
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    stt, tts = FakeSTT(["Do you have any ibuprofen?"]), FakeTTS()
    now = [100.0]
    try:
        session = services.engine.session("web-chunks", services.swarm)
        voice = on_the_fakes(session, stt, tts)
        voice.clock = lambda: now[0]
        for chunk in frames(silence(0.5) + buzz(0.8)):
            now[0] += 0.02  # each frame as it is spoken
            await voice.push(AudioFrame(chunk, 16000))
        # The last 0.2 s of words and 0.6 s of quiet, in one chunk, once all was said.
        now[0] += 0.8
        await voice.push(AudioFrame(buzz(0.2) + silence(0.6), 16000))
        metrics = await next_of(voice, TurnMetricsEvent, [])
        # From the last word to the transcript: the quiet after it (less the VAD's
        # hangover of a few frames), not the nothing since the chunk came.
        assert metrics.metrics.stt_s is not None
        assert 0.4 < metrics.metrics.stt_s <= 0.6 + 1e-6, metrics
        await voice.close()
    finally:
        await services.aclose()


async def test_audio_that_waited_for_the_loop_is_dated_when_it_came_in(tmp_path) -> None:
    """A phone's packets wait in the call's queue while the loop is busy: the turn's
    latency runs from when the caller was heard, so a late loop adds to it."""
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))

    async def stt_s(late_s: float) -> float:
        stt, tts = FakeSTT(["Do you have any ibuprofen?"]), FakeTTS()
        now = [100.0]
        session = services.engine.session(f"phone-late-{late_s}", services.swarm)
        voice = on_the_fakes(session, stt, tts)
        voice.clock = lambda: now[0]
        for chunk in frames(silence(0.5) + buzz(0.8) + silence(0.8)):
            now[0] += 0.02
            # Came off the line `late_s` before the loop pushed it.
            await voice.push(AudioFrame(chunk, 16000), at=now[0] - late_s)
        metrics = await next_of(voice, TurnMetricsEvent, [])
        await voice.close()
        assert metrics.metrics.stt_s is not None
        return metrics.metrics.stt_s

    try:
        on_time, late = await stt_s(0.0), await stt_s(0.3)
        assert late - on_time == pytest.approx(0.3, abs=0.025), (on_time, late)
    finally:
        await services.aclose()
