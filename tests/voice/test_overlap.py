"""Speech over a reply: an aside ("mm-hmm", a cough, the reply's own echo) holds it for a
moment and lets it go on; anything else cuts it, at once."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque

import numpy as np
import pytest

from voice.events import (
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyHeldEvent,
    ReplyResumedEvent,
)
from voice.frames import AudioFrame
from voice.overlap import aside, primed_backchannel, read_aside, worth_rereading
from voice.session import VoiceSession
from voice.speech import Transcript
from voice.voiced import load_silero, silero_voiced

from .speech import espeak, frames, piper, silence, trim
from .test_barge_in import FIRST, SECOND, SlowResponder
from .waiting import next_of

REPLY = "We have three options for a headache, all in stock today."


@pytest.mark.parametrize(
    ("heard", "why"),
    [
        ("Mm-hmm.", "backchannel"),
        ("Okay.", "backchannel"),
        ("Yeah, right.", "backchannel"),
        ("Uh-huh, okay, thanks.", "backchannel"),
        # Whisper's shortened window loops, and spells one word two ways.
        ("Yeah, right... Right... Right... Right... Right", "backchannel"),
        ("All right. All right.", "backchannel"),
        ("Yeah, all right then, I will take it.", None),
        ("You're right, exactly.", "backchannel"),
        ("Of course.", "backchannel"),
        ("That's not right.", None),
        ("Of course not.", None),
        # Backchannel words that stop a reply alone, or asked, or with a number.
        ("That's enough.", None),
        ("Okay, that's enough, thanks.", None),
        ("That's it.", None),
        ("Sure?", None),
        ("You're sure?", None),
        ("Yes, 911.", None),
        ("Fair enough.", "backchannel"),
        ("Okay, got it, thank you.", "backchannel"),
        ("", "noise"),
        ("(coughs)", "noise"),
        ("three options for a headache", "echo"),
        ("All in stock today.", "echo"),
        ("No, wait.", None),
        ("Stop.", None),
        ("Actually I want ibuprofen instead.", None),
        ("Do you have it for a headache in children?", None),
        ("Yeah, but how much is it?", None),
    ],
)
def test_what_was_said_over_the_reply_is_read_for_whether_it_stops_it(heard, why) -> None:
    assert aside(heard, REPLY) == why


@pytest.mark.parametrize(
    ("heard", "why"),
    [
        # Saying they follow, or telling the speaker to go on, in several words.
        ("Yeah, I'm with you.", "backchannel"),
        ("Brilliant, go on then.", "backchannel"),
        ("Okay, go ahead.", "backchannel"),
        ("Right you are.", "backchannel"),
        ("Oh, that makes sense.", "backchannel"),
        ("Righto.", "backchannel"),
        ("Aye, grand.", "backchannel"),
        # Whom it is said to goes with an acknowledgement, and is nothing alone.
        ("Yes, love.", "backchannel"),
        ("Cheers, mate.", "backchannel"),
        ("Love.", None),
        # The same words carrying what the reply must not talk over.
        ("Go ahead and order it.", None),
        ("Go on then, two.", None),
        ("Aye, the second one.", None),
        ("I'm with you, but how much?", None),
        ("Stop there, love.", None),
        ("Yes, dear, 2.", None),
    ],
)
def test_callers_own_ways_of_listening_do_not_stop_the_reply(heard, why) -> None:
    assert aside(heard, REPLY) == why


def test_words_whisper_made_of_what_it_took_for_no_speech_are_noise() -> None:
    # A cough through the phone band, as Whisper read it, and a caller's real "No, no, no"
    # that it also thought more likely silence (both measured).
    assert aside("I can't do it.", REPLY, no_speech=0.86, confidence=0.11) == "noise"
    assert aside("No, no, no", REPLY, no_speech=0.91, confidence=0.19) is None
    assert aside("I can't do it.", REPLY, no_speech=0.3, confidence=0.11) is None
    # A sentence is never noise on Whisper's word alone, however unsure it is.
    assert aside("Wait, I am allergic to that", REPLY, no_speech=0.85, confidence=0.14) is None


def test_a_stop_made_of_no_speech_needs_whisper_surer() -> None:
    # Coughs Whisper read as questions (measured: no speech 0.89 to 0.95).
    assert aside("What?", REPLY, no_speech=0.89, confidence=0.04) == "noise"
    assert aside("What's up?", REPLY, no_speech=0.95, confidence=0.10) == "noise"
    # A stop it leans less surely towards no speech for stays a stop.
    assert aside("Stop.", REPLY, no_speech=0.85, confidence=0.11) == "noise"
    assert aside("Stop.", REPLY, no_speech=0.84, confidence=0.11) is None
    assert aside("How much?", REPLY, no_speech=0.84, confidence=0.11) is None


@pytest.mark.parametrize(
    ("heard", "no_speech", "voiced", "why"),
    [
        # Whisper fairly sure of its words (-1.83 a token), but both models hear no
        # speech: a cough.
        ("I can't.", 0.70, 0.49, "noise"),
        ("I don't know.", 0.86, 0.05, "noise"),
        # Either model leaning towards speech keeps the words.
        ("I can't.", 0.69, 0.49, None),
        ("I can't.", 0.70, 0.50, None),
        ("I don't know.", 0.86, 0.93, None),
        # A stop needs Whisper surer, with Silero too.
        ("No.", 0.84, 0.05, None),
        ("No.", 0.85, 0.05, "noise"),
        # Silero misses a short word through a noisy phone line; Whisper hears speech.
        ("Sorry. Sorry.", 0.37, 0.12, None),
        ("Hello, hello", 0.65, 0.48, None),
        # A sentence is never noise.
        ("I'm going to go to the end", 0.90, 0.10, None),
    ],
)
def test_no_speech_by_both_models_is_noise(heard, no_speech, voiced, why) -> None:
    assert aside(heard, REPLY, no_speech=no_speech, confidence=0.16, voiced=voiced) == why


@pytest.mark.parametrize(
    "heard", ["Help!", "Help.", "Okay, help.", "Call 999.", "Is it 9-1-1?", "He's collapsed."]
)
def test_a_call_for_help_is_always_heard(heard) -> None:
    """However sure both models are that there was no speech, and however much it sounds
    like a backchannel or the reply's echo."""
    reply = "We have three options for a headache, all in stock today, okay."
    assert aside(heard, reply, no_speech=0.95, confidence=0.04, voiced=0.01) is None
    assert worth_rereading(heard) is False


