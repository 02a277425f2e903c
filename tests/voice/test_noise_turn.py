"""A cough heard while no reply plays is no turn: read with the catalogue's prompt,
Whisper makes words of it ("I'll be right back in the end of the video."), and the
agent would answer them. Words said, however short, are always a turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from voice.degrade import mix_at_snr, street, telephone
from voice.events import ReplyDoneEvent, TranscriptEvent, TurnMetricsEvent
from voice.frames import AudioFrame
from voice.noise import TURN_NOISE_MAX_S, must_hear, noise_turn
from voice.session import VoiceSession
from voice.speech import Transcript
from voice.voiced import load_silero

from .speech import espeak, frames, hacking_cough, piper, silence, trim
from .test_overlap import burst
from .waiting import next_of


class _Plain:
    """A recogniser whose plain reading is fixed; counts how often it is asked."""

    def __init__(self, text: str, no_speech: float) -> None:
        self.text, self.no_speech = text, no_speech
        self.asked: list[bool] = []

    async def transcribe(self, pcm16: bytes, sample_rate: int = 16000, **kw: object) -> Transcript:
        self.asked.append(bool(kw.get("plain")))
        return Transcript(
            text=self.text, confidence=0.1, audio_s=0.5, decode_s=0.0, no_speech=self.no_speech
        )

    async def score(self, pcm16: bytes, texts) -> list[float]:  # noqa: ANN001
        return [0.0 for _ in texts]


def _quiet(pcm16: bytes) -> float:
    return 0.05


@pytest.mark.parametrize(
    ("plain", "no_speech", "noise"),
    [
        ("Okay, okay.", 0.86, True),
        ("I can't do it.", 0.80, True),
        ("", 0.5, True),
        ("Yes.", 0.70, False),  # Whisper not sure enough that nothing was said
        ("What?", 0.80, False),  # a question needs it surer
        ("What?", 0.90, True),
        ("I'll be right back in the next video.", 0.95, False),  # a sentence is never noise
        ("Help.", 0.99, False),
    ],
)
async def test_a_turn_silero_hears_no_speech_in_is_noise_when_whisper_hears_none(
    plain, no_speech, noise
) -> None:
    stt = _Plain(plain, no_speech)
    assert await noise_turn(stt, burst(), "Acicol, Acicol,", gauge=_quiet) is noise
    assert stt.asked == [True]


async def test_a_turn_silero_hears_speech_in_is_not_read_again() -> None:
    stt = _Plain("Okay.", 0.99)
    assert await noise_turn(stt, burst(), "Okay.", gauge=lambda pcm: 0.3) is False
    # No opinion is not "no speech": Whisper never decides alone.
    assert await noise_turn(stt, burst(), "Okay.", gauge=lambda pcm: float("nan")) is False
    assert stt.asked == []


async def test_a_call_for_help_an_empty_reading_and_a_long_turn_are_not_gauged() -> None:
    gauged: list[bytes] = []

    def gauge(pcm16: bytes) -> float:
        gauged.append(pcm16)
        return 0.0

    stt = _Plain("", 0.99)
    assert await noise_turn(stt, burst(), "Help, my husband collapsed", gauge=gauge) is False
    assert await noise_turn(stt, burst(), "", gauge=gauge) is False
    long = burst() + silence(TURN_NOISE_MAX_S)
    assert await noise_turn(stt, long, "I'll be right back.", gauge=gauge) is False
    assert gauged == [] and stt.asked == []
    assert await noise_turn(stt, long[: 32000 * 2], "I'll be right back.", gauge=gauge) is True


async def test_a_turn_is_kept_when_either_model_fails(caplog) -> None:
    caplog.set_level(logging.WARNING, logger="voice.noise")

    def broken(pcm16: bytes) -> float:
        raise RuntimeError("no model")

    assert await noise_turn(_Plain("Okay.", 0.99), burst(), "Okay.", gauge=broken) is False

    class Unreadable(_Plain):
        async def transcribe(self, pcm16: bytes, sample_rate: int = 16000, **kw: object):  # noqa: ANN201
            raise RuntimeError("decoder gone")

    assert await noise_turn(Unreadable("", 0.0), burst(), "Okay.", gauge=_quiet) is False
    logged = [r.getMessage().split()[0] for r in caplog.records]
    assert logged == ["turn_ungauged", "turn_unread"]


@pytest.mark.parametrize(
    "said",
    [("Yes.", "en-us"), ("No thanks.", "en-gb"), ("Two.", "en-us"), ("Hmm.", "en-gb")]
    + [("Sorry?", "en-us"), ("Paracetamol.", "en-gb"), ("Bye.", "en-us")],
)
async def test_short_words_said_are_a_turn(stt, said) -> None:
    load_silero()  # as the gateway does at start: its first load can outlast the timeout
    audio = trim(espeak(*said))
    heard = (await stt.transcribe(audio)).text
    assert heard.strip()
    assert await noise_turn(stt, audio, heard) is False


@pytest.mark.parametrize(
    "said",
    [("Yes.", "en-us"), ("Mm.", "en-gb"), ("Six.", "en-us"), ("Eh?", "en-gb"), ("Ta.", "en-us")]
    + [("Please hurry.", "en-gb"), ("I feel faint.", "en-us")],
)
async def test_short_words_through_a_noisy_phone_line_are_a_turn(stt, said) -> None:
    """Through the phone band at 5 dB SNR, where Silero hears least of short words."""
    load_silero()
    words = trim(espeak(*said))
    audio = telephone(mix_at_snr(words, street(len(words) / 32000, seed=3), 5.0))
    heard = (await stt.transcribe(audio)).text
    assert heard.strip()
    assert await noise_turn(stt, audio, heard) is False


@pytest.mark.parametrize(
    ("heard", "urgent"),
    [("nine nine nine", True), ("Call nine one one!", True), ("I feel faint.", True)]
    + [("Chest pain.", True), ("Please hurry.", True), ("He's choking", True)]
    + [("That one.", False), ("Two packs.", False), ("Nine.", False)],
)
def test_urgent_words_are_never_noise(heard, urgent) -> None:
    assert must_hear(heard) is urgent


@pytest.mark.parametrize(("seconds", "seed"), [(0.3, 0), (0.4, 1), (0.5, 2), (0.35, 5)])
async def test_a_cough_whisper_makes_words_of_is_noise(stt, seconds, seed) -> None:
    load_silero()
    audio = hacking_cough(seconds, seed)
    heard = (await stt.transcribe(audio)).text
    assert heard.strip()  # what the agent would have answered
    assert await noise_turn(stt, audio, heard) is True


class _Heard:
    """A responder that notes what it was asked to answer."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def reply(self, text: str) -> AsyncIterator[str]:
        self.asked.append(text)
        yield "We have ibuprofen."

    async def interrupted(self, spoken: str) -> None:
        raise AssertionError("nothing interrupts this reply")


