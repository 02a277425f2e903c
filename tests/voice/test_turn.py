"""The end of a caller's turn: Smart Turn and the pause's words decide, the VAD times it.

The session tests run in stream time (`realtime=False`, the clock is seconds of audio
fed), so a turn that ends in a pause is seen ending there, whatever the machine's speed.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agents.risk import ProbeReader, load_probe
from callswarm.app import build_services
from callswarm.serve import end_of_turn
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder
from voice.degrade import telephone
from voice.events import (
    ReplyDoneEvent,
    SpeechEndedEvent,
    SpeechStartedEvent,
    TranscriptEvent,
    TurnJudgedEvent,
)
from voice.frames import AudioFrame
from voice.session import VoiceSession
from voice.speech import Word
from voice.turn import (
    FixedTurn,
    SmartTurn,
    TurnEnd,
    TurnVerdict,
    dangling,
    installed_smart_turn,
    spoken,
    when_over,
    when_over_again,
)
from voice.vad import VadConfig

from .speech import espeak, frames, piper, silence, trim
from .waiting import next_of

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("words", "more"),
    [
        ("I need something for my...", True),
        ("Could I get a box of", True),
        ("Do you have any of the, um,", True),
        ("I'd like to order some.", True),
        ("Can you tell me what time you?", True),
        ("I was wondering if you could", True),
        ("It's for my husband, he's got a.", True),
        ("I think the one I had before was...", True),
        ("Do you have any ibuprofen?", False),
        ("Yes, that's right.", False),
        ("Thank you", False),
        ("Yes I do.", False),  # a short answer may end on an auxiliary
        ("It was.", False),
        ("No thanks, that's everything.", False),
        ("", False),
    ],
)
def test_words_that_stop_mid_sentence_are_heard_as_more_to_come(words, more) -> None:
    assert dangling(words) is more


def over(p: float) -> TurnVerdict:
    return TurnVerdict(complete=p > 0.5, probability=p, seconds=0.01)


@pytest.mark.parametrize(
    ("verdict", "words", "end"),
    [
        # Both hear a finished sentence: answered without waiting for the usual stop.
        (over(0.9), "Do you have any ibuprofen?", TurnEnd.NOW),
        (over(0.6), "Two packs please.", TurnEnd.NOW),
        (over(0.6), "That's all, thanks!", TurnEnd.NOW),
        # A full stop after a word no sentence ends on: the words hold it all the same.
        (over(0.99), "I'd like to order some.", TurnEnd.HOLD),
        (over(0.1), "Do you have any ibuprofen?", TurnEnd.HOLD),
        # Words Whisper did not end as a sentence wait for the usual stop.
        (over(0.9), "Yes", TurnEnd.AT_STOP),
        # The words overrule a model that hears a finished sentence.
        (over(0.99), "Could I get a box of", TurnEnd.HOLD),
        # No model answer: the words alone.
        (None, "Could I get a box of", TurnEnd.HOLD),
        (None, "Two packs please.", TurnEnd.AT_STOP),
        # A cough heard as nothing is never held.
        (over(0.1), "", TurnEnd.AT_STOP),
    ],
)
def test_the_model_and_the_words_decide_together(verdict, words, end) -> None:
    assert when_over(verdict, words) is end


def placed(*words: tuple[str, float]) -> list[Word]:
    return [Word(text=text, start=max(0.0, end - 0.3), end=end) for text, end in words]


@pytest.mark.parametrize(
    ("words", "said"),
    [
        # Whisper finished the sentence, and stretched the word it added over the silence.
        (placed((" Could", 0.3), (" a", 0.9), (" box", 1.1), (" of", 1.3), (" it", 3.9), ("?", 3.9)),
         "Could a box of"),
        (placed((" he's", 2.0), (" got", 2.2), (" it", 3.8), ("!", 4.9)), "he's got"),
        (placed((" for", 0.8), (" my", 1.0), (",", 1.0), (" head", 3.0), (" ache", 4.0)), "for my"),
        # What was said stays, the full stop Whisper stretched after it too.
        (placed((" my", 1.4), (" headache", 1.7), (".", 3.9)), "my headache."),
        (placed((" Yes", 0.5)), "Yes"),
        ([], ""),
    ],
)  # fmt: skip
def test_words_whisper_placed_past_the_audio_are_not_taken_as_said(words, said) -> None:
    assert spoken(words, audio_s=1.8) == said


@pytest.mark.parametrize("voice", [piper, espeak])
@pytest.mark.parametrize(
    ("say", "heard"),
    [
        ("Could I get a box of", "Could I get a box of"),
        ("Is it okay to take it with", "Is it okay to take it with"),
        ("Could I get a box of ibuprofen?", "Could I get a box of ibuprofen?"),
        ("I need something for my headache.", "I need something for my headache."),
    ],
)
def test_whisper_places_a_word_it_added_past_the_audio(stt, voice, say, heard) -> None:
    """The transcripts are Whisper's completions of each cut sentence, measured; placed
    on the audio that was said, only what was said is left."""
    finished = {
        "Could I get a box of": "Could I get a box of ibuprofen?",
        "Is it okay to take it with": "Is it okay to take it with me?",
    }
    pcm = silence(0.3) + trim(voice(say)) + silence(0.2)
    words = stt.words_sync(pcm, finished.get(say, say))
    assert spoken(words, len(pcm) / 32000) == heard


def test_words_are_not_placed_on_a_turn_too_long_for_the_fitted_window(stt) -> None:
    assert stt.words_sync(silence(30.0), "I need something for my headache.") == []


async def ended_at(voice: VoiceSession, audio: bytes) -> tuple[list[float], int]:
    """Stream times at which turns ended, and how many times speech started."""
    fed = 0.0
    voice.clock = lambda: fed
    ends, starts = [], 0
    for chunk in frames(audio):
        fed += len(chunk) / 32000
        await voice.push(AudioFrame(chunk, 16000))
        while not voice.events.empty():
            event = voice.events.get_nowait()
            if isinstance(event, SpeechEndedEvent):
                ends.append(event.time)
            starts += isinstance(event, SpeechStartedEvent)
    await voice.close()
    return ends, starts


class Quiet:
    """A responder that answers nothing: these tests are about when turns end."""

    async def reply(self, text: str):
        return
        yield

    async def interrupted(self, spoken: str) -> None:
        pass


def paused_sentence(pause: float) -> tuple[bytes, float]:
    """'I need something for my' ... 'headache please.', and when the second part starts."""
    head = trim(piper("I need something for my"))
    tail = trim(piper("headache, please."))
    audio = silence(0.4) + head + silence(pause) + tail + silence(2.0)
    return audio, (len(silence(0.4)) + len(head) + len(silence(pause))) / 32000


@pytest.mark.parametrize("pause", [0.6, 1.2])
async def test_a_caller_who_stops_mid_sentence_is_waited_for(stt, pause) -> None:
    audio, resumed = paused_sentence(pause)
    judge = FixedTurn()  # the model says "over": the words must hold the turn
    voice = VoiceSession("c", Quiet(), stt=stt, tts=None, turn=judge, realtime=False)  # type: ignore[arg-type]
    ends, _ = await ended_at(voice, audio)
    assert judge.calls >= 1
    assert len(ends) == 1 and ends[0] > resumed


class ReadingAhead(Quiet):
    """Records the words handed over before a turn is sure to end, and the turn's own."""

    def __init__(self) -> None:
        self.anticipated: list[str] = []
        self.said: list[str] = []

    async def anticipate(self, text: str) -> None:
        self.anticipated.append(text)

    async def reply(self, text: str):
        self.said.append(text)
        return
        yield


