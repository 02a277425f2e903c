"""SDP offers (RFC 4566, RFC 3264) as this gateway answers them: one audio stream.

A phone may offer several m-lines (SRTP, video, a second audio), codecs pyVoIP does not
know (opus, G.722), telephone-event at 16 kHz, a=ssrc, a=rtcp-mux. `parse_sdp` keeps
the first RTP/AVP audio stream with PCMU or PCMA, and `SdpOffer.text` writes it back in
the plain shape pyVoIP reads. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class SdpError(ValueError):
    """An offer to refuse, with the SIP status to refuse it with."""

    def __init__(self, status: int, reason: str, extra: tuple[str, ...] = ()) -> None:
        super().__init__(f"{status} {reason}")
        self.status = status
        self.reason = reason
        self.extra = extra


_KNOWN = {"pcmu": "PCMU", "pcma": "PCMA", "telephone-event": "telephone-event"}
_STATIC = {0: "PCMU", 8: "PCMA"}
DIRECTIONS = ("sendrecv", "sendonly", "recvonly", "inactive")


@dataclass(frozen=True, slots=True)
class SdpOffer:
    """The one audio stream of an offer that this gateway can answer."""

    address: str
    port: int
    codecs: tuple[tuple[int, str], ...]  # (payload type, "PCMU" | "PCMA" | "telephone-event")
    direction: str  # sendrecv | sendonly | recvonly | inactive
    ptime: int | None
    dropped_streams: int  # m-lines refused: video, a second audio, SRTP-only…

    @property
    def on_hold(self) -> bool:
        return self.direction in ("sendonly", "inactive") or self.address == "0.0.0.0"

    def text(self, origin: str) -> bytes:
        lines = ["v=0", f"o={origin}", "s=-", f"c=IN IP4 {self.address}", "t=0 0"]
        lines.append(f"m=audio {self.port} RTP/AVP " + " ".join(str(pt) for pt, _ in self.codecs))
        for pt, name in self.codecs:
            lines.append(f"a=rtpmap:{pt} {name}/8000")
            if name == "telephone-event":
                lines.append(f"a=fmtp:{pt} 0-15")
        if self.ptime is not None:
            lines.append(f"a=ptime:{self.ptime}")
        lines.append(f"a={self.direction}")
        return ("\r\n".join(lines) + "\r\n").encode()


def multipart_part(content_type: str, body: bytes) -> bytes:
    """The application/sdp part of a multipart body."""
    boundary = re.search(r'boundary\s*=\s*"?([^";]+)"?', content_type, re.IGNORECASE)
    if boundary is None:
        raise SdpError(400, "a multipart body without a boundary")
    for part in body.split(b"--" + boundary.group(1).encode())[1:]:
        head, _, content = part.lstrip(b"\r\n").partition(b"\r\n\r\n")
        if b"application/sdp" in head.lower():
            return content.rstrip(b"\r\n") + b"\r\n"
    raise SdpError(415, "no application/sdp part", ("Accept: application/sdp",))


def parse_sdp(body: bytes) -> SdpOffer:
    """The first usable audio stream of an offer; SdpError(488) when there is none."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise SdpError(400, "the SDP is not UTF-8") from None
    session: list[tuple[str, str]] = []
    media: list[list[tuple[str, str]]] = []
    for line in re.split(r"\r?\n", text):
        line = line.strip()
        if len(line) < 2 or line[1] != "=":
            continue  # a stray blank or broken line is skipped, as phones do
        kind, value = line[0], line[2:].strip()
        if kind == "m":
            media.append([])
        (media[-1] if media else session).append((kind, value))
    if not any(kind == "v" for kind, _ in session):
        raise SdpError(400, "the body is not SDP (no v= line)")
    chosen = None
    for section in media:
        fields = section[0][1].split()
        usable = (
            len(fields) >= 4
            and fields[0].lower() == "audio"
            and fields[2].upper() in ("RTP/AVP", "RTP/AVPF")
            and re.fullmatch(r"[0-9]{1,5}(/[0-9]{1,2})?", fields[1]) is not None
            and int(fields[1].split("/")[0]) != 0
        )
        if usable and chosen is None:
            chosen = section
    if chosen is None:
        raise SdpError(488, "no RTP/AVP audio stream in the offer")
    fields = chosen[0][1].split()
    port = int(fields[1].split("/")[0])
    if port > 65535:
        raise SdpError(488, "bad media port")
    names: dict[int, str] = {}
    for kind, value in chosen:
        match = (
            re.match(r"rtpmap: *([0-9]{1,3}) +([^/\s]+)/([0-9]+)", value) if kind == "a" else None
        )
        if match and match.group(2).lower() in _KNOWN and match.group(3) == "8000":
            names[int(match.group(1))] = _KNOWN[match.group(2).lower()]
    codecs: list[tuple[int, str]] = []
    for fmt in fields[3:]:
        if re.fullmatch(r"[0-9]{1,3}", fmt) and int(fmt) < 128:
            name = names.get(int(fmt)) or (_STATIC.get(int(fmt)) if int(fmt) < 96 else None)
            if name and not any(pt == int(fmt) for pt, _ in codecs):
                codecs.append((int(fmt), name))
    if not any(name in ("PCMU", "PCMA") for _, name in codecs):
        raise SdpError(488, "the offer has no PCMU or PCMA", ("Accept: application/sdp",))
    address = _connection(chosen) or _connection(session)
    if address is None:
        raise SdpError(488, "no connection address (c=) for the audio stream")
    attributes = [v for k, v in session + chosen if k == "a"]
    direction = next((a for a in reversed(attributes) if a in DIRECTIONS), "sendrecv")
    ptime = next((int(a[6:]) for a in attributes if re.fullmatch(r"ptime:[0-9]{1,3}", a)), None)
    return SdpOffer(address, port, tuple(codecs), direction, ptime, len(media) - 1)


def _connection(fields: list[tuple[str, str]]) -> str | None:
    for kind, value in fields:
        if kind == "c":
            parts = value.split()
            if len(parts) != 3 or parts[0] != "IN" or parts[1] not in ("IP4", "IP6"):
                raise SdpError(488, f"bad c= line {value[:40]!r}")
            address = parts[2].split("/")[0]
            # pyVoIP's RTP sockets are IPv4, and a host name would be looked up on
            # every packet sent: an IPv4 literal only.
            if parts[1] != "IP4" or not re.fullmatch(r"[0-9]{1,3}(\.[0-9]{1,3}){3}", address):
                raise SdpError(488, f"only an IPv4 address is served, not {address[:40]!r}")
            return address
    return None
