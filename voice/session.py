"""One caller's voice loop: audio in → VAD → STT → reply stream → sentences → TTS → paced audio out.

It needs only a `Responder`: text in, an async stream of reply text out; one that is
also an `Anticipator` is handed a pause's words ahead of the turn. It never sees agents. Everything one turn owns lives in a `_Turn`: its STT, the reply
stream, the TTS, the paced playback and the text spoken so far. A barge-in
cancels that one object, awaits it, and tells the responder what the caller
actually heard, so the history keeps only that.

Past 400 lines because the loop's states (speaking, held, paused, judged) are one
object's: the barge-in, the aside and the end of turn all read and change them.
Issue 22 splits the turn runner out of it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from contextlib import aclosing, suppress
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from voice.echo import EchoGate
from voice.events import (
    ErrorEvent,
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyHeldEvent,
    ReplyResumedEvent,
    ReplyTextEvent,
    SpeechEndedEvent,
    SpeechStartedEvent,
    TranscriptEvent,
    TurnJudgedEvent,
    TurnMetrics,
    TurnMetricsEvent,
    VoiceEvent,
)
from voice.frames import AudioFrame
from voice.noise import noise_turn
from voice.normalize import for_speech
from voice.overlap import read_aside
from voice.recording import Recording
from voice.resample import StreamResampler
from voice.sentences import SentenceSplitter
from voice.speech import PartedSpeech, SpeechPart, SpeechToText, TextToSpeech, Transcript
from voice.turn import EndOfTurn, TurnEnd, TurnVerdict, spoken, when_over, when_over_again
from voice.vad import (
    SpeechEnded,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    SpeechStillPaused,
    TurnDetector,
    VadConfig,
    VadEvent,
)
from voice.voiced import SpeechGauge, silero_latest, silero_voiced

log = logging.getLogger("voice.session")

VAD_RATE = 16000
# Below this much reply audio ready ahead of the caller's ear, the next piece is
# synthesised urgently: in parts, its first heard while the rest is decoded, by a voice
# that can (`PartedSpeech`). A plain synthesis takes ~0.08 s per second of speech, so a
# second ahead is ample.
URGENT_BELOW_S = 1.0
# Speech over a reply holds it; once it has gone on this long it is a barge-in, whatever
# its words. "Mm-hmm", "okay, thanks" and a cough are shorter (a slow espeak voice's
# "okay, thanks" ran past 1.0 s); a caller who means to stop the reply is already not
# hearing it, so waiting to be sure costs them nothing.
ASIDE_MAX_S = 1.5
# The reply is held at the first 60 ms of voice over it (three 20 ms frames: not one
# click), not at the VAD's 200 ms confirmation: with the transport's 100 ms lead, waiting
# for the confirmation stopped a real barge-in 0.32 s after it began (p50), over the
# 300 ms it is allowed. Voice that stops before it is confirmed was nothing: the reply
# goes on after ONSET_RELEASE_S of quiet.
ONSET_HOLD_S = 0.06
ONSET_RELEASE_S = 0.3
# After a hold that came to nothing, the next ones wait for confirmed speech for this
# long; after the reply's echo, for the rest of the reply. Held at its first 60 ms, an
# echo comes back in fragments too short to read ("Take. Take. Take." for "three options").
ONSET_QUIET_S = 2.0
# What the caller is told, and hears, when their turn fails: never the error, which may
# name a file, a host or a query. The error itself is in the `turn_failed` log line.
TURN_FAILED = "Sorry, something went wrong on our side. Could you say that again?"


class Responder(Protocol):
    def reply(self, text: str) -> AsyncIterator[str]:
        """Stream the reply to what the caller said. Closing the stream cancels the work."""
        ...

    async def interrupted(self, spoken: str) -> None:
        """The reply was cut: `spoken` is all the caller heard of it."""
        ...


@runtime_checkable
class Anticipator(Protocol):
    """A responder that can start its slow, effect-free work on a pause's words before
    the pause is sure to end the turn (the agents' safety reading: docs/voice.md)."""

    async def anticipate(self, text: str) -> None: ...


class _Turn:
    """One reply in flight: cancel it and everything it started goes with it."""

    def __init__(
        self,
        voice: VoiceSession,
        *,
        audio: bytes | None = None,
        text: str | None = None,
        end_wall: float | None = None,
        speech_s: float = 0.0,
        transcript: asyncio.Task[Transcript] | None = None,
        judge_noise: bool = False,
    ) -> None:
        self.voice = voice
        self.said: str | None = None  # the caller's words, once transcribed
        self.text = text  # prepared words (a greeting), said without the responder
        self.end_wall = end_wall
        self.speech_s = speech_s
        self._audio = audio
        self._transcript = transcript  # decoded during the caller's pause, if they stayed silent
        self._judge_noise = judge_noise  # may be dropped as noise (`voice.noise.noise_turn`)
        self.played: list[str] = []
        self.current: tuple[str, float] | None = None  # sentence, fraction played
        self.replying = False
        self.cut = False  # interrupted: whatever it ends with, the caller is heard next
        self._stopped = False  # the producer was cancelled: the player is gone
        self._first_piece = True
        self.synthesized_s = 0.0  # seconds of reply audio synthesised
        self.sent_s = 0.0  # seconds of it sent to the caller
        self.first_token: float | None = None
        self.first_audio: float | None = None
        self.transcribed: float | None = None
        self._flowing = asyncio.Event()  # cleared while the caller is heard over the reply
        self.sent_audio = bytearray()  # what went out, at the VAD's rate: to know its echo
        self._flowing.set()
        self.task = asyncio.get_running_loop().create_task(
            self._main(), name=f"turn-{voice.session_id}"
        )

    @property
    def speaking(self) -> bool:
        """Reply audio is going out (or held): speech over it may be an aside."""
        return self.first_audio is not None and not self.task.done()

    def hold(self) -> None:
        self._flowing.clear()

    def release(self) -> None:
        self._flowing.set()

    def reply_text(self) -> str:
        """The sentences of the reply so far, the one playing included."""
        current = [self.current[0]] if self.current is not None else []
        return " ".join(self.played + current)

    def spoken(self) -> str:
        words = list(self.played)
        if self.current is not None:
            sentence, fraction = self.current
            cut = sentence.split()
            words.append(" ".join(cut[: int(len(cut) * fraction)]))
        return " ".join(w for w in words if w).strip()

    async def _main(self) -> None:
        voice = self.voice
        if self._audio is not None:
            if self._transcript is not None:
                transcript = await self._transcript
            else:
                transcript = await voice.stt.transcribe(self._audio)
            if self._judge_noise and await noise_turn(
                voice.stt,
                self._audio,
                transcript.text,
                session_id=voice.session_id,
                gauge=voice.gauge,
            ):
                # Nothing was said: told as a turn heard as nothing, which answers nothing.
                transcript = replace(transcript, text="")
            self.transcribed = voice.clock()
            voice._emit(
                TranscriptEvent(
                    session_id=voice.session_id,
                    time=self.transcribed,
                    text=transcript.text,
                    confidence=transcript.confidence,
                )
            )
            if not transcript.text.strip():
                return
            self.said = transcript.text
        await self._run()

    async def _run(self) -> None:
        queue: asyncio.Queue[_Said | None] = asyncio.Queue(maxsize=3)
        producer = asyncio.get_running_loop().create_task(self._produce(queue))
        try:
            await self._play(queue)
            await producer
        finally:
            if not producer.done():
                self._stopped = True
                producer.cancel()
                with suppress(asyncio.CancelledError):
                    await producer

    async def _produce(self, queue: asyncio.Queue[_Said | None]) -> None:
        try:
            await self._pieces(queue)
        except Exception:
            # The player waits on the queue: told the reply is over, it stops, and `_run`
            # raises this error from the producer. Not when stopped (an error while
            # closing the stream): nobody reads the queue then.
            if not self._stopped:
                await queue.put(None)
            raise
        await queue.put(None)

    async def _pieces(self, queue: asyncio.Queue[_Said | None]) -> None:
        voice = self.voice
        splitter = SentenceSplitter()
        if self.text is not None:
            for sentence in splitter.feed(self.text) + splitter.flush():
                await self._say(sentence, queue)
        elif self.said:
            self.replying = True
            stream = voice.responder.reply(self.said)
            try:
                async for token in stream:
                    if self.first_token is None:
                        self.first_token = voice.clock()
                    for sentence in splitter.feed(token):
                        await self._say(sentence, queue)
            finally:
                await stream.aclose()  # type: ignore[attr-defined]
            for sentence in splitter.flush():
                await self._say(sentence, queue)

    async def _say(self, sentence: str, queue: asyncio.Queue[_Said | None]) -> None:
        tts = self.voice.tts
        first, self._first_piece = self._first_piece, False
        # Urgent for the first piece, and whenever the player is about to run dry: a
        # short first sentence ("Done.") otherwise ends before the next is ready, and
        # the caller hears the gap. Otherwise plain, which costs less CPU per turn.
        urgent = first or self.synthesized_s - self.sent_s < URGENT_BELOW_S
        text = for_speech(sentence)
        # An urgent piece is played from its first part while the rest is made, if the
        # voice can (`PartedSpeech`); a voice that cannot says it whole.
        parts = (
            tts.speak(text)
            if urgent and isinstance(tts, PartedSpeech)
            else _whole(tts.synthesize(text, urgent=urgent))
        )
        resampler = StreamResampler(tts.sample_rate, self.voice.output_rate)
        step = self.voice.output_frame_bytes
        begun, carried = 0.0, b""
        async with aclosing(parts):
            async for part in parts:
                pcm = carried + resampler.process(part.pcm, last=part.last)
                # The player pads a short last frame with silence: only a sentence's end
                # may have one, not the seam between two parts of a word.
                whole = len(pcm) if part.last else len(pcm) - len(pcm) % step
                pcm, carried = pcm[:whole], pcm[whole:]
                self.synthesized_s += len(pcm) / 2 / self.voice.output_rate
                await queue.put(_Said(sentence, pcm, begun, part.done, part.last))
                begun = part.done

    async def _play(self, queue: asyncio.Queue[_Said | None]) -> None:
        voice = self.voice
        step = voice.output_frame_bytes
        started = voice.clock()
        while (item := await queue.get()) is not None:
            sentence, pcm = item.sentence, item.pcm
            if item.begun == 0.0:
                voice._emit(
                    ReplyTextEvent(session_id=voice.session_id, time=voice.clock(), text=sentence)
                )
                self.current = (sentence, 0.0)
            for offset in range(0, len(pcm), step):
                if not self._flowing.is_set():
                    await self._flowing.wait()
                    started = voice.clock() - self.sent_s  # on from here, not a burst
                if voice.realtime:
                    # Stay at most `lead_s` ahead of the caller's ear, so a barge-in
                    # leaves little queued audio to drop.
                    due = started + self.sent_s - voice.lead_s
                    delay = due - voice.clock()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    if self.sent_s == 0.0 or voice.clock() - started > self.sent_s + 0.5:
                        # Re-anchor after a gap (waiting on TTS).
                        started = voice.clock() - self.sent_s
                chunk = pcm[offset : offset + step]
                if len(chunk) < step:
                    chunk += b"\x00" * (step - len(chunk))
                frame = AudioFrame(chunk, voice.output_rate, voice.clock())
                if self.first_audio is None:
                    self.first_audio = voice.clock()
                if voice.recording is not None:
                    voice.recording.said(frame)
                heard = voice.to_vad_rate(chunk)
                self.sent_audio += heard
                voice._echo.played(heard, voice.clock())
                voice._emit(
                    ReplyAudioEvent(session_id=voice.session_id, time=frame.timestamp, frame=frame)
                )
                self.sent_s += voice.frame_ms / 1000
                share = min(1.0, (offset + step) / len(pcm))
                self.current = (sentence, item.begun + (item.done - item.begun) * share)
            if item.last:
                self.played.append(sentence)
                self.current = None


@dataclass(frozen=True, slots=True)
class _Said:
    """Some of a sentence's audio, at the session's output rate, for the player."""

    sentence: str
    pcm: bytes
    begun: float  # the share of the sentence's audio before this part
    done: float  # and by its end
    last: bool


async def _whole(pcm: Awaitable[bytes]) -> AsyncGenerator[SpeechPart, None]:
    yield SpeechPart(await pcm, done=1.0, last=True)


def _joined(said: list[SpeechEnded]) -> SpeechEnded:
    """Utterances heard as one, in order: the audio of each, the end of the last."""
    return replace(said[-1], audio=b"".join(ended.audio for ended in said))


class VoiceSession:
    def __init__(
        self,
        session_id: str,
        responder: Responder,
        *,
        stt: SpeechToText,
        tts: TextToSpeech,
        vad: VadConfig | None = None,
        turn: EndOfTurn | None = None,
        output_rate: int = 16000,
        frame_ms: int = 20,
        realtime: bool = True,
        lead_s: float = 0.1,
        gauge: SpeechGauge = silero_voiced,
        line_gauge: SpeechGauge | None = silero_latest,
    ) -> None:
        self.session_id = session_id
        # A second model's opinion of whether audio holds speech at all (`voice.voiced`);
        # `line_gauge`, of whether the line holds speech now, for the turn's quiet frames
        # (`TurnDetector`); None trusts webrtcvad alone.
        self.gauge = gauge
        self.responder = responder
        self._anticipator = responder if isinstance(responder, Anticipator) else None
        self.stt, self.tts = stt, tts
        self.output_rate = output_rate
        self.frame_ms = frame_ms
        # One reply frame's bytes: the player sends these, and parts are cut to them.
        self.output_frame_bytes = output_rate * frame_ms // 1000 * 2
        self.realtime = realtime
        self.lead_s = lead_s
        self.clock = time.monotonic
        self.events: asyncio.Queue[VoiceEvent] = asyncio.Queue()
        config = vad or VadConfig()
        self.turn = turn if config.early_ms else None
        self._stop_ms, self._done_ms = config.stop_ms, config.done_ms
        if self.turn is not None:
            # Each pause is judged (`_decide`): a turn that is over ends at once or at
            # the usual stop; silence alone ends the others only after the longer hold.
            # A pause held as mid-sentence is judged again at the usual stop (`_recheck`).
            config = replace(
                config, stop_ms=max(config.stop_ms, config.hold_ms), recheck_ms=config.stop_ms
            )
        self._detector = TurnDetector(config, VAD_RATE, gauge=line_gauge)
        self._echo = EchoGate(VAD_RATE, lead_s=lead_s)
        self._step = self._detector.sample_rate * config.frame_ms // 1000 * 2
        self._resamplers: dict[int, StreamResampler] = {}
        self._arrivals: deque[tuple[float, float]] = deque(maxlen=500)  # (stream end, wall)
        self._stream_s = 0.0
        self._turn: _Turn | None = None
        self._speculation: asyncio.Task[Transcript] | None = None
        self._deciding: asyncio.Task[None] | None = None
        self._pauses = 0
        # The pause judged mid-sentence, and its words: judged again at the usual stop.
        self._held_pause: tuple[int, str] | None = None
        # The reply held while the caller speaks over it, and when they started.
        self._held: _Turn | None = None
        self._held_at = 0.0
        self._onset_held = False  # held at the first voice, not yet confirmed speech
        self._onset_seen: float | None = None  # the start of the voice last held for
        self._onset_quiet_until = 0.0  # stream time before which no hold comes at onset
        self._echoed: _Turn | None = None  # a reply heard back: held only once confirmed
        self._settling: asyncio.Task[None] | None = None
        # A reply was cut for what the caller went on to say: that is answered, noise or
        # not. Dropped, the words the cut reply was for would go unanswered.
        self._answer_next = False
        self._out_resampler: StreamResampler | None = None
        self._anticipations: set[asyncio.Task[None]] = set()
        self._closed = False
        # While a barge-in cuts the reply: the utterances that ended meanwhile.
        self._cutting: list[SpeechEnded] | None = None
        # Set by whoever keeps the call's audio (the console's recordings); None: nothing kept.
        self.recording: Recording | None = None

    # --- input ------------------------------------------------------------------------------

    async def push(self, frame: AudioFrame, *, at: float | None = None) -> None:
        """Feed caller audio of any supported rate; turns start from here. `at` is when
        its last sample came in, on `clock`, if that was before now: a phone's packets
        wait in the call's queue while the loop is busy, and a turn's latency runs from
        when the caller was heard, not from when the loop got round to it."""
        if self._closed:
            return
        resampler = self._resamplers.setdefault(
            frame.sample_rate, StreamResampler(frame.sample_rate, VAD_RATE)
        )
        pcm = resampler.process(frame.pcm)
        if self.recording is not None and pcm:
            # The recording's rate is the VAD's: it keeps the audio already resampled.
            self.recording.heard(AudioFrame(pcm, VAD_RATE))
        self._stream_s += len(pcm) / 2 / VAD_RATE
        self._arrivals.append((self._stream_s, self.clock() if at is None else at))
        # A frame at a time: a turn judged over ends at the frame it was judged at, and
        # speech over a reply becomes a barge-in the moment it has gone on too long.
        for offset in range(0, len(pcm), self._step):
            chunk = pcm[offset : offset + self._step]
            self._echo.heard(chunk)
            await self._handle(self._detector.feed(chunk, echo=self._is_echo))
            await self._watch_overlap()

    def _is_echo(self) -> bool:
        return self._echo.is_echo(self.clock())

    async def _watch_overlap(self) -> None:
        """Voice over a reply, frame by frame: the reply is held at its first voice, goes
        on if that voice comes to nothing, and is cut once the speech goes on too long."""
        detector = self._detector
        if self._held is not None:
            if detector.in_speech:
                if detector.last_voice - self._held_at >= ASIDE_MAX_S:
                    await self._barge_in("long")
            elif self._onset_held and (
                detector.heard_s == 0.0 or detector.since_voice_s >= ONSET_RELEASE_S
            ):
                self._resume("noise", "")
            return
        turn, started = self._turn, detector.started_at
        if (
            turn is not None
            and turn.speaking
            and started is not None
            and not detector.in_speech
            and detector.heard_s >= ONSET_HOLD_S
            and started != self._onset_seen
            and started >= self._onset_quiet_until
            and turn is not self._echoed
        ):
            self._onset_seen = started
            self._onset_held = True
            self._hold(turn, started)

    async def _decide(self, paused: SpeechPaused, speculation: asyncio.Task[Transcript]) -> None:
        """Is the caller who paused done? The model and the pause's transcript decide
        (voice/turn.py) whether the turn ends now, at the usual stop, or after the hold."""
        assert self.turn is not None
        pause = self._pauses
        verdict: TurnVerdict | None = None
        try:
            verdict = await self.turn.judge(paused.audio)
        except Exception as error:
            log.warning("turn_model_failed session_id=%s error=%r", self.session_id, error)
        await asyncio.wait({speculation})
        if speculation.cancelled():
            return  # the caller went on
        failed = speculation.exception()
        heard = text = "" if failed is not None else speculation.result().text
        end = when_over(verdict, text)
        if end is not TurnEnd.HOLD and text:
            text = await self._without_added_words(paused.audio, text)
            end = when_over(verdict, text)
        log.info(
            "turn_judged session_id=%s end=%s p=%s ms=%s",
            self.session_id,
            end.value,
            "none" if verdict is None else f"{verdict.probability:.2f}",
            "none" if verdict is None else f"{verdict.seconds * 1000:.0f}",
        )
        self._emit(
            TurnJudgedEvent(
                session_id=self.session_id,
                time=self.clock(),
                end=end,
                probability=None if verdict is None else verdict.probability,
                words=text,
            )
        )
        if self._closed or not self._detector.paused or pause != self._pauses:
            return  # the caller went on, or the turn has ended already
        if end is TurnEnd.HOLD:
            self._held_pause = (pause, text)
        else:
            # The turn's words if the caller stays silent (`_start_turn`): read now, the
            # turn finds the reading done instead of waiting on it after the stop silence.
            self._anticipate(heard)
            stop_ms = self._done_ms if end is TurnEnd.NOW else self._stop_ms
            await self._handle(self._detector.stop_after(stop_ms))

    async def _recheck(self, still: SpeechStillPaused) -> None:
        """A pause held as mid-sentence, judged again at the usual stop (`when_over_again`):
        Smart Turn hears the silence too, and a finished question it doubted 150 ms into
        the pause it may not at 500 ms."""
        assert self.turn is not None and self._held_pause is not None
        pause, text = self._held_pause
        try:
            verdict = await self.turn.judge(still.audio)
        except Exception as error:
            log.warning("turn_model_failed session_id=%s error=%r", self.session_id, error)
            return
        end = when_over_again(verdict, text)
        if end is TurnEnd.NOW:
            end = when_over_again(verdict, await self._without_added_words(still.audio, text))
        log.info(
            "turn_rejudged session_id=%s end=%s p=%.2f ms=%.0f",
            self.session_id,
            end.value,
            verdict.probability,
            verdict.seconds * 1000,
        )
        self._emit(
            TurnJudgedEvent(
                session_id=self.session_id,
                time=self.clock(),
                end=end,
                probability=verdict.probability,
                words=text,
                again=True,
            )
        )
        if self._closed or not self._detector.paused or pause != self._pauses:
            return
        if end is TurnEnd.NOW:
            await self._handle(self._detector.stop_after(self._done_ms))

    async def end_of_speech(self) -> None:
        """The caller says they are done (released push-to-talk): answer without waiting
        for the stop silence."""
        if not self._closed:
            await self._handle(self._detector.flush())
            await self._watch_overlap()  # a blip that held the reply is gone with the flush

    async def _handle(self, events: list[VadEvent]) -> None:
        for event in events:
            if isinstance(event, SpeechStarted):
                turn = self._turn
                if self._held is not None:
                    # Held at its first voice, or still holding and the caller starts
                    # again: an aside, timed from its own start.
                    self._held_at = event.at
                    self._onset_held = False
                elif turn is not None and turn.speaking:
                    # Stop the reply now, decide what it was when the caller is heard.
                    self._hold(turn, event.at)
                else:
                    await self._interrupt()
                self._emit(SpeechStartedEvent(session_id=self.session_id, time=self.clock()))
            elif isinstance(event, SpeechPaused):
                self._pauses += 1
                if self._held is not None:
                    # Speech over a reply is settled at the usual stop, not held for more,
                    # and read once, by `_settle`, without the catalogue's bias.
                    await self._handle(self._detector.stop_after(self._stop_ms))
                    continue
                speculation = self._speculate(event.audio)
                if self.turn is not None and speculation is not None:
                    if self.realtime:
                        self._deciding = asyncio.get_running_loop().create_task(
                            self._decide(event, speculation)
                        )
                    else:
                        # Files and tests: decided in stream time, as if instantly.
                        await self._decide(event, speculation)
            elif isinstance(event, SpeechStillPaused):
                held = self._held_pause
                if self.turn is None or held is None or held[0] != self._pauses:
                    continue
                if self.realtime:
                    self._deciding = asyncio.get_running_loop().create_task(self._recheck(event))
                else:
                    await self._recheck(event)
            elif isinstance(event, SpeechResumed):
                self._speculate(None)
            elif isinstance(event, SpeechEnded):
                self._emit(
                    SpeechEndedEvent(
                        session_id=self.session_id, time=self.clock(), duration=event.duration
                    )
                )
                if self._held is None:
                    self._start_turn(event)
                elif self.realtime:
                    if self._settling is not None and not self._settling.done():
                        # Still reading an earlier aside: the latest words decide.
                        self._settling.cancel()
                    self._settling = asyncio.get_running_loop().create_task(self._settle(event))
                else:
                    await self._settle(event)

    async def _settle(self, ended: SpeechEnded) -> None:
        """The caller stopped speaking over a held reply: an aside resumes it, anything
        else interrupts it and is the next turn."""
        held = self._held
        if held is None:
            return
        reading = await read_aside(
            self.stt,
            ended.audio,
            held.reply_text(),
            bytes(held.sent_audio),
            # Cut meanwhile (a long barge-in, an operator's words, the call's end), or
            # the caller is speaking again: the end of that decides.
            still_held=lambda: self._held is held and not self._detector.in_speech,
            session_id=self.session_id,
            gauge=self.gauge,
        )
        if reading is None:
            return
        heard, reason = reading.heard, reading.reason
        if reason is None:
            await self._barge_in("words", ended, heard)
            return
        self._resume(reason, heard)

    def _hold(self, turn: _Turn, at: float) -> None:
        turn.hold()
        self._held, self._held_at = turn, at
        self._emit(ReplyHeldEvent(session_id=self.session_id, time=self.clock()))

    def _resume(self, reason: str, heard: str) -> None:
        """What was said over the held reply was not for it: the reply goes on."""
        held, self._held, self._onset_held = self._held, None, False
        if reason in ("noise", "echo"):
            self._onset_quiet_until = self._stream_s + ONSET_QUIET_S
        if reason == "echo":
            self._echoed = held
        # Counts, not words: logs are kept outside the retention and erasure of callers'
        # transcripts (the words go in the event, which the journal stores redacted).
        log.info(
            "aside session_id=%s reason=%s words=%d", self.session_id, reason, len(heard.split())
        )
        if held is not None and held is self._turn and not held.task.done():
            held.release()
            self._emit(
                ReplyResumedEvent(
                    session_id=self.session_id,
                    time=self.clock(),
                    heard=heard,
                    reason=reason,
                )
            )

    async def _barge_in(self, why: str, ended: SpeechEnded | None = None, heard: str = "") -> None:
        """Speech over the held reply was meant for it: cut the reply; the speech, ended
        or still going, is the next turn."""
        self._held, self._onset_held = None, False
        log.info(
            "barge_in_confirmed session_id=%s why=%s words=%d",
            self.session_id,
            why,
            len(heard.split()),
        )
        if self._cutting is not None:
            # Another barge-in is still cutting its reply; what played meanwhile (a key's
            # words) stops, and these words are heard with that barge-in's.
            await self._interrupt()
            if ended is not None:
                if self._cutting is not None:
                    self._cutting.append(ended)
                else:
                    self._start_turn(ended, own=True)
            return
        # Words the caller finishes while the reply is being cut (the history's revision
        # may wait on the database) wait for it: started at once, they would be a second
        # turn answering beside the barge-in's, and its reply would speak over this one.
        cutting: list[SpeechEnded] = []
        self._cutting = cutting
        try:
            await self._interrupt()
        finally:
            self._cutting = None
        said = ([ended] if ended is not None else []) + cutting
        if len(said) == 1 and ended is None:
            self._start_turn(said[0])
        elif said:
            # Heard as every turn is, biased towards the catalogue; from its own audio,
            # never from a speculation another utterance started meanwhile. Several
            # utterances are heard as one turn, in the order they were said.
            self._start_turn(said[0] if len(said) == 1 else _joined(said), own=True)

    async def interrupt(self) -> None:
        """Stop the reply now (the caller pressed talk while it played): a barge-in."""
        await self._interrupt()

    async def say(self, text: str) -> None:
        """Speak prepared text (a greeting, an operator's words) without the responder."""
        await self._interrupt()
        self._answer_next = False  # these words replace the reply
        self._track(_Turn(self, text=text))

    # --- turns --------------------------------------------------------------------------------

    def _speculate(self, audio: bytes | None) -> asyncio.Task[Transcript] | None:
        """Decode the utterance so far while the caller pauses; drop it if they go on."""
        if self._speculation is not None:
            self._speculation.cancel()
        for task in list(self._anticipations):
            task.cancel()  # the words handed ahead were not the turn's after all
        if self._deciding is not None:
            self._deciding.cancel()
            self._deciding = None
        self._speculation = (
            None
            if audio is None
            else asyncio.get_running_loop().create_task(self.stt.transcribe(audio))
        )
        return self._speculation

    def _anticipate(self, text: str) -> None:
        if self._anticipator is None or self._closed or not text:
            return
        task = asyncio.get_running_loop().create_task(self._anticipator.anticipate(text))
        self._anticipations.add(task)
        task.add_done_callback(self._anticipated)

    def _anticipated(self, task: asyncio.Task[None]) -> None:
        self._anticipations.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning(
                "anticipate_failed session_id=%s error=%r", self.session_id, task.exception()
            )

    async def _without_added_words(self, audio: bytes, text: str) -> str:
        """The pause's transcript without the words Whisper added to finish the
        sentence (`voice.turn.spoken`); as it was if that cannot be told."""
        try:
            words = await self.stt.words(audio, text)
        except Exception as error:
            log.warning("pause_words_unplaced session_id=%s error=%r", self.session_id, error)
            return text
        return spoken(words, len(audio) / 2 / VAD_RATE) if words else text

    def _start_turn(self, ended: SpeechEnded, *, own: bool = False) -> None:
        if self._cutting is not None:
            self._cutting.append(ended)  # after the barge-in being cut (`_barge_in`)
            return
        # Only voice withdraws a pause's decode, and the audio after it is silence, so
        # the speculative transcript is the utterance's transcript.
        speculation = None
        if not own:
            speculation, self._speculation = self._speculation, None
        # A turn of its own audio followed a barge-in its reading already took for words.
        judge_noise, self._answer_next = not (own or self._answer_next), False
        if self._deciding is not None and self._deciding is not asyncio.current_task():
            self._deciding.cancel()  # ended by the hold or a push-to-talk release
        self._deciding = None
        self._track(
            _Turn(
                self,
                audio=ended.audio,
                end_wall=self._wall_at(ended.last_voice),
                speech_s=ended.duration,
                transcript=speculation,
                judge_noise=judge_noise,
            )
        )

    def _track(self, turn: _Turn) -> None:
        replaced = self._turn
        if replaced is not None and replaced is not turn and not replaced.task.done():
            # Never two turns at once: both would play into one line. Only a race gets
            # here (words spoken, or a key's words said, while a barge-in was cut).
            log.warning("turn_replaced session_id=%s", self.session_id)
            replaced.cut = True
            replaced.task.cancel()
        self._turn = turn
        turn.task.add_done_callback(lambda task: self._finished(turn, task))

    def _finished(self, turn: _Turn, task: asyncio.Task[None]) -> None:
        if self._turn is turn:
            self._turn = None
        if self._echoed is turn:
            self._echoed = None
        if task.cancelled():
            return
        error = task.exception()
        if error is not None and turn.cut:
            # Failed while being cut: the caller is being heard, and nothing is owed them.
            log.warning("turn_failed_when_cut session_id=%s error=%r", self.session_id, error)
            return
        if error is not None:
            log.error("turn_failed session_id=%s error=%r", self.session_id, error)
            # The caller's page shows this: what failed inside stays in the log.
            self._emit(
                ErrorEvent(session_id=self.session_id, time=self.clock(), message=TURN_FAILED)
            )
            if turn.text is None and self._turn is None and not self._closed:
                # A caller left in silence would wait for a reply that is not coming. Said
                # only for the caller's own turn: if this fails too, nothing follows it.
                self._track(_Turn(self, text=TURN_FAILED))
            return
        if turn.said is not None or turn.text is not None:
            self._emit(
                ReplyDoneEvent(session_id=self.session_id, time=self.clock(), text=turn.spoken())
            )
        self._report(turn, interrupted=False)

    async def _interrupt(self) -> None:
        self._held, self._onset_held = None, False
        turn = self._turn
        if turn is None or turn.task.done():
            return
        self._turn = None
        self._answer_next = True
        turn.cut = True
        turn.task.cancel()
        # A turn that fails as it is cut (closing its stream) is cut all the same: logged
        # by `_finished`.
        with suppress(asyncio.CancelledError, Exception):
            await turn.task
        spoken = turn.spoken()
        if self.recording is not None:
            self.recording.interrupted()
        self._emit(InterruptedEvent(session_id=self.session_id, time=self.clock(), spoken=spoken))
        log.info("barge_in session_id=%s spoken_chars=%d", self.session_id, len(spoken))
        if turn.replying:
            try:
                await self.responder.interrupted(spoken)
            except Exception as error:
                # The history keeps the whole reply; the call goes on, and the caller's
                # next words are still heard.
                log.error("interrupt_unrecorded session_id=%s error=%r", self.session_id, error)
        self._report(turn, interrupted=True)

    def _report(self, turn: _Turn, *, interrupted: bool) -> None:
        if turn.end_wall is None:
            return

        def since(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None else max(0.0, b - a)

        metrics = TurnMetrics(
            speech_s=turn.speech_s,
            stt_s=since(turn.end_wall, turn.transcribed),
            first_token_s=since(turn.transcribed, turn.first_token),
            first_audio_s=since(turn.first_token, turn.first_audio),
            voice_to_voice_s=since(turn.end_wall, turn.first_audio),
            interrupted=interrupted,
        )
        self._emit(
            TurnMetricsEvent(
                session_id=self.session_id,
                time=self.clock(),
                transcript=turn.said or "",
                metrics=metrics,
            )
        )

    def to_vad_rate(self, pcm: bytes) -> bytes:
        """Reply audio at the VAD's rate, continuous across frames."""
        if self.output_rate == VAD_RATE:
            return pcm
        if self._out_resampler is None:
            self._out_resampler = StreamResampler(self.output_rate, VAD_RATE)
        return self._out_resampler.process(pcm)

    def _wall_at(self, stream_time: float) -> float:
        """When the sample at `stream_time` was heard: the arrival of the chunk that held
        it, less the audio after it in that chunk. A phone line's quiet comes as one
        chunk of silence up to 0.3 s long (telephony/quiet.py), pushed when it is over;
        its first sample was not heard then, and a voice that ends where it begins must
        not be dated to its end."""
        for end, wall in self._arrivals:
            if end >= stream_time:
                return wall - (end - stream_time)
        return self.clock()

    def _emit(self, event: VoiceEvent) -> None:
        self.events.put_nowait(event)

    @property
    def busy(self) -> bool:
        """A turn is being transcribed, answered or played."""
        return self._turn is not None and not self._turn.task.done()

    async def close(self) -> None:
        self._closed = True
        if self._settling is not None and not self._settling.done():
            # Let it finish: cut inside `_interrupt`, the history would keep words the
            # caller never heard. Bounded: it waits on one decode at most.
            await asyncio.wait({self._settling}, timeout=10)
            self._settling.cancel()
        self._speculate(None)
        await self._interrupt()