@pytest.mark.parametrize(
    ("say", "end"),
    [("Do you have any ibuprofen?", TurnEnd.NOW), ("Could I get a box of", TurnEnd.HOLD)],
)
async def test_a_pause_judged_over_hands_its_words_ahead_and_a_held_one_does_not(
    stt, say, end
) -> None:
    """The responder reads a pause's words while the stop silence runs (the safety
    probe: docs/voice.md); words judged mid-sentence are never handed over."""
    responder = ReadingAhead()
    voice = VoiceSession("c", responder, stt=stt, tts=None, turn=FixedTurn(), realtime=False)  # type: ignore[arg-type]
    for frame in frames(silence(0.4) + trim(piper(say)) + silence(2.0)):
        await voice.push(AudioFrame(frame, 16000))
    collected: list = []
    await next_of(voice, TranscriptEvent, collected)
    await voice.close()
    judged = [e for e in collected if isinstance(e, TurnJudgedEvent) and not e.again]
    assert [j.end for j in judged] == [end], judged
    assert len(responder.said) == 1, responder.said  # a held turn ends after the hold
    assert responder.anticipated == (responder.said if end is TurnEnd.NOW else [])


class ReadingUntilLet(ReadingAhead):
    """Reads ahead until let, noting the readings that ran to their end."""

    def __init__(self) -> None:
        super().__init__()
        self.let = asyncio.Event()
        self.read: list[str] = []
        self._read = asyncio.Event()

    async def anticipate(self, text: str) -> None:
        self.anticipated.append(text)
        await self.let.wait()
        self.read.append(text)
        self._read.set()

    async def read_once(self) -> None:
        while not self.read:
            await self._read.wait()


