"""pyVoIP 1.6.8, adapted: its known defects fixed by subclassing, in this one module.

Each fix, and the defect it answers (docs/telephony.md has the longer story):

- **PCMA sent as μ-law.** `RTPClient.encode_packet` called `encode_pcmu` for PCMA.
  `G711Client` sends the payload it is given, already encoded in the negotiated codec.
- **8-bit audio.** pyVoIP decoded G.711 to 8-bit unsigned linear, which costs STT and
  adds hiss. `G711Client` hands raw G.711 payloads to a `MediaSink`; the call decodes
  them to PCM16 (`voice.codecs`).
- **No playback flush.** Outbound audio is a `Playback` buffer with `flush()`, for
  barge-in, and it counts underruns. Packets leave on a deadline clock, not sleep-after-send.
- **`start()` blocked until REGISTER succeeded.** `AdaptedSIPClient.start()` registers in
  a background thread, or not at all in no-registration mode (behind a trusted proxy).
- **Responses went to the configured server.** `DialogSocket` records where each
  Call-ID's last message came from and sends that dialog's responses and requests back
  there (symmetric response, RFC 3581), so a direct caller or any proxy gets them.
- **`stop()` waited 30 s** for a de-REGISTER answer: it now waits `deregister_timeout`.
- **`audioop` is gone in Python 3.13:** pyproject.toml depends on `audioop-lts` there.

And what a public endpoint needs beyond that: a malformed RTP packet is counted and
dropped (it killed the receive thread), a SIP request pyVoIP cannot parse gets a 400
(it got nothing), an offer without G.711 gets 488, calls over the limit get 486, and the
call starts at once instead of a fixed 1 s after the 180. The bytes-level parts are in
`telephony.wire`; this module holds everything that touches pyVoIP, which is why it is
longer than most.
"""

from __future__ import annotations

import logging
import random
import re
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

# First: pyVoIP.SIP and pyVoIP.VoIP import each other, and only this order resolves.
import pyVoIP.VoIP  # noqa: F401
from pyVoIP import RTP, SIP
from pyVoIP.util import acquired_lock_and_unblocked_socket
from pyVoIP.VoIP import CallState, PhoneStatus, VoIPCall, VoIPPhone

from telephony import sipmsg
from telephony.wire import (
    RTP_HEADER,
    SAMPLES_PER_PACKET,
    BadPacket,
    RtpPacket,
    call_id_of,
    dtmf_key,
    parse_rtp,
    response_to,
)

log = logging.getLogger("telephony.adapter")

PCMU, PCMA, EVENT = RTP.PayloadType.PCMU, RTP.PayloadType.PCMA, RTP.PayloadType.EVENT
AUDIO_CODECS = (PCMU, PCMA)
SILENCE = {PCMU: b"\xff", PCMA: b"\xd5"}  # G.711 zero
LATCH_QUIET_S = 1.0
# A key's start packet again within this long is the same press. Longer apart, it is
# pressed again by a peer that stamps every press alike (sipp replaying one recording).
KEY_AGAIN_S = 0.5
# The answer's direction to each offered one (RFC 3264 6.1).
ANSWER_DIRECTION = {
    "sendrecv": RTP.TransmitType.SENDRECV,
    "sendonly": RTP.TransmitType.RECVONLY,
    "recvonly": RTP.TransmitType.SENDONLY,
    "inactive": RTP.TransmitType.INACTIVE,
}


class MediaSink(Protocol):
    """Where a call's media goes. Called on pyVoIP's receive thread: hand off, don't work."""

    def audio(self, packet: RtpPacket, codec: RTP.PayloadType) -> None: ...

    def dtmf(self, key: str) -> None: ...


class _Discard:
    def audio(self, packet: RtpPacket, codec: RTP.PayloadType) -> None:
        pass

    def dtmf(self, key: str) -> None:
        pass


