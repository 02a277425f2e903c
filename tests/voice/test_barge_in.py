"""Barge-in: the caller speaking over a reply stops it and cancels its pending work; a cough does not."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from voice.events import (
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyHeldEvent,
    ReplyTextEvent,
    SpeechStartedEvent,
    TranscriptEvent,
)
from voice.frames import AudioFrame
from voice.session import VoiceSession

from .speech import cough, frames, piper, silence
from .waiting import next_of

FIRST = "We have three options for a headache, all in stock today."
SECOND = "Aspirin costs 2 dollars 49 for a pack of 32 tablets."


class SlowResponder:
    """Says one sentence, then waits for a model that never finishes; records what happened."""

    def __init__(self, *, finish: bool) -> None:
        self.finish = finish
        self.closed = asyncio.Event()
        self.heard: list[str] = []
        self.revised: list[str] = []

    async def reply(self, text: str) -> AsyncIterator[str]:
        self.heard.append(text)
        try:
            yield FIRST + " "
            if self.finish:
                yield SECOND
            else:
                await asyncio.Event().wait()  # pending LLM work that only cancellation ends
        finally:
            self.closed.set()

    async def interrupted(self, spoken: str) -> None:
        self.revised.append(spoken)


async def push(voice: VoiceSession, pcm: bytes) -> None:
    for chunk in frames(pcm):
        await voice.push(AudioFrame(chunk, 16000))


async def test_speech_over_a_reply_stops_it_cancels_pending_work_and_keeps_only_what_was_heard(
    stt, tts
) -> None:
    responder = SlowResponder(finish=False)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    await push(voice, silence(0.5) + piper("I need something for a headache.") + silence(0.8))
    seen: list = []
    await next_of(voice, ReplyAudioEvent, seen)  # the reply is playing

    await push(voice, piper("Wait, stop, I want ibuprofen.") + silence(0.8))
    await next_of(voice, ReplyHeldEvent, seen)  # stopped the moment speech is confirmed
    held: list = []
    interrupted = await next_of(voice, InterruptedEvent, held)
    after: list = []
    transcript = await next_of(voice, TranscriptEvent, after)

    # The words said over the reply, not the first ones. (Whether "ibuprofen" is spelt
    # right is test_stt's business: with the packages PyPI served on 2026-12-01, the
    # same code's tiny.en heard this one as "to be prophin", which search still finds.)
    assert "stop" in transcript.text.lower() and "headache" not in transcript.text.lower()
    # Nothing of the old reply plays once it is held.
    assert not [e for e in held + after if isinstance(e, (ReplyAudioEvent, ReplyTextEvent))]
    assert any(isinstance(e, SpeechStartedEvent) for e in seen)
    # The pending model work was cancelled, and the history keeps only what was heard.
    assert responder.closed.is_set()
    assert responder.revised == [interrupted.spoken]
    assert FIRST.startswith(interrupted.spoken) and len(interrupted.spoken) < len(FIRST)
    # The new words become the next turn: the responder is asked about them.
    await next_of(voice, ReplyTextEvent, after)
    assert len(responder.heard) == 2 and responder.heard[1] == transcript.text
    await voice.close()


async def test_a_cough_during_a_reply_does_not_interrupt_it(stt, tts) -> None:
    responder = SlowResponder(finish=True)
    voice = VoiceSession("c", responder, stt=stt, tts=tts, realtime=True)
    await push(voice, silence(0.5) + piper("I need something for a headache.") + silence(0.8))
    seen: list = []
    await next_of(voice, ReplyAudioEvent, seen)

    await push(voice, cough(0.1) + silence(0.6))
    done = await next_of(voice, ReplyDoneEvent, seen)

    assert not [e for e in seen if isinstance(e, InterruptedEvent)]
    assert done.text == f"{FIRST} {SECOND}"
    assert responder.revised == []
    await voice.close()