async def test_words_handed_ahead_are_withdrawn_when_the_caller_goes_on(stt) -> None:
    """A pause judged over that the caller speaks on from: what was read ahead for it
    is withdrawn (the safety probe's reading is dropped, agents/risk.py)."""
    responder = ReadingUntilLet()
    voice = VoiceSession("c", responder, stt=stt, tts=None, turn=FixedTurn(), realtime=False)  # type: ignore[arg-type]
    first, then = trim(piper("Do you have any ibuprofen?")), trim(piper("And some plasters."))
    for frame in frames(silence(0.4) + first + silence(0.32) + then + silence(2.0)):
        await voice.push(AudioFrame(frame, 16000))
    events: list = []
    await next_of(voice, TranscriptEvent, events)
    responder.let.set()
    await responder.read_once()
    await voice.close()
    judged = [(e.end, e.words) for e in events if isinstance(e, TurnJudgedEvent) and not e.again]
    assert judged[0][0] is TurnEnd.NOW and "plasters" not in judged[0][1], judged
    # Withdrawn before or while it ran: only the turn's words were read to the end.
    assert len(responder.read) == 1 and "plasters" in responder.read[0], responder.read


class Finishing:
    """The real recogniser, whose transcripts finish the caller's sentence for them, as
    Whisper tiny did at pauses ("Could I get a box of" as "Could I get a box of it?").
    `placing` fails placing words, when set."""

    def __init__(self, stt, finished: str, placing: Exception | None = None) -> None:
        self.stt, self.finished, self.placing = stt, finished, placing

    async def transcribe(self, pcm16: bytes, *args, **kwargs):
        return replace(await self.stt.transcribe(pcm16, *args, **kwargs), text=self.finished)

    async def words(self, pcm16: bytes, text: str) -> list[Word]:
        if self.placing is not None:
            raise self.placing
        return await self.stt.words(pcm16, text)


async def test_a_sentence_whisper_finished_at_a_pause_is_still_waited_for(stt) -> None:
    audio, resumed = paused_sentence(0.9)
    finishing = Finishing(stt, "I need something for my headache.")
    # The model says "over" and the words end a sentence: only where they lie says more.
    voice = VoiceSession("c", Quiet(), stt=finishing, tts=None, turn=FixedTurn(), realtime=False)  # type: ignore[arg-type]
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 1 and ends[0] > resumed


async def test_words_that_cannot_be_placed_leave_the_transcript_as_it_was(stt, caplog) -> None:
    audio, resumed = paused_sentence(0.9)
    finishing = Finishing(stt, "I need something for my headache.", RuntimeError("no encoder"))
    voice = VoiceSession("c", Quiet(), stt=finishing, tts=None, turn=FixedTurn(), realtime=False)  # type: ignore[arg-type]
    with caplog.at_level("WARNING", logger="voice.session"):
        ends, _ = await ended_at(voice, audio)
    assert len(ends) == 2 and ends[0] < resumed  # judged over, as before, and the call goes on
    assert "pause_words_unplaced" in caplog.text