class Playback:
    """A call's outbound G.711: written by the event loop, read every 20 ms by the sender.

    An underrun is a packet padded with silence while a reply was still being written:
    a gap the caller hears. Silence between replies is not one.
    """

    def __init__(self, silence: bytes) -> None:
        self._silence = silence
        self._lock = threading.Lock()
        self._buffer = bytearray()
        self._replying = False
        self.underruns = 0
        self.packets = 0

    def write(self, data: bytes) -> None:
        with self._lock:
            self._buffer += data
            self._replying = True

    def finish(self) -> None:
        """The reply is fully written: running dry after this is the end, not a gap."""
        with self._lock:
            self._replying = False

    def flush(self) -> int:
        """Drop everything queued (barge-in); returns the bytes dropped."""
        with self._lock:
            dropped = len(self._buffer)
            self._buffer.clear()
            self._replying = False
            return dropped

    def read(self, size: int = SAMPLES_PER_PACKET) -> bytes:
        with self._lock:
            chunk = bytes(self._buffer[:size])
            del self._buffer[:size]
            self.packets += 1
            if len(chunk) < size:
                if self._replying:
                    self.underruns += 1
                chunk += self._silence * (size - len(chunk))
            return chunk


class G711Client(RTP.RTPClient):
    """One RTP stream that passes raw G.711 both ways."""

    # Replaces pyVoIP's RTPPacketManager rather than extending it: both base methods
    # that use pmout (write, trans) are overridden here.
    pmout: Playback  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        codecs = [c for c in self.assoc.values() if c in AUDIO_CODECS]
        if not codecs:
            raise BadOffer("the offer has no PCMU or PCMA")
        self.preference = codecs[0]  # the caller's first choice, as pyVoIP picks
        self.pmout = Playback(SILENCE[self.preference])
        self.sink: MediaSink = _Discard()
        self.held = False  # the caller put us on hold: nothing is sent, nothing heard
        self.latched: tuple[str, int] | None = None
        self._heard_at = 0.0  # when the current media source last sent a packet
        self.bad_packets = 0
        self.foreign_packets = 0  # from another source than the call's, dropped
        self._trusted: set[tuple[str, int]] = set()  # the call's first media source
        self.packets_in = 0
        self._key_started: tuple[int, int, float] | None = None  # ssrc, timestamp, when
        self.send_failures = 0

    @property
    def codec(self) -> RTP.PayloadType:
        return self.preference

    @property
    def destination(self) -> tuple[str, int]:
        latched = self.latched  # one read: the receive thread may change it
        return latched or (self.outIP, self.outPort)

    def recv(self) -> None:
        while self.NSD:
            try:
                packet, source = self.sin.recvfrom(8192)
            except BlockingIOError:
                time.sleep(0.01)
                continue
            except OSError:
                if not self.NSD:
                    return  # stop() closed the socket
                continue
            self.received(packet, source)

    def received(self, packet: bytes, source: tuple[str, int]) -> None:
        """One datagram off the media socket. Only the call's own source is heard: a
        stranger who finds the port cannot speak into a live call, nor press its keys."""
        if (
            not self._is_current(source)
            and source not in self._trusted
            and time.monotonic() - self._heard_at <= LATCH_QUIET_S
        ):
            self.foreign_packets += 1
            if self.foreign_packets & (self.foreign_packets - 1) == 0:  # 1, 2, 4, 8…
                log.warning(
                    "rtp_foreign_packet port=%d count=%d source=%s:%d",
                    self.inPort, self.foreign_packets, *source,
                )  # fmt: skip
            return
        if self.parse_packet(packet):
            self._latch(source)
            if not self._trusted:
                # Where the call's media first came from stays heard: a stranger who
                # takes the latch in a quiet spell (a phone that suppresses silence)
                # may take our audio, as before, but cannot mute the caller.
                self._trusted.add(source)

    def _is_current(self, source: tuple[str, int]) -> bool:
        # The latched source, or the SDP's address (a phone there that sends from another
        # port, as sipp does, still names where it listens).
        return source == self.latched if self.latched else source[0] == self.outIP

    def _latch(self, source: tuple[str, int]) -> None:
        # Symmetric RTP: media from another address than the SDP's c= (a phone behind
        # NAT, or one naming another interface) is answered where it comes from. Media
        # is followed elsewhere only once the current source has been quiet for a
        # second, so a stray or forged packet cannot take a live call's audio.
        now = time.monotonic()
        if self._is_current(source):
            self._heard_at = now
        elif now - self._heard_at > LATCH_QUIET_S:
            log.info(
                "rtp_latched port=%d sdp=%s:%d source=%s:%d",
                self.inPort, self.outIP, self.outPort, *source,
            )  # fmt: skip
            self.latched = source
            self._heard_at = now

    def retarget(self, address: str, port: int) -> None:
        """A new offer names another place to send to: followed at once, the latch
        forgotten. The same place again (a hold, a resume) keeps the latch: a phone
        behind NAT names its private address in every offer."""
        if (address, port) != (self.outIP, self.outPort):
            self.latched = None
            self.outIP, self.outPort = address, port

    # The bool is for our recv(). In pyVoIP only the recv replaced here calls this (and
    # its deprecated parsePacket alias, which nothing calls).
    def parse_packet(self, packet: bytes) -> bool:  # type: ignore[override]
        """Hand a packet's media on; True when it was this call's audio or a key."""
        if len(packet) >= 2 and packet[0] >> 6 == 2 and 200 <= packet[1] <= 204:
            return False  # RTCP on the RTP port (a=rtcp-mux): not ours to read
        if len(packet) >= 20 and packet[0] < 4 and len(packet) == 20 + int.from_bytes(packet[2:4]):
            return False  # STUN (RFC 7983 demultiplexing; its own length): linphone probes
        try:
            rtp = parse_rtp(packet)
            codec = self.assoc.get(rtp.payload_type)
            if codec in AUDIO_CODECS:
                self.packets_in += 1
                if not self.held:  # music on hold is not the caller speaking
                    self.sink.audio(rtp, codec)
            elif codec is EVENT:
                key = dtmf_key(rtp)
                if rtp.marker and self._new_key(rtp):
                    self.sink.dtmf(key)
            else:
                raise BadPacket(f"payload type {rtp.payload_type} was not negotiated")
            return True
        except BadPacket as exc:
            self.bad_packets += 1
            # Logged at powers of two: a flood of junk must not flood the log.
            if self.bad_packets & (self.bad_packets - 1) == 0:
                log.warning(
                    "rtp_bad_packet port=%d count=%d error=%s", self.inPort, self.bad_packets, exc
                )
            return False

    def _new_key(self, rtp: RtpPacket) -> bool:
        """A marked packet starts a key press (RFC 4733 2.5.1.2), and every packet of one
        press shares its timestamp. A start sent again (some phones send it three times
        for safety; a network may duplicate it) is the same press, not another."""
        now = time.monotonic()
        started = self._key_started
        if started and started[:2] == (rtp.ssrc, rtp.timestamp) and now - started[2] < KEY_AGAIN_S:
            return False
        self._key_started = (rtp.ssrc, rtp.timestamp, now)
        return True

    def write(self, data: bytes) -> None:
        self.pmout.write(data)

    def read(self, length: int = SAMPLES_PER_PACKET, blocking: bool = False) -> bytes:
        # Refused on purpose: pyVoIP's polling read would return its never-filled buffer,
        # endless silence, to anyone who called VoIPCall.read_audio by habit.
        raise RuntimeError("a G711Client delivers inbound audio to its MediaSink; nothing to read")

    def trans(self) -> None:
        period = SAMPLES_PER_PACKET / 8000
        sequence, timestamp = self.outSequence, self.outTimestamp
        due = time.monotonic()
        while self.NSD:
            if self.held:  # RFC 3264 8.4: nothing is sent to a sendonly or inactive peer
                due = time.monotonic() + period
                time.sleep(period)
                continue
            payload = self.pmout.read(SAMPLES_PER_PACKET)
            header = RTP_HEADER.pack(
                0x80, int(self.preference), sequence & 0xFFFF, timestamp & 0xFFFFFFFF, self.outSSRC
            )
            try:
                self.sout.sendto(header + payload, self.destination)
            except OSError as exc:
                if not self.NSD:
                    return  # closed by stop()
                self.send_failures += 1
                if self.send_failures & (self.send_failures - 1) == 0:  # 1, 2, 4, 8…
                    log.warning(
                        "rtp_send_failed port=%d count=%d error=%r",
                        self.inPort,
                        self.send_failures,
                        exc,
                    )
            sequence += 1
            timestamp += SAMPLES_PER_PACKET
            # Deadline pacing: each packet is due 20 ms after the last one was *due*,
            # so send time and sleep overshoot do not add up to drift.
            due += period
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.2:
                due = time.monotonic()  # stalled (suspended?): resume, don't burst