def test_the_replys_own_call_for_help_heard_back_is_its_echo() -> None:
    """A reply that tells the caller to call 999 must not be cut by its own echo."""
    reply = "If he is not breathing, call 999 now, and stay with him."
    assert aside("call 999 now", reply) == "echo"
    assert aside("Call 999, he's not breathing!", REPLY) is None


class _Reads:
    """An `AsideReader` that hears every clip as `text`, leaning towards no speech."""

    def __init__(self, text: str, no_speech: float) -> None:
        self.text, self.no_speech = text, no_speech

    async def transcribe(self, pcm16: bytes, sample_rate: int = 16000, **_: object) -> Transcript:
        return Transcript(
            text=self.text,
            confidence=0.16,
            audio_s=len(pcm16) / 32000,
            decode_s=0.0,
            no_speech=self.no_speech,
        )

    async def score(self, pcm16: bytes, texts) -> list[float]:  # noqa: ANN001
        return [0.0 for _ in texts]


def burst(seconds: float = 0.3, seed: int = 0) -> bytes:
    """A cough as a noisy burst that falls away: no voice in it."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    envelope = np.exp(-t / (seconds / 3)) * np.minimum(1, t / 0.01)
    return (5400 * rng.normal(0, 1, t.size) * envelope).clip(-32768, 32767).astype("<i2").tobytes()


async def test_silero_tells_a_cough_read_as_words_from_the_same_words_said() -> None:
    """The same reading, "I don't know." at no speech 0.86: noise over a cough, where
    Silero hears no speech, and a barge-in over a caller saying it."""
    # Loaded first, as the gateway loads it at start: loading inside the reading can
    # outlast `GAUGE_TIMEOUT_S` on a busy machine, and the words alone would decide.
    load_silero()
    stt = _Reads("I don't know.", no_speech=0.86)
    over_cough = await read_aside(stt, burst(), REPLY, b"")
    said = await read_aside(stt, trim(espeak("I don't know.", "en-us")), REPLY, b"")
    assert over_cough is not None and over_cough.reason == "noise"
    assert said is not None and said.reason is None
    assert silero_voiced(burst()) < 0.5 < silero_voiced(trim(espeak("Wait.", "en-us")))
    assert silero_voiced(b"") == 0.0


async def test_without_silero_the_words_alone_decide(caplog) -> None:
    def broken(pcm16: bytes) -> float:
        raise RuntimeError("no model")

    caplog.set_level(logging.WARNING, logger="voice.overlap")
    reading = await read_aside(_Reads("I don't know.", 0.86), burst(), REPLY, b"", gauge=broken)
    assert reading is not None and reading.reason is None
    assert any(r.getMessage().startswith("aside_ungauged") for r in caplog.records)
    # Whisper leaning towards speech: Silero is not asked at all.
    asked: list[bytes] = []
    reading = await read_aside(
        _Reads("I can't.", 0.2), burst(), REPLY, b"", gauge=lambda pcm: asked.append(pcm) or 0.0
    )
    assert reading is not None and reading.reason is None and asked == []


async def test_a_slow_second_opinion_is_not_waited_for(caplog) -> None:
    """The reply is held while Silero reads: past `GAUGE_TIMEOUT_S` the words decide."""
    release = threading.Event()

    def stuck(pcm16: bytes) -> float:
        release.wait(5)
        return 0.0

    caplog.set_level(logging.WARNING, logger="voice.overlap")
    try:
        reading = await read_aside(_Reads("I can't.", 0.86), burst(), REPLY, b"", gauge=stuck)
    finally:
        release.set()
    assert reading is not None and reading.reason is None
    assert any(r.getMessage().startswith("aside_ungauged") for r in caplog.records)


async def test_a_reading_decided_elsewhere_while_silero_read_is_dropped() -> None:
    held = True

    def gauge(pcm16: bytes) -> float:
        nonlocal held
        held = False  # a long barge-in or the call's end, meanwhile
        return 0.0

    reading = await read_aside(
        _Reads("I can't.", 0.86), burst(), REPLY, b"", still_held=lambda: held, gauge=gauge
    )
    assert reading is None


def test_silero_reads_any_length_of_audio() -> None:
    said = trim(espeak("Wait.", "en-us"))
    assert silero_voiced(said + b"\x01") == pytest.approx(silero_voiced(said), abs=0.05)
    assert silero_voiced(b"\x01") == 0.0
    assert silero_voiced(said[: 2 * 300]) >= 0.0  # under one window: padded, not refused


@pytest.mark.parametrize(
    ("heard", "reread"),
    [("them", True), ("in a month.", True), ("It means them.", True)]
    # Stops and questions are what they seem.
    + [("No.", False), ("Hang on.", False), ("Pardon", False), ("How much?", False)]
    + [("No, wait, I wanted ibuprofen.", False), ("", False)],
)
def test_only_a_short_reading_is_read_again(heard, reread) -> None:
    assert worth_rereading(heard) is reread


@pytest.mark.parametrize(
    ("primed", "scored"),
    [
        ("Mm-hmm. Mm-hmm. Mm-hmm.", "Mm-hmm."),  # its loop would score well for itself
        ("Uh-huh, uh-huh,", "Uh-huh."),
        ("Mm.", "Mm."),
        ("Okay, right.", "Okay, right."),
        ("Yeah. Right. Right.", "Yeah. Right."),  # its first word alone leaves half unread
        ("Okay?", None),
        ("Hang on.", None),
        ("Okay. But no.", None),
        ("", None),
    ],
)
def test_a_primed_reading_is_scored_once_for_each_phrase(primed, scored) -> None:
    assert primed_backchannel(primed) == scored


async def listen_over(voice: VoiceSession, caller: bytes) -> list:
    """The caller asks, the reply starts, `caller` is said over it; every event until the
    reply is done or cut."""
    for chunk in frames(silence(0.5) + piper("I need something for a headache.") + silence(0.8)):
        await voice.push(AudioFrame(chunk, 16000))
    seen: list = []
    await next_of(voice, ReplyAudioEvent, seen)
    for chunk in frames(caller):
        await voice.push(AudioFrame(chunk, 16000))
    while not any(isinstance(e, (ReplyDoneEvent, InterruptedEvent)) for e in seen):
        await next_of(voice, (ReplyDoneEvent, InterruptedEvent), seen)
    return seen


@pytest.mark.parametrize("said", ["Okay.", "Yeah."])
async def test_a_backchannel_holds_the_reply_then_lets_it_finish(stt, tts, said) -> None:
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    seen = await listen_over(voice, trim(espeak(said, "en-us")) + silence(0.8))
    assert any(isinstance(e, ReplyHeldEvent) for e in seen)
    resumed = [e for e in seen if isinstance(e, ReplyResumedEvent)]
    assert len(resumed) == 1 and resumed[0].reason == "backchannel"
    done = seen[-1]
    assert isinstance(done, ReplyDoneEvent) and done.text == f"{FIRST} {SECOND}"
    assert responder.revised == [] and len(responder.heard) == 1
    await voice.close()


async def test_a_hum_whisper_reads_as_a_word_is_read_again_and_lets_the_reply_finish(
    stt, tts, caplog
) -> None:
    """Whisper tiny reads this "Mm-hmm." as "in a month": words, not a backchannel."""
    caplog.set_level(logging.INFO, logger="voice")
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    seen = await listen_over(voice, trim(piper("Mm-hmm.")) + silence(0.8))
    rereads = rereads_of(caplog)
    assert len(rereads) == 1, rereads
    resumed = [e for e in seen if isinstance(e, ReplyResumedEvent)]
    assert [e.reason for e in resumed] == ["backchannel"]
    # What the caller said is in the event, never in the log lines.
    heard = resumed[0].heard.strip(" .?!,").lower()
    assert heard and not any(heard in r.getMessage().lower() for r in caplog.records)
    assert isinstance(seen[-1], ReplyDoneEvent) and seen[-1].text == f"{FIRST} {SECOND}"
    await voice.close()


def rereads_of(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("aside_reread")]


@pytest.mark.parametrize("said", ["No.", "Stop."])
async def test_a_short_stop_is_not_read_again_and_cuts_the_reply(stt, tts, caplog, said) -> None:
    """Read again as a hum, a stop could come out a backchannel ("Pardon?" as "Uh-huh"
    scored within 1.34), and the reply would talk over the caller."""
    caplog.set_level(logging.INFO, logger="voice.overlap")
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    seen = await listen_over(voice, trim(espeak(said, "en-us")) + silence(0.8))
    assert isinstance(seen[-1], InterruptedEvent)
    assert rereads_of(caplog) == []
    await voice.close()


async def test_a_short_stop_misheard_and_read_again_still_cuts_the_reply(stt, tts, caplog) -> None:
    """Whisper tiny hears this "Hang on." as "Tanyon!", no stop word: it is read again,
    and primed with backchannels it still reads as "Hang on."."""
    caplog.set_level(logging.INFO, logger="voice.overlap")
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    seen = await listen_over(voice, trim(espeak("Hang on.", "en-us")) + silence(0.8))
    assert len(rereads_of(caplog)) == 1
    assert isinstance(seen[-1], InterruptedEvent)
    await voice.close()


async def test_a_real_barge_in_is_cut_when_its_words_are_read(stt, tts) -> None:
    """Short, so not cut for its length: its words decide."""
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    seen = await listen_over(voice, trim(espeak("No, stop.", "en-us")) + silence(0.8))
    assert any(isinstance(e, ReplyHeldEvent) for e in seen)
    assert isinstance(seen[-1], InterruptedEvent)
    await next_of(voice, ReplyAudioEvent, seen)  # the words over the reply were answered
    assert len(responder.heard) == 2 and "stop" in responder.heard[1].lower()
    await voice.close()


async def test_the_reply_is_held_at_the_first_voice_over_it_and_goes_on_if_it_was_nothing(
    stt, tts
) -> None:
    """A barge-in must stop the reply within 300 ms: waiting for the VAD's 200 ms of voice,
    plus the transport's 100 ms lead, did not. So the reply is held at the first 60 ms;
    a sound too short to be speech lets it go on."""
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    for chunk in frames(silence(0.5) + piper("I need something for a headache.") + silence(0.8)):
        await voice.push(AudioFrame(chunk, 16000))
    seen: list = []
    await next_of(voice, ReplyAudioEvent, seen)

    blip = trim(espeak("Ah.", "en-us"))[: 2 * int(16000 * 0.14)]  # under the VAD's 200 ms
    pushed_s, held_s = 0.0, None
    for chunk in frames(blip):
        await voice.push(AudioFrame(chunk, 16000))
        pushed_s += len(chunk) / 32000
        while not voice.events.empty():
            seen.append(voice.events.get_nowait())
            if isinstance(seen[-1], ReplyHeldEvent) and held_s is None:
                held_s = pushed_s
    assert held_s is not None and held_s <= 0.1
    for chunk in frames(silence(0.6)):
        await voice.push(AudioFrame(chunk, 16000))
    resumed = await next_of(voice, ReplyResumedEvent, seen)
    assert resumed.reason == "noise"
    done = await next_of(voice, (ReplyDoneEvent, InterruptedEvent), seen)
    assert isinstance(done, ReplyDoneEvent) and done.text == f"{FIRST} {SECOND}"
    assert responder.revised == [] and len(responder.heard) == 1
    await voice.close()


async def test_the_reply_heard_back_through_the_callers_microphone_does_not_cut_it(
    stt, tts
) -> None:
    """A speakerphone: the caller's input is the reply itself, 60 ms late and quieter."""
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    for chunk in frames(silence(0.5) + piper("I need something for a headache.") + silence(0.8)):
        await voice.push(AudioFrame(chunk, 16000))
    played: deque[tuple[float, bytes]] = deque()  # (when it went out, the frame)
    seen: list = []

    async def microphone() -> None:
        # The caller's line runs on the wall clock whether or not the reply is: each frame
        # of the reply comes back when the caller's loudspeaker plays it (the session's
        # 100 ms lead after it went out) and 60 ms more, half as loud; else silence.
        due = time.monotonic()
        while True:
            heard = silence(0.02)
            if played and played[0][0] + 0.16 <= due:
                heard = played.popleft()[1]
            echo = np.frombuffer(heard, "<i2") * 0.5
            await voice.push(AudioFrame(echo.astype("<i2").tobytes(), 16000))
            due += 0.02
            await asyncio.sleep(max(0.0, due - time.monotonic()))

    mic = asyncio.get_running_loop().create_task(microphone())
    try:
        while not any(isinstance(e, (ReplyDoneEvent, InterruptedEvent)) for e in seen):
            event = await next_of(voice, object, seen)
            if isinstance(event, ReplyAudioEvent):
                played.append((event.time, event.frame.pcm))
    finally:
        mic.cancel()
    assert not any(isinstance(e, InterruptedEvent) for e in seen)
    assert seen[-1].text == f"{FIRST} {SECOND}"
    await voice.close()


