"""Hang-ups, the call limit and malformed input, with a small Python SIP caller where
sipp cannot wait on what the caller hears."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import struct

import numpy as np
from sqlalchemy.exc import OperationalError
from sqlmodel import Session, select

from models.tables import TurnRow
from tests.voice.speech import names, piper, silence
from voice.codecs import pcm16_to_ulaw
from voice.resample import resample

from .conftest import Phone, start_phone
from .sipp import Capture, Stream
from .test_sipp_calls import said_in_db
from .uac import Call, SipPeer, offer, request, rtp


def quiet_after_voice(stream: Stream, packets: int = 25) -> bool:
    """Something was said, and the line has been quiet since for `packets` × 20 ms."""
    voiced = np.flatnonzero(stream.voiced_frames())
    return voiced.size > 0 and len(stream.packets) - voiced[-1] > packets


def voiced_packets(stream: Stream) -> int:
    return int(stream.voiced_frames().sum())


# Half a second of voice: any spoken reply is longer, even "Sorry, did you say
# Ibuprofen?", which is what a loaded machine's Whisper can make of "ibuprofen".
REPLY_STARTED = 25


async def replied(phone: Phone, capture: Capture, client_id: str, voiced: int) -> None:
    """Wait until the newest stream on the phone has more than `voiced` packets of voice.
    A timeout says what the gateway heard and said, and what reached the phone."""
    try:
        await asyncio.wait_for(
            capture.until(lambda c: bool(c.streams) and voiced_packets(c.latest()) > voiced), 20
        )
    except TimeoutError:
        streams = [(len(s.packets), voiced_packets(s)) for s in capture.streams.values()]
        raise AssertionError(
            f"no reply on the line in 20 s: history {said_in_db(phone.services.db, client_id)}, "
            f"streams (packets, voiced) {streams}, junk {capture.junk}"
        ) from None


def ulaw(tts, text: str) -> bytes:
    return pcm16_to_ulaw(resample(piper(text) + silence(0.8), 16000, 8000))


async def connect(peer: SipPeer, capture: Capture, target: str, number: str) -> Call:
    call = Call(peer, capture, target, number)
    calls_before = len(capture.streams)
    answer = await asyncio.wait_for(call.invite(), 10)
    assert answer.startswith("SIP/2.0 200 OK"), answer
    # The greeting first: wait until it has been said.
    await asyncio.wait_for(
        capture.until(lambda c: len(c.streams) > calls_before and quiet_after_voice(c.latest())),
        20,
    )
    return call


async def test_the_caller_hanging_up_mid_reply_cleans_up_and_keeps_what_was_said(
    phone, capture, peer, tts
) -> None:
    call = await connect(peer, capture, phone.target, "+15550130")
    before = voiced_packets(capture.latest())
    await call.speak(ulaw(tts, "Do you have any ibuprofen?"))
    # The reply starts on the line: hang up in the middle of it.
    await replied(phone, capture, "+15550130", before + REPLY_STARTED)
    bye = await asyncio.wait_for(call.bye(), 5)
    assert bye.startswith("SIP/2.0 200 OK")

    [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    assert summary.ended_by == "caller" and summary.client_id == "+15550130"
    assert names(summary.transcripts[0], "Ibuprofen")
    assert len(summary.replies) == 1  # the greeting: the cut reply never finished
    assert not phone.endpoint.live and not phone.endpoint.phone.calls
    assert phone.endpoint.phone.assignedPorts == []  # its RTP port is free again
    history = said_in_db(phone.services.db, "+15550130")
    assert any(m.startswith("user: ") and names(m[6:], "Ibuprofen") for m in history)
    # Only what was heard stays: the reply's end ("Would you like to order it?") was not.
    # (Its start is "We have ...", or "Sorry, did you say ...?" when Whisper misheard.)
    assert history[-1].startswith(("user:", "assistant:"))
    assert "order it" not in history[-1]
    # The cut turn's latencies were stored, marked as interrupted.
    with Session(phone.services.db) as s:
        [turn] = s.exec(select(TurnRow).where(TurnRow.client_id == "+15550130")).all()
    assert turn.interrupted and turn.voice_to_voice_s is not None

    # The line is free for the next caller.
    again = await connect(peer, capture, phone.target, "+15550131")
    assert (await asyncio.wait_for(again.bye(), 5)).startswith("SIP/2.0 200 OK")


async def test_calls_over_the_limit_hear_busy_here(capture, peer, stt, tts, tmp_path) -> None:
    phone = await start_phone(tmp_path, stt, tts, max_calls=1)
    try:
        first = await connect(peer, capture, phone.target, "+15550140")
        second = Call(peer, capture, phone.target, "+15550141")
        busy = await asyncio.wait_for(second.invite(), 10)
        assert busy.startswith("SIP/2.0 486 Busy Here")
        assert "All our lines are busy" in busy
        assert phone.endpoint.phone.rejected_busy == 1
        await asyncio.wait_for(first.bye(), 5)
        await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
        third = await connect(peer, capture, phone.target, "+15550142")  # a line is free
        await asyncio.wait_for(third.bye(), 5)
    finally:
        await phone.stop()


async def test_malformed_sip_sdp_and_rtp_leave_the_call_in_progress_alone(
    phone, capture, peer, tts
) -> None:
    call = await connect(peer, capture, phone.target, "+15550150")
    assert call.remote_rtp is not None

    # Junk on the SIP port: dropped and logged.
    peer.send(b"\x00\xff\x13 not sip at all", phone.target)
    peer.send(b"SIP/2.0 999\r\n\r\n", phone.target)

    async def invite(body: str) -> str:
        other = Call(peer, capture, phone.target, "+15550159")
        return await asyncio.wait_for(other.invite(body), 10)

    # A request RFC 3261 forbids (its CSeq names another method): a 400.
    mismatched = request(
        "INVITE",
        phone.target,
        call_id="mismatched",
        number="+15550157",
        local_port=peer.port,
        cseq=1,
        body=offer(capture.port),
    ).replace(b"CSeq: 1 INVITE", b"CSeq: 1 BYE")
    peer.send(mismatched, phone.target)
    assert (await asyncio.wait_for(peer.final("mismatched"), 10)).startswith("SIP/2.0 400")
    # An offer without G.711 (G.729 only), and an INVITE with no offer: 488.
    assert (await invite(offer(capture.port, "18"))).startswith("SIP/2.0 488")
    no_offer = request(
        "INVITE",
        phone.target,
        call_id="no-offer",
        number="+15550158",
        local_port=peer.port,
        cseq=1,
    )
    peer.send(no_offer, phone.target)
    assert (await asyncio.wait_for(peer.final("no-offer"), 10)).startswith("SIP/2.0 488")

    # Junk RTP on the live call's port.
    for junk in (
        b"\x80",
        struct.pack("!BBHII", 0x00, 0, 1, 1, 1) + b"x" * 160,
        rtp(bytes([200, 0, 0, 0]), sequence=9, payload_type=101),
        rtp(b"\x00" * 160, sequence=10, payload_type=96),
        struct.pack("!BBHII", 0xA0, 0, 1, 1, 1) + b"ab\x09",
    ):
        capture.send(junk, call.remote_rtp)

    # The call carries on as if nothing happened.
    await call.speak(ulaw(tts, "Do you have any ibuprofen?"))
    before = voiced_packets(capture.latest())
    await replied(phone, capture, "+15550150", before + REPLY_STARTED)
    await asyncio.wait_for(call.bye(), 5)
    [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    assert summary.bad_packets == 5
    assert names(summary.transcripts[0], "Ibuprofen")
    assert phone.endpoint.phone.rejected_offers == 2
    assert phone.endpoint.phone.sip.bad_messages >= 2


async def test_a_database_hiccup_when_answering_does_not_drop_the_call(
    capture, peer, stt, tts, tmp_path
) -> None:
    phone = await start_phone(tmp_path, stt, tts)

    async def greet(client_id: str) -> str:
        raise OperationalError("INSERT INTO messages", {}, Exception("database is locked"))

    phone.endpoint.hooks = dataclasses.replace(phone.endpoint.hooks, greet=greet)
    try:
        call = Call(peer, capture, phone.target, "+15550190")
        assert (await asyncio.wait_for(call.invite(), 10)).startswith("SIP/2.0 200 OK")
        await call.speak(ulaw(tts, "Do you have any ibuprofen?"))
        # No greeting, but the caller is answered.
        await replied(phone, capture, "+15550190", REPLY_STARTED)
        await asyncio.wait_for(call.bye(), 5)
        [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    finally:
        await phone.stop()
    assert names(summary.transcripts[0], "Ibuprofen")
    history = said_in_db(phone.services.db, "+15550190")
    assert any(m.startswith("user: ") and names(m[6:], "Ibuprofen") for m in history)


async def test_an_odd_offer_from_another_address_is_answered_where_the_media_comes_from(
    phone, capture, peer, tts
) -> None:
    """What real phones put in their SDP, all at once: an SRTP-only stream and a video
    stream beside the audio, opus and telephone-event at 16 kHz before G.711, a=ssrc,
    a=rtcp-mux, 30 ms packets; and a c= address (127.0.0.2) that is not where the
    packets come from (the capture socket, 127.0.0.1)."""
    odd = "\r\n".join(
        [
            "v=0",
            "o=phone 7 7 IN IP4 127.0.0.2",
            "s=-",
            "c=IN IP4 127.0.0.2",
            "t=0 0",
            "m=audio 5004 RTP/SAVP 0",
            "m=audio " + str(capture.port) + " RTP/AVP 96 97 0 8 101",
            "a=rtpmap:96 opus/48000/2",
            "a=rtpmap:97 telephone-event/16000",
            "a=rtpmap:0 PCMU/8000",
            "a=rtpmap:101 telephone-event/8000",
            "a=fmtp:101 0-16",
            "a=ptime:30",
            "a=rtcp-mux",
            "a=ssrc:4242 cname:phone",
            "a=sendrecv",
            "m=video 5008 RTP/AVP 99",
            "a=rtpmap:99 VP8/90000",
            "",
        ]
    )
    # Made before dialling: synthesis blocks the loop the gateway runs in.
    speech = ulaw(tts, "Do you have any ibuprofen?")
    call = Call(peer, capture, phone.target, "+15550160")
    answer = await asyncio.wait_for(call.invite(odd), 10)
    assert answer.startswith("SIP/2.0 200 OK"), answer
    assert re.search(r"^m=audio \d+ RTP/AVP 0 8 101\r$", answer, re.M), answer
    assert call.remote_rtp is not None
    # The greeting goes to 127.0.0.2, where nobody listens; the reply, once the
    # caller's packets have come from elsewhere, follows them.
    for n, offset in enumerate(range(0, len(speech), 240)):  # 30 ms packets, as offered
        capture.send(rtp(speech[offset : offset + 240], sequence=n), call.remote_rtp)
        if n == 5:  # an RTCP receiver report on the muxed port, and a STUN probe
            capture.send(bytes([0x81, 201, 0, 7]) + b"\x00" * 28, call.remote_rtp)
            capture.send(b"\x00\x01\x00\x00\x21\x12\xa4\x42" + b"\x07" * 12, call.remote_rtp)
        await asyncio.sleep(0.03)  # a phone's pace, not a wait on the gateway
    # The reply comes back to where the caller's packets came from. Counted from here:
    # the greeting's tail may have followed the caller's first packets too, until the
    # caller's words cut it.
    before = voiced_packets(capture.latest()) if capture.streams else 0
    await replied(phone, capture, "+15550160", before + REPLY_STARTED)
    await asyncio.wait_for(call.bye(), 5)
    [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    assert summary.bad_packets == 0
    assert names(summary.transcripts[0], "Ibuprofen")


async def test_a_call_that_cannot_be_set_up_is_refused_busy_not_left_ringing(
    capture, peer, stt, tts, tmp_path
) -> None:
    phone = await start_phone(tmp_path, stt, tts)

    def broken(client_id: str):
        raise RuntimeError("the swarm session could not be opened")

    phone.endpoint.hooks = dataclasses.replace(phone.endpoint.hooks, responder=broken)
    try:
        call = Call(peer, capture, phone.target, "+15550170")
        answer = await asyncio.wait_for(call.invite(), 10)
        assert answer.startswith("SIP/2.0 486 Busy Here"), answer
        assert not phone.endpoint.phone.calls and not phone.endpoint.live
        assert phone.endpoint.phone.assignedPorts == []
    finally:
        await phone.stop()