async def test_without_a_model_the_same_pause_ends_the_turn(stt) -> None:
    audio, resumed = paused_sentence(0.6)
    voice = VoiceSession("c", Quiet(), stt=stt, tts=None, realtime=False)  # type: ignore[arg-type]
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 2 and ends[0] < resumed


async def test_a_turn_the_model_hears_unfinished_is_held_then_ends_at_the_hold(stt) -> None:
    said = trim(piper("Do you have any ibuprofen?"))
    audio = silence(0.4) + said + silence(3.0)
    spoken_until = (len(silence(0.4)) + len(said)) / 32000
    voice = VoiceSession(
        "c",
        Quiet(),
        stt=stt,
        tts=None,  # type: ignore[arg-type]
        turn=FixedTurn(lambda _pcm: False),
        realtime=False,
    )
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 1
    assert 1.5 < ends[0] - spoken_until < 1.8  # the 1.6 s hold, not the 0.5 s stop


def judged_session(stt, turn: FixedTurn, *, realtime: bool, vad: VadConfig) -> VoiceSession:
    """A session whose pauses `turn` judges, with its own end-of-turn timing."""
    return VoiceSession(
        "c",
        Quiet(),
        stt=stt,
        tts=None,  # type: ignore[arg-type]
        turn=turn,
        realtime=realtime,
        vad=vad,
    )


async def test_a_finished_sentence_is_answered_before_the_usual_stop(stt) -> None:
    said = trim(espeak("Can I speak to the pharmacist?"))
    audio = silence(0.4) + said + silence(2.0)
    spoken_until = (len(silence(0.4)) + len(said)) / 32000
    voice = judged_session(stt, FixedTurn(), realtime=False, vad=VadConfig(done_ms=250))
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 1
    assert 0.2 < ends[0] - spoken_until < 0.4  # the 250 ms of a judged end, not 500 ms


async def test_words_without_a_sentence_end_wait_for_the_usual_stop(stt) -> None:
    said = trim(espeak("Can I speak to the pharmacist?"))
    audio = silence(0.4) + said + silence(2.0)
    spoken_until = (len(silence(0.4)) + len(said)) / 32000
    unended = Finishing(stt, "Can I speak to the pharmacist")
    voice = VoiceSession("c", Quiet(), stt=unended, tts=None, turn=FixedTurn(), realtime=False)  # type: ignore[arg-type]
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 1
    assert 0.45 < ends[0] - spoken_until < 0.7


class Broken:
    calls = 0

    async def judge(self, pcm16: bytes) -> TurnVerdict:
        self.calls += 1
        raise RuntimeError("onnxruntime fell over")

    def judge_sync(self, pcm16: bytes) -> TurnVerdict:
        raise RuntimeError("onnxruntime fell over")


async def test_a_failing_model_leaves_the_words_to_decide_and_the_call_goes_on(stt) -> None:
    said = trim(piper("Do you have any ibuprofen?"))
    broken = Broken()
    voice = VoiceSession("c", Quiet(), stt=stt, tts=None, turn=broken, realtime=False)  # type: ignore[arg-type]
    ends, _ = await ended_at(voice, silence(0.4) + said + silence(2.0) + said + silence(2.0))
    assert broken.calls == 2
    assert len(ends) == 2


@pytest.fixture(scope="module")
def smart_turn() -> SmartTurn:
    path = installed_smart_turn(REPO / "data")
    assert path is not None, "make test installs it: callswarm model install"
    return SmartTurn(path)


def test_the_real_model_hears_a_question_end_and_a_thought_break_off(smart_turn) -> None:
    done = smart_turn.judge_sync(
        silence(0.3) + trim(piper("Do you have any ibuprofen?")) + silence(0.2)
    )
    assert done.complete and done.probability > 0.8
    assert 0 < done.seconds < 2
    cut = smart_turn.judge_sync(
        silence(0.3) + trim(espeak("I was wondering if you could")) + silence(0.2)
    )
    assert not cut.complete


