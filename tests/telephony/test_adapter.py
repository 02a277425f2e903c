"""The pyVoIP adapter's fixes, each against real sockets on loopback."""

from __future__ import annotations

import asyncio
import socket
import struct
import uuid

import numpy as np
import pytest
from pyVoIP.RTP import PayloadType

from telephony import SipConfig, SipEndpoint, caller_client_id
from telephony.adapter import DialogSocket, G711Client, Playback
from telephony.wire import BadPacket, dtmf_key, parse_rtp, response_to
from voice.codecs import alaw_to_pcm16, pcm16_to_alaw

from .sipp import free_udp_port
from .uac import SipPeer, request, rtp


def test_rtp_headers_with_csrcs_extension_and_padding_parse() -> None:
    packet = parse_rtp(rtp(b"\xd5" * 160, sequence=7, payload_type=8))
    assert (packet.payload_type, packet.sequence, packet.payload) == (8, 7, b"\xd5" * 160)
    # One CSRC, a one-word extension, three bytes of padding.
    header = struct.pack("!BBHII", 0xB1, 0x80 | 101, 1, 160, 99) + b"CSRC"
    extension = struct.pack("!HH", 0xBEDE, 1) + b"EXT!"
    event = bytes([11, 0x0A, 0, 160])
    packet = parse_rtp(header + extension + event + b"\x00\x00\x03")
    assert packet.marker and packet.payload == event and dtmf_key(packet) == "#"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x80\x00\x00",  # shorter than a header
        struct.pack("!BBHII", 0x00, 0, 1, 1, 1) + b"x" * 160,  # version 0
        struct.pack("!BBHII", 0x8F, 0, 1, 1, 1),  # 15 CSRCs promised, none there
        struct.pack("!BBHII", 0x90, 0, 1, 1, 1) + b"\x00\x01",  # truncated extension
        struct.pack("!BBHII", 0xA0, 0, 1, 1, 1) + b"ab\x09",  # padding longer than payload
    ],
)
def test_malformed_rtp_is_a_clear_error(data: bytes) -> None:
    with pytest.raises(BadPacket):
        parse_rtp(data)


def test_a_telephone_event_out_of_range_is_refused() -> None:
    with pytest.raises(BadPacket):
        dtmf_key(parse_rtp(rtp(bytes([200, 0, 0, 0]), sequence=1, payload_type=101)))


def test_playback_counts_gaps_inside_a_reply_only() -> None:
    playback = Playback(b"\xff")
    assert playback.read() == b"\xff" * 160 and playback.underruns == 0  # idle line
    playback.write(b"\x01" * 200)
    assert playback.read() == b"\x01" * 160
    assert playback.read() == b"\x01" * 40 + b"\xff" * 120  # ran dry mid-reply
    assert playback.underruns == 1
    playback.write(b"\x02" * 480)
    assert playback.flush() == 480  # barge-in drops what was queued
    assert playback.read() == b"\xff" * 160 and playback.underruns == 1
    playback.write(b"\x03" * 160)
    playback.finish()
    playback.read()
    playback.read()
    assert playback.underruns == 1 and playback.packets == 6


def test_pcma_calls_are_sent_as_a_law_at_a_steady_20_ms() -> None:
    """pyVoIP 1.6.8 sent μ-law bytes labelled PCMA; the adapter sends what it is given."""
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(5)
    port = free_udp_port()
    client = G711Client(
        {8: PayloadType.PCMA, 101: PayloadType.EVENT},
        "127.0.0.1",
        port,
        "127.0.0.1",
        receiver.getsockname()[1],
        None,
    )
    tone = (8000 * np.sin(2 * np.pi * 440 * np.arange(1600) / 8000)).astype("<i2").tobytes()
    client.write(pcm16_to_alaw(tone))
    client.start()
    try:
        packets = [parse_rtp(receiver.recv(2048)) for _ in range(12)]
    finally:
        client.stop()
        receiver.close()
    assert {p.payload_type for p in packets} == {8}
    assert [p.timestamp - packets[0].timestamp for p in packets] == [160 * i for i in range(12)]
    heard = b"".join(p.payload for p in packets[:10])
    assert heard == pcm16_to_alaw(tone)  # byte for byte: no μ-law, no 8-bit detour
    decoded = np.frombuffer(alaw_to_pcm16(heard), "<i2").astype(float)
    assert np.sqrt(np.mean(decoded**2)) > 5000  # the tone, not hiss
    assert packets[10].payload == b"\xd5" * 160  # then A-law silence


