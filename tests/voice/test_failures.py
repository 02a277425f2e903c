"""A turn that fails inside (the conversation's store, the voice, the history's revision)
ends that turn with a plain error, and the caller's next words are answered."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from voice.events import ErrorEvent, InterruptedEvent, ReplyDoneEvent, ReplyTextEvent
from voice.fakes import FakeSTT, FakeTTS, buzz, loud_is_speech
from voice.frames import AudioFrame
from voice.session import TURN_FAILED, VoiceSession

from .speech import frames, silence
from .waiting import next_of

SECRET = "psycopg.OperationalError: connection to 10.0.3.7 failed, /srv/callswarm/db.py"


class Flaky:
    """Answers each utterance with `replies`' next: a text, or an error to raise after the
    text before the bar ("Here you are. |error")."""

    def __init__(self, *replies: str, revising_fails: bool = False) -> None:
        self.replies = list(replies)
        self.revising_fails = revising_fails
        self.revised: list[str] = []

    async def reply(self, text: str) -> AsyncIterator[str]:
        reply = self.replies.pop(0)
        said, bar, _ = reply.partition("|")
        for word in said.split(" "):
            yield word + " "
        if bar:
            raise RuntimeError(SECRET)

    async def interrupted(self, spoken: str) -> None:
        if self.revising_fails:
            raise RuntimeError(SECRET)
        self.revised.append(spoken)


class BrokenVoice(FakeTTS):
    def __init__(self, breaks_on: str) -> None:
        super().__init__()
        self.breaks_on = breaks_on

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        if self.breaks_on in text:
            raise RuntimeError(SECRET)
        return await super().synthesize(text, urgent=urgent)


def session(responder: Flaky, lines: list[str], tts: FakeTTS | None = None) -> VoiceSession:
    """A voice loop in stream time: its clock is the audio fed (`utterance`)."""
    voice = VoiceSession(
        "failures",
        responder,
        stt=FakeSTT(lines),
        tts=tts or FakeTTS(),
        realtime=False,
        gauge=loud_is_speech,
    )
    fed = [0.0]
    voice.clock = lambda: fed[0]
    voice.fed = fed  # type: ignore[attr-defined]
    return voice


async def utterance(voice: VoiceSession, seconds: float = 0.8) -> None:
    """A caller's words, after a second of quiet: a reply played just before is no echo."""
    fed: list[float] = voice.fed  # type: ignore[attr-defined]
    for chunk in frames(silence(1.0) + buzz(seconds, pitch=210.0) + silence(1.0)):
        fed[0] += 0.02
        await voice.push(AudioFrame(chunk, 16000))


async def replying(responder: Flaky, stt: FakeSTT) -> VoiceSession:
    """A voice loop in real time, its reply to the caller's first words playing: the
    caller's next words are over it."""
    voice = VoiceSession("failures", responder, stt=stt, tts=FakeTTS(), gauge=loud_is_speech)
    await voice.push(AudioFrame(silence(0.3) + buzz(0.8, pitch=210.0) + silence(1.0), 16000))
    await next_of(voice, ReplyTextEvent, [])
    return voice


async def error_then_answer(voice: VoiceSession) -> tuple[ErrorEvent, ReplyDoneEvent]:
    """The failed turn's error, the apology the caller hears, then the next utterance's
    whole reply."""
    error = await next_of(voice, ErrorEvent, [])
    assert isinstance(error, ErrorEvent)
    apology = await next_of(voice, ReplyDoneEvent, [])
    assert isinstance(apology, ReplyDoneEvent) and apology.text == TURN_FAILED
    assert not voice.busy
    await utterance(voice)
    done = await next_of(voice, ReplyDoneEvent, [])
    assert isinstance(done, ReplyDoneEvent)
    return error, done


@pytest.mark.parametrize(
    "first", ["|", "We have three kinds of ibuprofen. The cheapest is|"], ids=["at once", "midway"]
)
async def test_a_reply_that_fails_ends_its_turn_and_the_next_words_are_answered(
    first: str,
) -> None:
    voice = session(Flaky(first, "Yes, we do."), ["do you have ibuprofen", "and plasters"])
    await utterance(voice)
    error, done = await error_then_answer(voice)
    assert error.message == TURN_FAILED
    assert done.text == "Yes, we do."
    await voice.close()


async def test_a_voice_that_fails_ends_its_turn_and_the_next_words_are_answered() -> None:
    tts = BrokenVoice(breaks_on="cheapest")
    voice = session(
        Flaky("We have three kinds. The cheapest is two pounds.", "Yes, we do."),
        ["do you have ibuprofen", "and plasters"],
        tts,
    )
    await utterance(voice)
    error, done = await error_then_answer(voice)
    assert error.message == TURN_FAILED
    assert done.text == "Yes, we do."
    await voice.close()