@pytest.mark.parametrize("line", ["wide band", "telephone"])
async def test_the_real_model_in_a_session_waits_for_the_rest_of_the_sentence(
    stt, smart_turn, line
) -> None:
    audio, resumed = paused_sentence(0.9)
    if line == "telephone":
        audio = telephone(audio)
    voice = VoiceSession("c", Quiet(), stt=stt, tts=None, turn=smart_turn, realtime=False)  # type: ignore[arg-type]
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 1 and ends[0] > resumed


def test_serve_falls_back_to_silence_when_the_model_is_not_installed(tmp_path) -> None:
    assert end_of_turn(Settings(data_dir=tmp_path)) is None
    assert end_of_turn(Settings(data_dir=REPO / "data", end_of_turn="silence")) is None
    assert isinstance(end_of_turn(Settings(data_dir=REPO / "data")), SmartTurn)


async def fed(voice: VoiceSession, audio: bytes) -> None:
    for chunk in frames(audio):
        await voice.push(AudioFrame(chunk, 16000))


def drained(voice: VoiceSession) -> list:
    out = []
    while not voice.events.empty():
        out.append(voice.events.get_nowait())
    return out


@pytest.mark.parametrize(
    ("complete", "ends_by", "end"), [(True, 0.4, TurnEnd.NOW), (False, 1.6, TurnEnd.HOLD)]
)
async def test_live_callers_are_judged_while_their_audio_goes_on_arriving(
    stt, complete, ends_by, end
) -> None:
    """On a live line the judgement runs beside the audio; its verdict sets the stop."""
    # A judged end well past the 0.2 s fed before judging, so that it is seen waiting.
    turn = FixedTurn(lambda _pcm: complete)
    voice = judged_session(stt, turn, realtime=True, vad=VadConfig(done_ms=400))
    await fed(voice, silence(0.4) + trim(piper("Do you have any ibuprofen?")) + silence(0.2))
    events: list = []
    judged = await next_of(voice, TurnJudgedEvent, events)
    assert judged.end is end
    assert "ibuprofen" in judged.words.lower()
    assert not any(isinstance(e, SpeechEndedEvent) for e in events)
    await fed(voice, silence(ends_by - 0.2 - 0.05))
    assert not any(isinstance(e, SpeechEndedEvent) for e in drained(voice))
    await fed(voice, silence(0.1))
    assert any(isinstance(e, SpeechEndedEvent) for e in drained(voice))
    await voice.close()


async def test_a_turn_judged_over_after_its_silence_is_long_enough_ends_when_judged(stt) -> None:
    """Live, the judgement comes about 0.3 s into the pause: past `done_ms`, the turn ends
    the moment it is judged, not at the 500 ms stop."""
    voice = judged_session(stt, FixedTurn(), realtime=True, vad=VadConfig(done_ms=200))
    await fed(voice, silence(0.4) + trim(piper("Do you have any ibuprofen?")) + silence(0.3))
    events: list = []
    judged = await next_of(voice, TurnJudgedEvent, events)
    assert judged.end is TurnEnd.NOW
    ended = await next_of(voice, SpeechEndedEvent, events)
    assert ended.time >= judged.time
    await voice.close()


def test_a_judged_end_may_not_wait_longer_than_the_stop() -> None:
    with pytest.raises(ValueError, match="done_ms"):
        VadConfig(done_ms=600)
    with pytest.raises(ValueError, match="done_ms"):
        VadConfig(done_ms=0)


def _silent_tail_s(pcm16: bytes) -> float:
    """Seconds of digital silence at the end of the audio (the tests' pauses are zeros)."""
    samples = np.frombuffer(pcm16, dtype="<i2")
    voiced = np.flatnonzero(samples)
    return (samples.size - (voiced[-1] + 1 if voiced.size else 0)) / 16000


