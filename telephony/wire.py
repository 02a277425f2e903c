"""What travels on the wire, read and written by hand: RTP headers, RFC 2833 telephone
events, a SIP message's Call-ID, and the 400 for a request pyVoIP cannot parse. Pure."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

SAMPLES_PER_PACKET = 160  # 20 ms at 8 kHz
DTMF_KEYS = "0123456789*#ABCD"
RTP_HEADER = struct.Struct("!BBHII")
_CALL_ID = re.compile(rb"^(?:call-id|i)[ \t]*:[ \t]*(\S+)", re.IGNORECASE | re.MULTILINE)


class BadPacket(ValueError):
    """An RTP datagram that cannot be used."""


@dataclass(frozen=True, slots=True)
class RtpPacket:
    payload_type: int
    marker: bool
    sequence: int
    timestamp: int
    ssrc: int
    payload: bytes


def parse_rtp(data: bytes) -> RtpPacket:
    """RFC 3550 header, CSRCs, extension and padding; anything inconsistent is a BadPacket."""
    if len(data) < RTP_HEADER.size:
        raise BadPacket(f"{len(data)} bytes is shorter than an RTP header")
    first, second, sequence, timestamp, ssrc = RTP_HEADER.unpack_from(data)
    if first >> 6 != 2:
        raise BadPacket(f"RTP version {first >> 6}, not 2")
    offset = RTP_HEADER.size + 4 * (first & 0x0F)
    if first & 0x10:
        if len(data) < offset + 4:
            raise BadPacket("truncated header extension")
        offset += 4 + 4 * struct.unpack_from("!H", data, offset + 2)[0]
    end = len(data)
    if first & 0x20:
        padding = data[-1]
        if padding == 0 or padding > end - offset:
            raise BadPacket(f"bad padding length {padding}")
        end -= padding
    if offset > end:
        raise BadPacket("header longer than the packet")
    return RtpPacket(
        second & 0x7F, bool(second & 0x80), sequence, timestamp, ssrc, data[offset:end]
    )


def dtmf_key(packet: RtpPacket) -> str:
    """The key of an RFC 2833 telephone-event payload."""
    if len(packet.payload) < 4 or packet.payload[0] >= len(DTMF_KEYS):
        raise BadPacket("bad telephone-event payload")
    return DTMF_KEYS[packet.payload[0]]


def call_id_of(data: bytes) -> bytes | None:
    match = _CALL_ID.search(data, 0, data.find(b"\r\n\r\n") if b"\r\n\r\n" in data else len(data))
    return match.group(1) if match else None


# Loose on purpose: a 400 must reach requests whose first line is what is wrong.
_REQUEST_LINE = re.compile(rb"^([A-Za-z0-9\-.!%*_+`'~]+)[ \t]+.*[ \t]SIP/\S+[ \t]*$")
_ECHOED = re.compile(
    rb"^(via|v|from|f|to|t|call-id|i|cseq)[ \t]*:.*$", re.IGNORECASE | re.MULTILINE
)
_COMPACT = {b"v": b"via", b"f": b"from", b"t": b"to", b"i": b"call-id"}


def response_to(raw: bytes, status: str, headers: tuple[str, ...] = ()) -> bytes | None:
    """A stateless response to a request, echoing the headers every response must.

    None for responses, for ACKs (never answered) and for datagrams too broken to address."""
    head = raw.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b"\n")
    first = _REQUEST_LINE.match(head.split(b"\n", 1)[0].strip())
    if first is None or first.group(1) == b"ACK":
        return None
    lines = [f"SIP/2.0 {status}".encode()]
    names = set()
    for match in _ECHOED.finditer(head):
        line, name = match.group(0).rstrip(), match.group(1).lower()
        name = _COMPACT.get(name, name)
        names.add(name)
        if name == b"to" and b";tag=" not in line:
            line += b";tag=callswarm" + status.split()[0].encode()
        lines.append(line)
    if not {b"via", b"cseq"} <= names:
        return None  # nothing to route it back by (a response without From or To is
        # malformed, but RFC 4475's insuf still wants its 400)
    lines += [h.encode() for h in headers]
    lines += [b"Content-Length: 0", b"", b""]
    return b"\r\n".join(lines)
