"""One phone call: G.711 over RTP in and out of one VoiceSession.

pyVoIP's threads only hand packets over (`audio`, `dtmf`, `ended`); everything else
runs on the event loop. Inbound audio is decoded to 8 kHz PCM16 and pushed to the
voice session; its reply frames are encoded in the call's codec and queued for the
paced sender, and a barge-in flushes that queue. The call around them (the console's
record, the greeting, the shutdown) is `voice.call.run_call`'s, as a browser call's is.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass

from pyVoIP.RTP import PayloadType

from telephony.adapter import PCMA, AdaptedCall
from telephony.inbound import Hold, Inbound, Key, LineEnded
from telephony.quiet import LineQuiet, is_loud
from telephony.wire import RtpPacket
from voice.call import CallLog, Finish, run_call
from voice.codecs import alaw_to_pcm16, pcm16_to_alaw, pcm16_to_ulaw, ulaw_to_pcm16
from voice.events import (
    ErrorEvent,
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyHeldEvent,
    TranscriptEvent,
    TurnMetricsEvent,
    VoiceEvent,
)
from voice.frames import AudioFrame
from voice.session import TURN_FAILED, Responder, VoiceSession
from voice.speech import SpeechToText, TextToSpeech
from voice.turn import EndOfTurn

log = logging.getLogger("telephony.call")

RATE = 8000
# Inbound packets waiting for the event loop: 5 s. Past that the loop is badly behind,
# and the oldest audio is the least useful (keys and holds are never dropped).
MAX_INBOUND = 250
# How often a quiet line is looked at: `LineQuiet` says whether its quiet is silence yet.
TICK_S = 0.1
HOLD_TIMEOUT_S = 600.0  # held this long without a resume: hung up


@dataclass(frozen=True, slots=True)
class _Packet:
    """A packet's audio, stamped on pyVoIP's thread as it came off the socket: the event
    loop may read it late, and the line's quiet is the phone's, not the loop's."""

    rtp: RtpPacket
    alaw: bool
    at: float


@dataclass(frozen=True)
class CallHooks:
    """What a call needs from the wiring: the caller's swarm session, seen as voice.

    A `voice.call.CallPort`, and the operator key besides."""

    responder: Callable[[str], Responder]
    # Called on answer: commits the greeting to the caller's history, returns its words.
    greet: Callable[[str], Awaitable[str]]
    # The caller pressed 0: records the request for a person, returns what to say.
    operator: Callable[[str], Awaitable[str]]
    record_turn: Callable[[str, TurnMetricsEvent], Awaitable[None]]
    # On answer, for the operators' console: takes the caller's client id and the call's
    # voice session, returns what to call with who ended it when the call is over.
    started: Callable[[str, VoiceSession], Awaitable[Finish]]


@dataclass(frozen=True)
class CallSummary:
    """What one finished call did: for the log, the tests and the load bench."""

    call_id: str
    client_id: str
    codec: str
    ended_by: str  # caller, gateway (RTP timeout), shutdown
    duration_s: float
    packets_in: int
    packets_out: int
    dropped_in: int
    bad_packets: int
    foreign_packets: int  # from another source than the caller's, not heard
    underruns: int
    # Quiet on the line filled in as silence that the packets then showed was held up:
    # how often, and how much. A sentence cut by it may have been misheard.
    stalls: int
    stalled_s: float
    silence_suppressed: bool  # the phone was seen to send nothing while its caller was quiet
    holds: int  # times the caller put the call on hold
    dtmf: tuple[str, ...]
    transcripts: tuple[str, ...]
    replies: tuple[str, ...]


_NUMBER = re.compile(r"^\+?[0-9]{3,20}$")
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


def caller_client_id(number: str | None, call_id: str) -> str:
    """The swarm session a caller lands in: their number, so history and orders follow it.

    A withheld or odd user part gets a per-call id, never a session shared with strangers.
    """
    user = (number or "").strip()
    if _NUMBER.match(user):
        return user
    cleaned = _SAFE.sub("", user)[:40]
    if cleaned and cleaned.lower() not in {"anonymous", "unknown", "restricted", "private"}:
        return f"sip-{cleaned}"
    return "sip-anon-" + hashlib.sha256(call_id.encode()).hexdigest()[:12]


