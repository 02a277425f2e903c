"""A piece spoken in parts: the voice loop plays Piper's first part while the rest is
decoded, and the caller hears the piece as if it had been said whole."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

import numpy as np

from voice.events import InterruptedEvent, ReplyAudioEvent, ReplyDoneEvent
from voice.fakes import FakeSTT
from voice.resample import StreamResampler, resample
from voice.session import VoiceSession
from voice.speech import SpeechPart
from voice.tts import PiperTTS

from .waiting import next_of

FIRST = "I've added 2 packs of Paracetamol,"
REPLY = f"{FIRST} at 2 dollars 99 each."
STEP = 640  # a 20 ms frame at 16 kHz, PCM16


class HeldRest:
    """The real Piper, its parts handed on as they come, except that the rest of the
    first piece waits until the test lets it go."""

    def __init__(self, tts: PiperTTS) -> None:
        self.tts = tts
        self.sample_rate = tts.sample_rate
        self.on_synthesis = None
        self.heads: list[bytes] = []
        self.go_on = asyncio.Event()

    async def synthesize(self, text: str, *, urgent: bool = False) -> bytes:
        return await self.tts.synthesize(text, urgent=urgent)

    async def speak(self, text: str) -> AsyncGenerator[SpeechPart, None]:
        async for part in self.tts.speak(text):
            if not part.last:
                self.heads.append(part.pcm)
            elif len(self.heads) == 1:
                await self.go_on.wait()
            yield part


class Silent:
    """No caller here: the loop says prepared words."""

    async def reply(self, text: str) -> AsyncGenerator[str, None]:
        raise AssertionError("nobody spoke")
        yield ""

    async def interrupted(self, spoken: str) -> None:
        pass


async def _first_part_played(tts: PiperTTS) -> tuple[VoiceSession, HeldRest, list]:
    """The reply said, and every frame of its first part sent while the rest is held;
    the first part as long as on this host, idle (it follows the decode speed measured
    lately, so whatever ran before)."""
    tts.clear_cache()
    tts._frame_decode_s = 0.0005
    held = HeldRest(tts)
    voice = VoiceSession("parts", Silent(), stt=FakeSTT(), tts=held, realtime=False)  # type: ignore[arg-type]
    await voice.say(REPLY)
    events: list = []
    while (
        not held.heads
        or sum(isinstance(e, ReplyAudioEvent) for e in events)
        < len(StreamResampler(tts.sample_rate, 16000).process(held.heads[0])) // STEP
    ):
        await next_of(voice, ReplyAudioEvent, events)
    return voice, held, events


async def test_the_first_part_is_played_before_the_rest_exists_and_no_seam_is_heard(
    tts: PiperTTS,
) -> None:
    voice, held, events = await _first_part_played(tts)
    held.go_on.set()  # all of that was heard while the rest was held
    await next_of(voice, ReplyDoneEvent, events)
    out = np.frombuffer(
        b"".join(e.frame.pcm for e in events if isinstance(e, ReplyAudioEvent)), "<i2"
    ).astype(np.int32)
    # The same samples as each piece said whole, back to back; only each piece's last
    # frame is padded, so nothing is inserted where the first part meets the rest.
    tts.clear_cache()
    whole = [
        np.frombuffer(resample(tts.synthesize_sync(piece), tts.sample_rate, 16000), "<i2")
        for piece in (FIRST, "at 2 dollars 99 each.")
    ]
    first = whole[0].astype(np.int32)
    assert np.abs(out[: first.size] - first).max() <= 4
    padded = -(-first.size // (STEP // 2)) * (STEP // 2)
    assert not out[first.size : padded].any()
    assert out.size == padded + -(-whole[1].size // (STEP // 2)) * (STEP // 2)
    await voice.close()


async def test_a_reply_cut_during_the_first_part_counts_only_what_was_played(
    tts: PiperTTS,
) -> None:
    """Heard: the first part's share of the sentence, not the sentence."""
    voice, held, events = await _first_part_played(tts)
    await voice.interrupt()
    cut = await next_of(voice, InterruptedEvent, events)
    assert isinstance(cut, InterruptedEvent)
    assert FIRST.startswith(cut.spoken) and len(cut.spoken.split()) <= 2
    held.go_on.set()
    await voice.close()