async def test_what_failed_inside_never_reaches_the_transport() -> None:
    voice = session(Flaky("Sure.|", "Yes."), ["hello", "again"])
    await utterance(voice)
    seen: list[object] = []
    await next_of(voice, ErrorEvent, seen)
    assert seen and all("10.0.3.7" not in repr(event) for event in seen)
    await voice.close()


async def test_a_history_that_cannot_be_revised_does_not_end_the_call() -> None:
    """A barge-in revises the reply in the history to what was heard; if the store fails
    then, the reply is still cut and the barge-in is still the next turn."""
    responder = Flaky("We have " + "many kinds of bread today. " * 20, "Yes.", revising_fails=True)
    voice = await replying(responder, FakeSTT(["do you have bread", "stop, do you have rolls"]))
    # Over the reply, long, in another voice than the reply's own.
    await voice.push(AudioFrame(buzz(2.0, pitch=210.0) + silence(1.0), 16000))
    seen: list[object] = []
    done = await next_of(voice, ReplyDoneEvent, seen)
    assert any(isinstance(event, InterruptedEvent) for event in seen)
    assert isinstance(done, ReplyDoneEvent) and done.text == "Yes."
    await voice.close()


async def test_a_voice_that_cannot_speak_at_all_fails_once_and_falls_quiet() -> None:
    """The apology for a failed turn goes through the same voice: if that fails too,
    nothing more is tried until the caller speaks again."""
    voice = session(Flaky("We have three kinds.", "Yes."), ["do you have ibuprofen", "hello?"])
    voice.tts = BrokenVoice(breaks_on="")
    await utterance(voice)
    for _ in range(2):  # the reply's failure, then the apology's
        seen: list[object] = []
        await next_of(voice, ErrorEvent, seen)
        assert not any(isinstance(event, ReplyDoneEvent) for event in seen)
    assert not voice.busy  # and no third try was started
    await utterance(voice)
    await next_of(voice, ErrorEvent, [])
    await voice.close()


async def test_words_said_while_a_slow_history_cuts_the_reply_wait_for_the_barge_in() -> None:
    """A barge-in revises the history before its words are answered; if the store is
    slow, the caller may finish another sentence meanwhile. It is heard with the
    barge-in, as one turn: two turns at once would answer over each other."""
    asked: list[str] = []
    revising, revised = asyncio.Event(), asyncio.Event()

    class SlowStore(Flaky):
        async def reply(self, text: str) -> AsyncIterator[str]:
            asked.append(text)
            async for token in super().reply(text):
                yield token

        async def interrupted(self, spoken: str) -> None:
            revising.set()
            await revised.wait()

    stt = FakeSTT(["do you have bread", "actually I want rye instead", "and a baguette"])
    voice = await replying(
        SlowStore("We have " + "many kinds of bread today. " * 20, "Rye it is."), stt
    )
    # Words over the reply, short: read, then taken for a barge-in.
    await voice.push(AudioFrame(buzz(0.8, pitch=230.0) + silence(0.8), 16000))
    await asyncio.wait_for(revising.wait(), 60)
    await voice.push(AudioFrame(buzz(0.8, pitch=190.0) + silence(1.0), 16000))
    assert asked == ["do you have bread"]  # nothing answered while the reply is cut
    revised.set()
    done = await next_of(voice, ReplyDoneEvent, [])
    assert isinstance(done, ReplyDoneEvent) and done.text == "Rye it is."
    # The fake hears audio that starts as an utterance it heard as that utterance: the
    # turn was both, 0.8 s of voice each, read as one.
    assert asked == ["do you have bread", "actually I want rye instead"]
    assert len(stt.heard[1]) / 2 / 16000 >= 2 * 0.8 + 0.3, len(stt.heard[1])
    assert not voice.busy
    await voice.close()


async def test_a_reply_whose_stream_fails_as_it_is_cut_is_cut_all_the_same() -> None:
    """Cutting a reply closes its stream; a stream that raises then (a store failing as
    it rolls back) must not keep the cut reply, nor the caller's next words, waiting."""

    class FailsWhenClosed(Flaky):
        async def reply(self, text: str) -> AsyncIterator[str]:
            if self.replies.pop(0) == "Rye it is.":
                yield "Rye it is."
                return
            try:
                for _ in range(200):  # more than the player's queue holds
                    yield "We have many kinds of bread today. "
            finally:
                raise RuntimeError(SECRET)

    voice = await replying(
        FailsWhenClosed("long", "Rye it is."),
        FakeSTT(["do you have bread", "stop, do you have rye"]),
    )
    await voice.push(AudioFrame(buzz(2.0, pitch=230.0) + silence(1.0), 16000))  # long: a barge-in
    seen: list[object] = []
    done = await next_of(voice, ReplyDoneEvent, seen)
    assert any(isinstance(event, InterruptedEvent) for event in seen)
    assert isinstance(done, ReplyDoneEvent) and done.text == "Rye it is."
    assert not any(isinstance(event, ErrorEvent) for event in seen)  # no apology: it was cut
    await voice.close()