class PhoneCall:
    def __init__(
        self,
        call: AdaptedCall,
        client_id: str,
        hooks: CallHooks,
        *,
        stt: SpeechToText,
        tts: TextToSpeech,
        rtp_timeout: float,
        turn: EndOfTurn | None = None,
    ) -> None:
        self.call = call
        self.client_id = client_id
        self.hooks = hooks
        self.media = call.media
        self.codec = self.media.codec
        self._encode = pcm16_to_alaw if self.codec is PCMA else pcm16_to_ulaw
        self._rtp_timeout = rtp_timeout
        self._loop = asyncio.get_running_loop()
        self._inbound: Inbound[_Packet] = Inbound(MAX_INBOUND)
        self._quiet = LineQuiet(RATE, time.monotonic())
        self._ended_by: str | None = None
        self._dtmf: list[str] = []
        self._transcripts: list[str] = []
        self._replies: list[str] = []
        self._last_reply = ""
        self._held = False
        self._holds = 0
        self._line_ended = 0.0  # when our side of the line was done: set on hang-up
        self.voice = VoiceSession(
            client_id,
            hooks.responder(client_id),
            stt=stt,
            tts=tts,
            turn=turn,
            output_rate=RATE,
            # A little more lead than the browser's: a flush drops it on barge-in anyway.
            lead_s=0.2,
        )
        self.media.sink = self
        call.on_end = self.ended
        call.on_hold = self.held

    # --- pyVoIP's threads ------------------------------------------------------------------

    def audio(self, packet: RtpPacket, codec: PayloadType) -> None:
        self._loop.call_soon_threadsafe(
            self._inbound.put, _Packet(packet, codec is PCMA, time.monotonic())
        )

    def dtmf(self, key: str) -> None:
        self._loop.call_soon_threadsafe(self._inbound.put, Key(key))

    def ended(self, by: str) -> None:
        self._loop.call_soon_threadsafe(self._end, by)

    def held(self, on: bool) -> None:
        self._loop.call_soon_threadsafe(self._inbound.put, Hold(on))

    # --- the event loop -------------------------------------------------------------------

    def _end(self, by: str) -> None:
        if self._ended_by is None:
            self._ended_by = by
            self._inbound.put(LineEnded())

    def hang_up(self, reason: str) -> None:
        """End the call from our side (shutdown): the BYE goes out as the loop winds down."""
        self._end(reason)

    async def run(self) -> CallSummary:
        started = time.monotonic()
        log.info(
            "call_started call_id=%s client_id=%s codec=%s",
            self.call.call_id,
            self.client_id,
            self.codec.name,
        )
        self.call.answer()
        ended_by = await run_call(
            self.voice,
            self.hooks,
            receive=self._receive,
            deliver=self._deliver,
            ended_by=lambda: self._ended_by or "gateway",
            hang_up=self._hang_up_line,
            log=CallLog(log, "call", f"call_id={self.call.call_id}"),
        )
        summary = CallSummary(
            call_id=self.call.call_id,
            client_id=self.client_id,
            codec=self.codec.name,
            ended_by=ended_by,
            duration_s=self._line_ended - started,
            packets_in=self.media.packets_in,
            packets_out=self.media.pmout.packets,
            dropped_in=self._inbound.dropped,
            bad_packets=self.media.bad_packets,
            foreign_packets=self.media.foreign_packets,
            underruns=self.media.pmout.underruns,
            stalls=self._quiet.stalls,
            stalled_s=self._quiet.stalled_s,
            silence_suppressed=self._quiet.suppresses,
            holds=self._holds,
            dtmf=tuple(self._dtmf),
            transcripts=tuple(self._transcripts),
            replies=tuple(self._replies),
        )
        log.info(
            "call_ended call_id=%s client_id=%s by=%s duration_s=%.1f underruns=%d "
            "bad_packets=%d foreign_packets=%d stalls=%d",
            summary.call_id,
            summary.client_id,
            summary.ended_by,
            summary.duration_s,
            summary.underruns,
            summary.bad_packets,
            summary.foreign_packets,
            summary.stalls,
        )
        return summary

    def _hang_up_line(self, ended_by: str) -> None:
        # The call lasted until here; closing the console's record comes after it.
        self._line_ended = time.monotonic()
        if ended_by != "caller":
            with suppress(Exception):
                self.call.hangup()

    async def _receive(self) -> None:
        quiet = self._quiet
        seen = time.monotonic()  # the last packet of any kind, keys included: the line lives
        while True:
            try:
                # A timeout context, not wait_for: no task per packet on this hot path.
                async with asyncio.timeout(TICK_S):
                    item = await self._inbound.get()
            except TimeoutError:
                if not self._inbound.empty():
                    continue  # the loop was late, not the phone: its packets are here
                now = time.monotonic()
                if self._held:
                    # On hold no media is expected, and none is silence; but a caller
                    # who holds and vanishes must not keep a line for ever.
                    if now - seen >= HOLD_TIMEOUT_S:
                        log.warning("call_hold_timeout call_id=%s", self.call.call_id)
                        self._end("gateway")
                    continue
                if now - seen >= self._rtp_timeout:
                    log.warning(
                        "call_rtp_timeout call_id=%s seconds=%.0f", self.call.call_id, now - seen
                    )
                    self._end("gateway")
                elif samples := quiet.due(now):
                    # Phones with silence suppression (and sipp between files) send
                    # nothing while the caller is quiet: it is silence, and ends the turn.
                    await self.voice.push(AudioFrame(b"\x00\x00" * samples, RATE), at=now)
                continue
            if isinstance(item, LineEnded):
                return
            if isinstance(item, _Packet):
                seen = item.at
                rtp = item.rtp
                pcm = (alaw_to_pcm16 if item.alaw else ulaw_to_pcm16)(rtp.payload)
                stalled = quiet.packet(
                    item.at,
                    ssrc=rtp.ssrc,
                    sequence=rtp.sequence,
                    timestamp=rtp.timestamp,
                    samples=len(rtp.payload),
                    loud=is_loud(pcm),
                )
                # Heard as a pause already; counted, for a call that read badly. Logged
                # at powers of two: a line that keeps stalling must not flood the log.
                if stalled and quiet.stalls & (quiet.stalls - 1) == 0:
                    log.info(
                        "rtp_stalled call_id=%s filled_s=%.2f count=%d",
                        self.call.call_id,
                        stalled,
                        quiet.stalls,
                    )
                await self.voice.push(AudioFrame(pcm, RATE), at=item.at)
                continue
            seen = time.monotonic()
            if isinstance(item, Hold):
                self._held = item.on
                self._holds += self._held
                quiet.restart(seen)
                # The reply waits in the playback queue, unsent, and goes on at resume.
                log.info(
                    "call_%s call_id=%s", "hold" if self._held else "resumed", self.call.call_id
                )
            else:
                try:
                    await self._key(item.key)
                except Exception:
                    log.exception("call_dtmf_failed call_id=%s key=%s", self.call.call_id, item.key)

    async def _key(self, key: str) -> None:
        self._dtmf.append(key)
        log.info("call_dtmf call_id=%s key=%s", self.call.call_id, key)
        if key == "#" and self._last_reply:
            await self.voice.say(self._last_reply)
        elif key == "0":
            # Cut the reply first: the history keeps what was heard of it, and the words
            # below come after it, not inside the revision.
            await self.voice.interrupt()
            await self.voice.say(await self.hooks.operator(self.client_id))

    async def _deliver(self, event: VoiceEvent) -> None:
        playback = self.media.pmout
        if isinstance(event, ReplyAudioEvent):
            playback.write(self._encode(event.frame.pcm))
        elif isinstance(event, InterruptedEvent):
            dropped = playback.flush()
            log.info("call_barge_in call_id=%s dropped_s=%.2f", self.call.call_id, dropped / RATE)
        elif isinstance(event, ReplyHeldEvent):
            playback.finish()  # the gap while the caller is heard is meant
        elif isinstance(event, ReplyDoneEvent):
            playback.finish()
            if event.text and event.text != TURN_FAILED:  # `#` repeats a reply, not that
                self._last_reply = event.text
                self._replies.append(event.text)
        elif isinstance(event, TranscriptEvent):
            self._transcripts.append(event.text)
        elif isinstance(event, ErrorEvent):
            log.error("call_turn_failed call_id=%s error=%s", self.call.call_id, event.message)