def test_sip_replies_go_where_the_dialog_came_from() -> None:
    """pyVoIP sent every response to its configured server; a direct caller never saw them."""
    gateway, caller = DialogSocket(), socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        gateway.bind(("127.0.0.1", 0))
        caller.bind(("127.0.0.1", 0))
        caller.settimeout(5)
        caller.sendto(b"INVITE sip:x SIP/2.0\r\nCall-ID: abc@host\r\n\r\n", gateway.getsockname())
        assert gateway.recv(8192).startswith(b"INVITE")
        server = ("127.0.0.1", free_udp_port())  # where pyVoIP would have sent it
        gateway.sendto(b"SIP/2.0 200 OK\r\ni: abc@host\r\n\r\n", server)
        assert caller.recv(8192).startswith(b"SIP/2.0 200 OK")
    finally:
        gateway.close()
        caller.close()


def test_an_unparseable_request_gets_a_400_echoing_its_dialog() -> None:
    raw = (
        b"INVITE sip:pharmacy@127.0.0.1 SIP/2.0\r\nv: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bK1\r\n"
        b"f: <sip:+1555@127.0.0.1>;tag=9\r\nt: <sip:pharmacy@127.0.0.1>\r\ni: call-1\r\n"
        b"CSeq: 1 INVITE\r\n\r\nv=0\r\nm=audio nonsense\r\n"
    )
    response = response_to(raw, "400 Bad Request")
    assert response is not None
    lines = response.decode().split("\r\n")
    assert lines[0] == "SIP/2.0 400 Bad Request"
    assert "i: call-1" in lines and "CSeq: 1 INVITE" in lines
    assert "t: <sip:pharmacy@127.0.0.1>;tag=callswarm400" in lines
    assert response_to(raw.replace(b"INVITE sip", b"ACK sip", 1), "400 x") is None  # never answered
    assert response_to(b"SIP/2.0 200 OK\r\n\r\n", "400 x") is None
    assert response_to(b"\x00\xff junk", "400 x") is None


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        ("+15550100", "+15550100"),
        ("5550100", "5550100"),
        ("alice", "sip-alice"),
        ("bob/../etc", "sip-bob..etc"),
        ("anonymous", "sip-anon-"),
        (None, "sip-anon-"),
    ],
)
def test_the_session_follows_the_callers_number(number: str | None, expected: str) -> None:
    client_id = caller_client_id(number, "call-id-1")
    assert client_id.startswith(expected) and "/" not in client_id
    if expected.endswith("-"):  # withheld numbers never share a session
        assert client_id != caller_client_id(number, "call-id-2")


async def test_start_does_not_wait_for_a_registrar_and_stop_does_not_wait_30_s(stt, tts) -> None:
    """A registrar that never answers: pyVoIP's start() blocked on it, and stop() then
    waited 30 s for the de-REGISTER answer."""
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    config = SipConfig(
        port=free_udp_port(),
        server="127.0.0.1",
        server_port=silent.getsockname()[1],
        deregister_timeout=0.5,
    )
    endpoint = SipEndpoint(config, hooks=None, stt=stt, tts=tts)  # type: ignore[arg-type]
    try:
        await asyncio.wait_for(endpoint.start(), 5)
        assert endpoint.status == "REGISTERING"
        silent.settimeout(5)
        assert silent.recv(8192).startswith(b"REGISTER")  # it did ask
    finally:
        await asyncio.wait_for(endpoint.stop(), 10)
        silent.close()
    assert endpoint.status == "stopped"


async def test_options_is_answered_so_a_proxy_can_probe_the_gateway(phone) -> None:
    peer = await SipPeer.open()
    try:
        call_id = uuid.uuid4().hex
        probe = request(
            "OPTIONS", phone.target, call_id=call_id, number="probe", local_port=peer.port, cseq=7
        )
        peer.send(probe, phone.target)
        response = await asyncio.wait_for(peer.final(call_id), 5)
    finally:
        peer.close()
    lines = response.split("\r\n")
    assert lines[0] == "SIP/2.0 200 OK"
    assert f"Call-ID: {call_id}" in lines and "CSeq: 7 OPTIONS" in lines
    assert "Allow: INVITE, ACK, BYE, CANCEL, OPTIONS, INFO" in lines
    assert not phone.endpoint.live  # a probe is not a call


class Heard:
    """A `MediaSink` that writes down what reached the call."""

    def __init__(self) -> None:
        self.audio_from: list[int] = []  # each audio packet's SSRC
        self.keys: list[str] = []

    def audio(self, packet, codec) -> None:  # noqa: ANN001 (the MediaSink's own types)
        self.audio_from.append(packet.ssrc)

    def dtmf(self, key: str) -> None:
        self.keys.append(key)


def key_packet(key: int, *, sequence: int, timestamp: int, start: bool, ssrc: int = 4242) -> bytes:
    packet = bytearray(rtp(bytes([key, 0x0A, 0, 160]), sequence=sequence, payload_type=101,
                           ssrc=ssrc, timestamp=timestamp))  # fmt: skip
    if start:
        packet[1] |= 0x80
    return bytes(packet)