@pytest.mark.parametrize("delay_s", [0.0, 0.15, 0.5])
def test_the_sound_of_the_replys_echo_follows_the_reply(delay_s) -> None:
    from voice.degrade import telephone
    from voice.echo import ECHO_LIKENESS, echo_likeness

    reply = piper(REPLY)
    cut = len(reply) // 2 // 640 * 640  # the reply was held halfway
    played = reply[:cut]
    # What came back: the last 0.4 s played, late, quieter, through the phone line.
    echo = telephone(played[-12800:])
    echo = (np.frombuffer(echo, "<i2") * 0.3).astype("<i2").tobytes()
    heard = silence(0.3) + echo[: len(echo) - int(delay_s * 32000) // 2 * 2] + silence(0.5)
    assert echo_likeness(heard, played) >= ECHO_LIKENESS


@pytest.mark.parametrize("words", ["No, wait.", "Actually, can I have ibuprofen?", "Okay."])
def test_the_callers_own_voice_is_not_taken_for_the_replys_echo(words) -> None:
    from voice.echo import ECHO_LIKENESS, echo_likeness

    played = piper(REPLY)
    for voice in ("en-us", "en-gb+f3"):
        heard = silence(0.3) + trim(espeak(words, voice)) + silence(0.5)
        assert echo_likeness(heard, played) < ECHO_LIKENESS