async def test_a_cough_while_no_reply_plays_is_not_answered_and_the_next_words_are(
    stt, tts, caplog
) -> None:
    caplog.set_level(logging.INFO, logger="voice.noise")
    load_silero()
    responder = _Heard()
    voice = VoiceSession("+15550190", responder, stt=stt, tts=tts, realtime=False)
    events: list = []
    for chunk in frames(silence(0.5) + hacking_cough(0.4, 1) + silence(1.5)):
        await voice.push(AudioFrame(chunk, 16000))
    # The cough's turn is over before the caller speaks: words would cut it short.
    await next_of(voice, TurnMetricsEvent, events)
    for chunk in frames(piper("Do you have any ibuprofen?") + silence(1.0)):
        await voice.push(AudioFrame(chunk, 16000))
    done = await next_of(voice, ReplyDoneEvent, events)
    transcripts = [e.text for e in events if isinstance(e, TranscriptEvent)]
    assert len(transcripts) == 2 and transcripts[0] == ""
    assert "ibuprofen" in transcripts[1].lower()
    assert not any(isinstance(e, ReplyDoneEvent) for e in events[: events.index(done)])
    assert len(responder.asked) == 1 and "ibuprofen" in responder.asked[0].lower()
    [gauged] = [r.getMessage() for r in caplog.records if "turn_gauged" in r.getMessage()]
    assert gauged.endswith("noise=True")
    await voice.close()


class _Thinking:
    """A responder whose first answer never comes: the caller speaks while it thinks."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.thinking = asyncio.Event()

    async def reply(self, text: str) -> AsyncIterator[str]:
        self.asked.append(text)
        if len(self.asked) == 1:
            self.thinking.set()
            await asyncio.Event().wait()
        yield "Sorry, could you say that again?"

    async def interrupted(self, spoken: str) -> None:
        pass


async def test_a_cough_that_cut_a_reply_is_answered(stt, tts, caplog) -> None:
    """Speech while the agent thinks cuts the reply; if that were dropped as noise, the
    words the cut reply was for would go unanswered."""
    caplog.set_level(logging.INFO, logger="voice.noise")
    load_silero()
    responder = _Thinking()
    voice = VoiceSession("+15550191", responder, stt=stt, tts=tts, realtime=False)
    for chunk in frames(silence(0.5) + piper("I think I took too many.") + silence(1.0)):
        await voice.push(AudioFrame(chunk, 16000))
    await asyncio.wait_for(responder.thinking.wait(), 120)  # a safety net, not a sync
    for chunk in frames(hacking_cough(0.4, 1) + silence(1.5)):
        await voice.push(AudioFrame(chunk, 16000))
    events: list = []
    done = await next_of(voice, ReplyDoneEvent, events)
    assert len(responder.asked) == 2 and responder.asked[1].strip()  # the cough, answered
    assert done.text == "Sorry, could you say that again?"
    assert not any("turn_gauged" in r.getMessage() for r in caplog.records)
    await voice.close()