def media_port(monkeypatch: pytest.MonkeyPatch) -> tuple[G711Client, Heard, list[float]]:
    """A call's media port for a phone at 10.0.0.5:4000, fed by hand on a clock of ours."""
    client = G711Client(
        {0: PayloadType.PCMU, 101: PayloadType.EVENT}, "127.0.0.1", free_udp_port(),
        "10.0.0.5", 4000, None,
    )  # fmt: skip
    client.sink = heard = Heard()
    clock = [100.0]
    monkeypatch.setattr("telephony.adapter.time.monotonic", lambda: clock[0])
    return client, heard, clock


def test_a_stranger_on_the_media_port_is_not_heard_while_the_phone_talks(monkeypatch) -> None:
    client, heard, clock = media_port(monkeypatch)
    phone, stranger = ("10.0.0.5", 4000), ("203.0.113.66", 5004)
    for n in range(50):
        clock[0] = 100.0 + n * 0.02
        client.received(rtp(b"\xff" * 160, sequence=n, ssrc=1), phone)
        client.received(rtp(b"\x00" * 160, sequence=n, ssrc=666), stranger)
    client.received(key_packet(0, sequence=1, timestamp=160, start=True, ssrc=666), stranger)
    assert heard.audio_from == [1] * 50 and heard.keys == []
    assert client.foreign_packets == 51 and client.destination == phone
    # Once the phone has been quiet for a second (a phone that suppresses silence, or
    # one behind NAT whose mapping changed), media from elsewhere is followed: here the
    # stranger takes the latch, and our audio...
    clock[0] = 102.5
    client.received(rtp(b"\x00" * 160, sequence=60, ssrc=666), stranger)
    assert client.destination == stranger and heard.audio_from[-1] == 666
    # ...but not the caller's voice: where the call's media first came from stays heard.
    clock[0] = 102.52
    client.received(rtp(b"\xff" * 160, sequence=50, ssrc=1), phone)
    assert heard.audio_from[-1] == 1
    client.received(rtp(b"\x00" * 160, sequence=1, ssrc=7), ("198.51.100.7", 40000))
    assert heard.audio_from[-1] == 1 and client.foreign_packets == 52


def test_a_key_press_is_one_key_however_often_its_start_is_sent(monkeypatch) -> None:
    client, heard, clock = media_port(monkeypatch)
    phone = ("10.0.0.5", 4000)

    def press(key: int, timestamp: int, first_sequence: int, starts: int) -> None:
        for i in range(starts + 5):  # the start, sent `starts` times, then the rest
            clock[0] += 0.02
            client.received(
                key_packet(key, sequence=first_sequence + i, timestamp=timestamp, start=i < starts),
                phone,
            )

    press(0, timestamp=8000, first_sequence=10, starts=3)  # a phone that sends it three times
    press(0, timestamp=8000, first_sequence=10, starts=1)  # the network duplicates a press
    assert heard.keys == ["0"]
    press(5, timestamp=16000, first_sequence=30, starts=1)  # another press
    clock[0] += 1.0
    press(5, timestamp=16000, first_sequence=30, starts=1)  # sipp replaying one recording
    assert heard.keys == ["0", "5", "5"]


def test_media_from_elsewhere_is_followed_only_once_the_current_source_is_quiet(
    monkeypatch,
) -> None:
    client = G711Client({0: PayloadType.PCMU}, "127.0.0.1", free_udp_port(), "10.0.0.5", 4000, None)
    clock = [100.0]
    monkeypatch.setattr("telephony.adapter.time.monotonic", lambda: clock[0])

    def packet_from(source: tuple[str, int], at: float) -> None:
        clock[0] = at
        client._latch(source)

    # A phone on its SDP address, sending from another port (sipp does): not followed.
    packet_from(("10.0.0.5", 6000), 100.0)
    assert client.destination == ("10.0.0.5", 4000)
    # A stray packet from elsewhere while the phone talks: ignored.
    packet_from(("203.0.113.66", 9), 100.02)
    assert client.destination == ("10.0.0.5", 4000)
    # The phone falls quiet (its NAT mapping changed): its media is followed there.
    packet_from(("198.51.100.7", 40000), 101.5)
    assert client.destination == ("198.51.100.7", 40000)
    packet_from(("203.0.113.66", 9), 101.52)  # and a stray cannot take it either
    assert client.destination == ("198.51.100.7", 40000)
    client.retarget("10.0.0.5", 4000)  # the same offer again (a resume): latch kept
    assert client.destination == ("198.51.100.7", 40000)
    client.retarget("10.0.0.9", 4002)  # a new place named: followed at once
    assert client.destination == ("10.0.0.9", 4002)