class BadOffer(ValueError):
    """An INVITE whose session description we cannot answer."""


class AdaptedCall(VoIPCall):
    """A call whose media are `G711Client`s and which says when it ends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.on_end: Callable[[str], None] = lambda _by: None
        self.on_hold: Callable[[bool], None] = lambda _held: None
        self.answers = 0  # re-INVITEs answered, for the SDP version
        super().__init__(*args, **kwargs)
        if self.state is CallState.RINGING and not self.RTPClients:
            raise BadOffer("no usable audio stream in the offer")

    def create_rtp_clients(
        self,
        codecs: dict[int, RTP.PayloadType],
        ip: str,
        port: int,
        request: SIP.SIPMessage,
        baseport: int,
    ) -> None:
        # Recorded so release_ports(call) frees them; pyVoIP forgot to for incoming calls.
        self.assignedPorts[port] = codecs
        for index in range(len(request.body["c"])):
            self.RTPClients.append(
                G711Client(
                    codecs,
                    ip,
                    port,
                    request.body["c"][index]["address"],
                    baseport + index,
                    self.sendmode,
                    dtmf=None,
                )
            )

    @property
    def media(self) -> G711Client:
        client = self.RTPClients[0]
        assert isinstance(client, G711Client)
        return client

    def renegotiate(self, request: SIP.SIPMessage) -> None:
        """A re-INVITE: hold (sendonly, inactive, c=0.0.0.0), resume, or a new address."""
        offer = sipmsg.parse(request.raw).sdp  # canonical already: it parses
        assert offer is not None
        direction = ANSWER_DIRECTION[offer.direction]
        if offer.address == "0.0.0.0":  # RFC 2543 hold
            direction = RTP.TransmitType.INACTIVE
        self._send_answer(request, direction)
        media = self.media
        if offer.address != "0.0.0.0":
            media.retarget(offer.address, offer.port)
        if offer.on_hold != media.held:
            media.held = offer.on_hold
            self.on_hold(offer.on_hold)

    def refresh(self, message: sipmsg.SipMessage) -> None:
        """A re-INVITE with no offer: ours again, unchanged (RFC 3261 14.2)."""
        request = SIP.SIPMessage(message.canonical())
        direction = RTP.TransmitType.INACTIVE if self.media.held else RTP.TransmitType.SENDRECV
        self._send_answer(request, direction)

    def _send_answer(self, request: SIP.SIPMessage, direction: RTP.TransmitType) -> None:
        # Not pyVoIP's gen_ms(): it starts the RTP clients again, and the second bind
        # of the call's port fails, so its own re-INVITE answer never went out.
        media = {client.inPort: client.assoc for client in self.RTPClients}
        answer = self.sip.gen_answer(request, self.session_id, media, direction)
        # pyVoIP writes the same o= version in every answer; RFC 3264 8 wants it to
        # grow with each change, and some PBXes ignore an SDP whose version stands still.
        self.answers += 1
        answer = answer.replace(
            f"o=pyVoIP {self.session_id} {int(self.session_id) + 2} ",
            f"o=pyVoIP {self.session_id} {int(self.session_id) + 2 + self.answers} ",
            1,
        )
        self.sip.out.sendto(answer.encode("utf8"), (self.phone.server, self.phone.port))

    def deny(self) -> None:
        """Refuse a call that could not be set up: 486, and nothing left of it.

        pyVoIP's stopped RTP clients it had never started (an AttributeError), so the
        caller got no answer at all and kept retransmitting the INVITE."""
        busy = self.sip.gen_busy(self.request)
        self.sip.out.sendto(busy.encode("utf8"), (self.phone.server, self.phone.port))
        self.state = CallState.ENDED
        self.phone.calls.pop(self.call_id, None)

    def dtmf_info(self, key: str) -> None:
        """A key sent as SIP INFO (application/dtmf-relay) instead of an RTP event."""
        self.media.sink.dtmf(key)

    def bye(self) -> None:  # the caller hung up
        super().bye()
        self.on_end("caller")

    def hangup(self) -> None:  # we hang up
        super().hangup()
        self.on_end("gateway")


def _record_routed(response: str, request: SIP.SIPMessage) -> str:
    """The request's Record-Route copied into a 18x or 2xx (RFC 3261 12.1.1), which
    pyVoIP left out: without it a record-routing PBX is bypassed by the caller's ACK,
    re-INVITEs and BYE."""
    routes = sipmsg.parse(request.raw).all("Record-Route")
    if not routes:
        return response
    head, _, rest = response.partition("\r\nFrom: ")
    return head + "".join(f"\r\nRecord-Route: {route}" for route in routes) + "\r\nFrom: " + rest


_EMPTY_FROM_TAG = re.compile(rb"^(From: [^\r\n]*?);tag=(?=\r\n)", re.MULTILINE)


class DialogSocket(socket.socket):
    """The SIP socket: answers each dialog where its last message came from."""

    MAX_DIALOGS = 4096

    def __init__(self) -> None:
        super().__init__(socket.AF_INET, socket.SOCK_DGRAM)
        self._peers: OrderedDict[bytes, tuple[str, int]] = OrderedDict()
        self._peers_lock = threading.Lock()
        self.last_peer: tuple[str, int] | None = None

    def receive(self, bufsize: int) -> bytes:
        """One datagram as it came, its sender remembered for the dialog's replies."""
        data, peer = self.recvfrom(bufsize)
        self.last_peer = peer
        call_id = call_id_of(data)
        if call_id is not None:
            with self._peers_lock:
                self._peers[call_id] = peer
                self._peers.move_to_end(call_id)
                while len(self._peers) > self.MAX_DIALOGS:
                    self._peers.popitem(last=False)
        return data

    def recv(self, bufsize: int, flags: int = 0) -> bytes:
        # pyVoIP's REGISTER reads the registrar's answers here: canonical, when they parse.
        data = self.receive(bufsize)
        try:
            return sipmsg.parse(data).canonical()
        except sipmsg.SipError:
            return data

    def sendto(self, data: Any, *args: Any) -> int:
        # pyVoIP echoes a From without a tag (RFC 2543 callers) as ";tag=", which is
        # malformed: the empty parameter goes.
        data = _EMPTY_FROM_TAG.sub(rb"\1", bytes(data))
        call_id = call_id_of(data)
        with self._peers_lock:
            peer = self._peers.get(call_id) if call_id is not None else None
        if peer is not None:
            args = (*args[:-1], peer)
        return super().sendto(data, *args)

    def forget(self, call_id: str) -> None:
        with self._peers_lock:
            self._peers.pop(call_id.encode(), None)


