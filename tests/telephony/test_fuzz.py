"""Fuzzing the SIP front, SDP, RTP and a live endpoint with hypothesis.

Each case starts from a message a real peer sends (ours, and RFC 4475's valid ones) and
mutates its bytes where parsers break: cut, doubled or dropped lines, separators and
quotes put in, headers emptied, lengths and numbers changed. The property is the same
everywhere: bad input is refused with a clear error (a `SipError`, a `BadPacket`), never
an exception of another kind; and what the front lets through, pyVoIP parses.

`CALLSWARM_FUZZ_EXAMPLES` scales the runs (docs/telephony.md has a longer one), and
`CALLSWARM_FUZZ_RANDOM=1` draws new cases instead of the same ones every run.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyVoIP import SIP

from telephony import sdp, sipmsg
from telephony.adapter import AdaptedCall, AdaptedPhone
from telephony.sipmsg import SipError
from telephony.wire import BadPacket, dtmf_key, parse_rtp

from ..conftest import worker_ports
from .sipp import free_udp_port

SCALE = float(os.environ.get("CALLSWARM_FUZZ_EXAMPLES", "10000")) / 10000
FUZZ = settings(
    database=None,  # no .hypothesis/ in the tree; a failure prints its example
    deadline=None,
    derandomize=os.environ.get("CALLSWARM_FUZZ_RANDOM") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def fuzz(examples: int) -> settings:
    return settings(FUZZ, max_examples=max(1, int(examples * SCALE)))


CORPUS = Path(__file__).parent / "rfc4475"
PEERS = Path(__file__).parent / "peers"
VALID = ("wsinv", "esc01", "lwsdisp", "longreq", "semiuri", "transports", "inv2543", "zeromf")
SDP = (
    "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
    "m=audio {port} RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\n"
    "a=fmtp:101 0-15\r\na=ptime:20\r\na=sendrecv\r\n"
)


def request(method: str, body: str = "", call_id: str = "fuzz-1", extra: str = "") -> bytes:
    lines = [
        f"{method} sip:pharmacy@127.0.0.1:5070 SIP/2.0",
        "Via: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKfuzz;rport",
        "Max-Forwards: 70",
        'From: "Fuzz" <sip:+15550100@127.0.0.1:5999>;tag=f1',
        "To: <sip:pharmacy@127.0.0.1:5070>" + (";tag=t1" if method != "INVITE" else ""),
        f"Call-ID: {call_id}",
        f"CSeq: 2 {method}",
        "Contact: <sip:+15550100@127.0.0.1:5999>",
        "Supported:",
        "Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, INFO",
    ]
    if extra:
        lines.append(extra)
    if body:
        lines.append("Content-Type: application/sdp")
    lines.append(f"Content-Length: {len(body.encode())}")
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


SEEDS = [
    request("INVITE", SDP.format(port=4000)),
    request("ACK"),
    request("BYE"),
    request("CANCEL"),
    request("OPTIONS"),
    request("INFO", "Signal=5\r\nDuration=160\r\n").replace(
        b"application/sdp", b"application/dtmf-relay"
    ),
    *((CORPUS / f"{name}.dat").read_bytes() for name in VALID),
    *(path.read_bytes() for path in sorted(PEERS.glob("*.sip"))),  # real softphones' INVITEs
]
# What breaks parsers: separators, quotes, folding, NULs, non-UTF-8, long runs.
NASTY = [
    b"", b" ", b"\t", b"\r\n", b"\r\n ", b"\n", b"\r", b":", b": ", b";", b",", b"=",
    b"<", b">", b'"', b"\\", b"/", b"@", b"%", b"%00", b"\x00", b"\xff\xfe", b"\xc3",
    b"tag=", b";tag=", b"sip:", b"SIP/2.0", b"0", b"-1", b"4294967296", b"99999999999",
    b"\r\n\r\n", b"m=audio", b"c=IN IP4 ", b"a=rtpmap:", b" / ", b"a" * 300,
    "²".encode(), "١٢".encode(), b"9" * 5000, b"IP6 ::1", b"*", b"SIP:", b"sips:",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        span = draw(st.integers(0, min(40, len(data) - at)))
        action = draw(st.integers(0, 5))
        if action == 0:  # drop bytes
            del data[at : at + span]
        elif action == 1:  # put in something nasty
            data[at:at] = draw(st.sampled_from(NASTY))
        elif action == 2:  # overwrite with nasty
            data[at : at + span] = draw(st.sampled_from(NASTY))
        elif action == 3:  # random bytes
            data[at : at + span] = draw(st.binary(max_size=12))
        elif action == 4:  # a whole line doubled or dropped
            lines = bytes(data).split(b"\r\n")
            index = draw(st.integers(0, len(lines) - 1))
            if draw(st.booleans()):
                lines.insert(index, lines[index])
            else:
                del lines[index]
            data = bytearray(b"\r\n".join(lines))
        else:  # a header emptied, or its value changed by case
            lines = bytes(data).split(b"\r\n")
            index = draw(st.integers(0, len(lines) - 1))
            name, colon, value = lines[index].partition(b":")
            lines[index] = name + colon if draw(st.booleans()) else name.upper() + colon + value
            data = bytearray(b"\r\n".join(lines))
    return bytes(data)


@given(raw=mutated(SEEDS))
@fuzz(10000)
def test_the_sip_front_refuses_or_passes_what_pyvoip_can_parse(raw: bytes) -> None:
    try:
        message = sipmsg.parse(raw)
        if message.is_request:
            sipmsg.check_request(message)
    except SipError as exc:
        assert 400 <= exc.status < 600
        return
    canonical = message.canonical()
    again = sipmsg.parse(canonical)  # the canonical form is a fixed point
    assert (again.call_id, again.cseq, again.method) == (
        message.call_id,
        message.cseq,
        message.method,
    )
    if message.sdp is not None:  # the streams refused are gone from it, the rest stays
        assert again.sdp == dataclasses.replace(message.sdp, dropped_streams=0)
    if message.method in ("INVITE", "ACK", "BYE", "CANCEL"):
        parsed = SIP.SIPMessage(canonical)
        assert parsed.headers["Call-ID"] == message.call_id
        if message.sdp is not None:
            assert [m["port"] for m in parsed.body["m"]] == [message.sdp.port]


SDP_SEEDS = [
    SDP.format(port=4000).encode(),
    (
        b"v=0\r\no=x 1 1 IN IP4 10.0.0.1\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\n"
        b"m=audio 5000 RTP/SAVP 0\r\nm=audio 6000 RTP/AVP 96 0 97\r\nc=IN IP4 127.0.0.1\r\n"
        b"a=rtpmap:96 opus/48000/2\r\na=rtpmap:97 telephone-event/16000\r\na=rtcp-mux\r\n"
        b"a=ssrc:1 cname:x\r\na=ptime:10\r\nm=video 7000 RTP/AVP 99\r\n"
    ),
]


@given(body=mutated(SDP_SEEDS))
@fuzz(3000)
def test_sdp_offers_are_read_or_refused(body: bytes) -> None:
    try:
        offer = sdp.parse_sdp(body)
    except sdp.SdpError as exc:
        assert exc.status in (400, 488)
        return
    assert 0 < offer.port < 65536
    assert any(name in ("PCMU", "PCMA") for _, name in offer.codecs)
    assert offer.direction in sdp.DIRECTIONS


RTP_SEEDS = [
    bytes([0x80, 0x00, 0, 1, 0, 0, 0, 160, 0, 0, 0x10, 0x92]) + b"\xff" * 160,
    bytes([0x80, 0xE5, 0, 2, 0, 0, 1, 64, 0, 0, 0x10, 0x92, 5, 10, 0, 160]),
    bytes([0xB1, 0x08, 0, 3, 0, 0, 2, 128, 0, 0, 0x10, 0x92, 0, 0, 0, 7, 0xBE, 0xDE, 0, 1])
    + b"\x10\x20\x30\x40"
    + b"\xd5" * 160
    + b"\x00\x00\x03",
]


@given(packet=mutated(RTP_SEEDS) | st.binary(max_size=64))
@fuzz(3000)
def test_rtp_packets_are_read_or_refused(packet: bytes) -> None:
    try:
        rtp = parse_rtp(packet)
        if rtp.payload_type == 101:
            assert dtmf_key(rtp) in "0123456789*#ABCD"
    except BadPacket:
        return
    assert len(rtp.payload) <= len(packet) - 12


@pytest.fixture
def bare_phone():
    """pyVoIP's layer alone (no voice): each call answered, then hung up at once, if its
    media stays on loopback; left unanswered otherwise, so no fuzzed address gets a packet."""
    phone: AdaptedPhone

    def on_call(call: AdaptedCall) -> None:
        try:
            if call.media.outIP.startswith("127."):
                call.answer()
                call.hangup()
        finally:
            phone.end(call)

    phone = AdaptedPhone(
        host="127.0.0.1",
        port=free_udp_port(),
        server="",
        server_port=5060,
        username="pharmacy",
        password="",
        register=False,
        max_calls=4,
        rtp_ports=worker_ports(30000, 30999),
        on_call=on_call,
    )
    phone.start()
    try:
        yield phone
    finally:
        phone.stop()


def test_a_live_endpoint_fed_mutated_requests(bare_phone: AdaptedPhone) -> None:
    crashed: list[threading.ExceptHookArgs] = []
    previous_hook = threading.excepthook
    threading.excepthook = crashed.append
    caller = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    caller.bind(("127.0.0.1", 0))
    caller.settimeout(10)
    port = caller.getsockname()[1]
    target = ("127.0.0.1", bare_phone.sip.myPort)
    seeds = [seed.replace(b"5999", str(port).encode()) for seed in SEEDS[:6]]

    def alive(probe: str) -> bytes:
        """OPTIONS, and its 200: the endpoint reads datagrams in order, so this answer
        comes after it has handled every case before it."""
        options = request("OPTIONS", call_id=probe).replace(b"5999", str(port).encode())
        caller.sendto(options, target)
        while True:
            data = caller.recv(65535)  # the cases' own answers are read past here
            if f"Call-ID: {probe}".encode() in data and data.startswith(b"SIP/2.0 200"):
                return data

    cases: list[bytes] = []

    @given(raw=mutated(seeds), number=st.integers(0, 10**6))
    @fuzz(2000)
    def draw(raw: bytes, number: int) -> None:
        # A Call-ID of its own for each case, so a call it opens is its own.
        cases.append(raw.replace(b"fuzz-1", f"fuzz-{number}".encode()))

    try:
        # Drawn first, sent after: pyVoIP's threads use the global `random` while they
        # answer, and hypothesis takes that for a strategy using it.
        draw()
        for sent, case in enumerate(cases, 1):
            caller.sendto(case, target)
            if sent % 50 == 0:  # paced, so no datagram is lost to a full socket buffer
                alive(f"probe-{sent}")
        data = alive("probe-last")
        # Calls the cases opened are hung up by their own threads: wait for those.
        for thread in threading.enumerate():
            if thread.name.startswith("call "):
                thread.join(10)
    finally:
        threading.excepthook = previous_hook
        caller.close()
    assert len(cases) >= int(2000 * SCALE) * 0.9
    assert crashed == []
    assert bare_phone.sip.NSD and any(t.name == "SIP receive" for t in threading.enumerate())
    assert bare_phone.calls == {}
    assert bare_phone.assignedPorts == []
    assert re.search(rb"Allow: .*INFO", data)