@pytest.mark.parametrize(("later", "wait"), [(True, (0.45, 0.6)), (False, (1.5, 1.8))])
async def test_a_held_pause_is_judged_again_at_the_usual_stop(stt, later, wait) -> None:
    """A model that hears the turn unfinished 150 ms into the pause may hear it finished
    at 500 ms; the turn then ends there, not after the 1.6 s hold."""
    said = trim(espeak("Can I speak to the pharmacist?"))
    audio = silence(0.4) + said + silence(2.5)
    spoken_until = (len(silence(0.4)) + len(said)) / 32000
    turn = FixedTurn(lambda pcm: later and _silent_tail_s(pcm) > 0.4)
    voice = judged_session(stt, turn, realtime=False, vad=VadConfig())
    ends, _ = await ended_at(voice, audio)
    assert len(ends) == 1
    assert wait[0] < ends[0] - spoken_until < wait[1]
    assert turn.calls == 2  # at 150 ms, and again at the stop


@pytest.mark.parametrize(
    ("probability", "text", "end"),
    [
        (0.95, "Can I speak to the pharmacist?", TurnEnd.NOW),
        (0.85, "Can I speak to the pharmacist?", TurnEnd.HOLD),  # over, but not sure enough
        (0.95, "Can I speak to the", TurnEnd.HOLD),  # the words still end mid-sentence
    ],
)
def test_a_held_pause_ends_at_the_stop_only_when_the_model_is_sure(probability, text, end) -> None:
    verdict = TurnVerdict(complete=probability >= 0.5, probability=probability, seconds=0.0)
    assert when_over_again(verdict, text) is end


async def test_a_live_held_pause_ends_when_judged_again_at_the_stop(stt) -> None:
    """On a live line too: the second judgement runs beside the audio, and its verdict
    ends the turn at the stop instead of the hold."""
    turn = FixedTurn(lambda pcm: _silent_tail_s(pcm) > 0.4)
    voice = judged_session(stt, turn, realtime=True, vad=VadConfig())
    await fed(voice, silence(0.4) + trim(piper("Do you have any ibuprofen?")) + silence(0.2))
    events: list = []
    first = await next_of(voice, TurnJudgedEvent, events)
    assert first.end is TurnEnd.HOLD and not first.again
    await fed(voice, silence(0.35))
    again = await next_of(voice, TurnJudgedEvent, events)
    assert again.end is TurnEnd.NOW and again.again
    await next_of(voice, SpeechEndedEvent, events)
    await voice.close()


class HistoryAtAsk:
    """The real safety model, noting how much of the caller's history was kept when it
    was asked: nothing yet, if it read the words before the turn committed them."""

    def __init__(self, embedder, session) -> None:
        self.embedder, self.session = embedder, session
        self.model_id = embedder.model_id
        self.asked: list[tuple[str, int]] = []

    async def embed(self, text: str):
        self.asked.append((text, len(await self.session.get_raw_history())))
        return await self.embedder.embed(text)


async def test_the_pharmacy_reads_a_callers_words_before_their_turn_with_the_real_models(
    tmp_path, stt, tts, smart_turn
) -> None:
    """Real Whisper, Smart Turn, Piper, and the pharmacy's probe on its model: the
    caller's line is read once, during the pause, and the turn's screen uses it."""
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    try:
        assert services.embedder is not None
        session = services.engine.session("c", services.swarm)
        watched = HistoryAtAsk(services.embedder, session)
        services.engine.deps = replace(
            services.engine.deps, risk=ProbeReader(watched, load_probe())
        )
        responder = SwarmResponder(session)
        voice = VoiceSession("c", responder, stt=stt, tts=tts, turn=smart_turn, realtime=False)
        said = "Do you have any zinc tablets?"
        for frame in frames(silence(0.4) + trim(piper(said)) + silence(2.0)):
            await voice.push(AudioFrame(frame, 16000))
        events: list = []
        done = await next_of(voice, ReplyDoneEvent, events)
        await voice.close()
        heard = next(e for e in events if isinstance(e, TranscriptEvent)).text
        assert "zinc" in heard.lower()
        assert watched.asked == [(heard, 0)]
        assert "Zinc" in done.text, done.text
    finally:
        await services.aclose()