class AdaptedSIPClient(SIP.SIPClient):
    def __init__(
        self, *args: Any, register: bool, deregister_timeout: float, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.registering = register
        self.deregister_timeout = deregister_timeout
        self.bad_messages = 0
        self.s: DialogSocket
        self.phone: AdaptedPhone  # only AdaptedPhone builds one

    def gen_bye(self, request: SIP.SIPMessage) -> str:
        # pyVoIP's sent the BYE to a Contact it cut at the first '>' (a Contact with
        # parameters, as linphone's, became an unparseable Request-URI), with the
        # caller's own Via, and no route set.
        invite = sipmsg.parse(request.raw)
        branch = "z9hG4bK" + "".join(random.choices("0123456789abcdef", k=16))
        return sipmsg.bye(
            invite,
            local_tag=self.tagLibrary[invite.call_id],
            via=f"SIP/2.0/UDP {self.myIP}:{self.myPort};branch={branch};rport",
            contact=f"<sip:{self.username}@{self.myIP}:{self.myPort}>",
            cseq=invite.cseq + 1,
        ).decode()

    def gen_answer(self, request: SIP.SIPMessage, *args: Any) -> str:
        return _record_routed(super().gen_answer(request, *args), request)

    def gen_ringing(self, request: SIP.SIPMessage) -> str:
        # pyVoIP put the caller's own Contact in its 180; a phone may send in-dialog
        # requests of the early dialog there, so it is ours.
        ringing = _record_routed(super().gen_ringing(request), request)
        return re.sub(
            r"^Contact: [^\r\n]*",
            f"Contact: <sip:{self.username}@{self.myIP}:{self.myPort}>",
            ringing,
            count=1,
            flags=re.MULTILINE,
        )

    def start(self) -> None:
        if self.NSD:
            raise RuntimeError("the SIP client is already started")
        self.NSD = True
        self.s = DialogSocket()
        self.s.bind((self.myIP, self.myPort))
        self.out = self.s
        if self.registering:
            threading.Thread(target=self.register, name="SIP register", daemon=True).start()
        else:
            self.phone._status = PhoneStatus.REGISTERED
        threading.Thread(target=self.recv_loop, name="SIP receive", daemon=True).start()

    def stop(self) -> None:
        if not self.NSD:
            return
        self.NSD = False
        if self.registerThread:
            self.registerThread.cancel()
            # pyVoIP waits this long for a reply. It infers int from its default of 30, but
            # only hands the value to select() and a comparison, which take float seconds.
            self.register_timeout = self.deregister_timeout  # type: ignore[assignment]
            self.deregister()
        self._close_sockets()

    def recv_loop(self) -> None:
        while self.NSD:
            try:
                with acquired_lock_and_unblocked_socket(self.recvLock, self.s):
                    self.recv()
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                if self.NSD:
                    raise
                return  # stop() closed the socket under us
            except Exception:
                # One datagram must never end the gateway's SIP: logged, and on to the next.
                log.exception("sip_receive_failed")

    def recv(self) -> None:
        try:
            raw = self.s.receive(8192)
        except BlockingIOError:
            raise  # recv_loop's cue to release its lock and poll again
        except OSError as exc:
            if self.NSD:  # e.g. an ICMP port-unreachable surfacing on a UDP socket
                log.warning("sip_receive_failed error=%r", exc)
            return  # otherwise the socket was closed by stop()
        if not raw.strip(b"\x00\r\n "):
            return  # keep-alive
        try:
            message = sipmsg.parse(raw)
        except sipmsg.SipError as exc:
            self.refuse(raw, exc)
            return
        try:
            if message.is_request:
                sipmsg.check_request(message)
        except sipmsg.SipError as exc:
            self.refuse(raw, exc, message)
            return
        if not message.is_request:
            # This gateway places no calls: REGISTER reads its own answers (`register`),
            # so a response here belongs to no transaction (RFC 3261 18.1.2: drop it).
            log.info("sip_stray_response status=%s call_id=%s", message.status, message.call_id)
            return
        if not self.answer_ourselves(message):
            return
        try:
            parsed = SIP.SIPMessage(message.canonical())
        except Exception as exc:  # our canonical form should always parse: a bug, said so
            self.refuse(raw, sipmsg.SipError(400, f"unreadable after canonicalising: {exc!r}"))
            return
        try:
            self.parse_message(parsed)
        except Exception:
            log.exception("sip_message_failed call_id=%s", message.call_id)

    def refuse(
        self, raw: bytes, error: sipmsg.SipError, message: sipmsg.SipMessage | None = None
    ) -> None:
        """Answer a request we will not take with its status; drop a bad response."""
        if message is not None and message.method == "ACK":
            log.warning("sip_bad_ack call_id=%s error=%s", message.call_id, error.reason)
            return  # an ACK is never answered
        if error.status == 488 and (message is None or message.method == "INVITE"):
            self.phone.rejected_offers += 1
            log.warning("sip_bad_offer call_id=%s error=%s", call_id_of(raw), error.reason)
        else:
            self.bad_messages += 1
            log.warning(
                "sip_bad_message bytes=%d status=%d error=%s", len(raw), error.status, error.reason
            )
        warning = error.reason[:120].replace('"', "'")
        headers = (*error.extra, f'Warning: 399 callswarm "{warning}"')
        response: bytes | None
        if message is not None:
            response = sipmsg.response(message, error.status, headers)
        else:
            status = f"{error.status} {sipmsg.REASONS.get(error.status, 'Bad Request')}"
            response = response_to(raw, status, headers)
        if response is not None and self.s.last_peer is not None:
            self.s.sendto(response, self.s.last_peer)  # a clear no, not a 32 s timeout

    def answer_ourselves(self, message: sipmsg.SipMessage) -> bool:
        """Requests pyVoIP cannot take, answered here; False when nothing is left for it."""
        call = self.phone.calls.get(message.call_id)  # one read: end() may remove it
        known = call is not None
        reply: bytes | None = None
        if message.method == "OPTIONS":
            # pyVoIP cannot parse OPTIONS; a proxy probing whether this gateway is up
            # (kamailio's dispatcher) needs its 200.
            reply = sipmsg.response(
                message, 200, ("Allow: " + ", ".join(sipmsg.ALLOWED), "Accept: application/sdp")
            )
        elif message.method == "INFO":
            key = sipmsg.info_dtmf(message) if known else None
            if key is not None and isinstance(call, AdaptedCall):
                call.dtmf_info(key)
            reply = sipmsg.response(message, 200 if known else 481)
        elif message.method in ("BYE", "CANCEL") and not known:
            reply = sipmsg.response(message, 481)
        elif message.method == "ACK":
            return known  # an ACK is never answered; one for no call is dropped
        elif message.method == "INVITE" and not known and message.to.tag is not None:
            # A re-INVITE for a dialog we do not have (a restart lost it): RFC 3261 12.2.2.
            reply = sipmsg.response(message, 481)
        elif message.method == "INVITE" and isinstance(call, AdaptedCall) and message.sdp is None:
            # A re-INVITE without an offer (a session refresh): our current offer.
            call.refresh(message)
            return False
        if reply is not None:
            if self.s.last_peer is not None:
                self.s.sendto(reply, self.s.last_peer)
            return False
        return True


class AdaptedPhone(VoIPPhone):
    """The endpoint: pyVoIP's phone with the fixes above, a call limit and clean offers."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        server: str,
        server_port: int,
        username: str,
        password: str,
        register: bool,
        max_calls: int,
        rtp_ports: tuple[int, int],
        on_call: Callable[[AdaptedCall], None],
        deregister_timeout: float = 2.0,
        on_failed: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__(
            server or host,
            server_port,
            username,
            password,
            myIP=host,
            callCallback=on_call,  # type: ignore[arg-type]
            sipPort=port,
            rtpPortLow=rtp_ports[0],
            rtpPortHigh=rtp_ports[1],
        )
        self.max_calls = max_calls
        self.rejected_busy = 0
        self.rejected_offers = 0
        self.on_failed = on_failed
        self.sip: AdaptedSIPClient = AdaptedSIPClient(
            server or host,
            server_port,
            username,
            password,
            phone=self,
            myIP=host,
            myPort=port,
            callCallback=self.callback,
            fatalCallback=self.fatal,
            register=register,
            deregister_timeout=deregister_timeout,
        )

    def fatal(self) -> None:
        # pyVoIP gives up after three refused or unanswered REGISTERs and closes the
        # phone, without a word: said here, and to the endpoint.
        log.error(
            "sip_register_failed server=%s:%d user=%s failures=%d",
            self.server, self.port, self.username, self.sip.registerFailures,
        )  # fmt: skip
        super().fatal()
        self.on_failed()

    def live_calls(self) -> int:
        return sum(1 for call in list(self.calls.values()) if call.state is not CallState.ENDED)

    def _callback_MSG_Invite(self, request: SIP.SIPMessage) -> None:
        call_id = request.headers["Call-ID"]
        if call_id in self.calls:
            super()._callback_MSG_Invite(request)  # a re-INVITE: pyVoIP renegotiates
            return
        if self.live_calls() >= self.max_calls:
            self.rejected_busy += 1
            log.info("sip_busy call_id=%s limit=%d", call_id, self.max_calls)
            self._respond(request, "486 Busy Here", "All our lines are busy, please call again")
            return
        session_id = random.randint(1, 100000)
        try:
            call = AdaptedCall(
                self, CallState.RINGING, request, session_id, self.myIP, sendmode=self.recvmode
            )
        except Exception as exc:
            self.rejected_offers += 1
            log.warning("sip_bad_offer call_id=%s error=%r", call_id, exc)
            self.release_ports()
            self._respond(request, "488 Not Acceptable Here", "Offer PCMU or PCMA over RTP/AVP")
            return
        self.calls[call_id] = call
        self.sip.out.sendto(self.sip.gen_ringing(request).encode("utf8"), (self.server, self.port))
        thread = threading.Thread(
            target=self.callCallback, args=(call,), name=f"call {call_id}", daemon=True
        )
        thread.start()

    def _respond(self, request: SIP.SIPMessage, status: str, reason: str) -> None:
        try:
            response = self.sip.gen_busy(request)
        except Exception as exc:  # too broken to answer (no From tag, no Contact…)
            log.warning("sip_unanswerable error=%r", exc)
            return
        response = response.replace("486 Busy Here", status, 1).replace(
            '399 GS "Unable to accept call"', f'399 callswarm "{reason}"', 1
        )
        self.sip.out.sendto(response.encode("utf8"), (self.server, self.port))

    def release_ports(self, call: VoIPCall | None = None) -> None:
        # pyVoIP's raises when a port is released twice, as a call's __del__ does after
        # its end; and without a call it first deletes calls whose thread has ended.
        with self.portsLock:
            if call is not None:
                ports = set(call.assignedPorts)
                call.assignedPorts = {}
            else:
                busy = {port for c in list(self.calls.values()) for port in c.assignedPorts}
                ports = set(self.assignedPorts) - busy
            self.assignedPorts = [port for port in self.assignedPorts if port not in ports]

    def end(self, call: AdaptedCall) -> None:
        """Forget a finished call: its ports, its dialog route."""
        self.calls.pop(call.call_id, None)
        self.release_ports(call=call)
        self.sip.s.forget(call.call_id)
