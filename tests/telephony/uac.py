"""A small SIP caller over UDP, for what a sipp scenario cannot script: hanging up when
the reply audio starts, a call over the limit, and malformed messages and packets."""

from __future__ import annotations

import asyncio
import re
import struct
import uuid

from .sipp import Capture

CRLF = "\r\n"


def request(
    method: str,
    target: str,
    *,
    call_id: str,
    number: str,
    local_port: int,
    cseq: int,
    to_tag: str = "",
    body: str = "",
    extra: str = "",
) -> bytes:
    lines = [
        f"{method} sip:pharmacy@{target} SIP/2.0",
        f"Via: SIP/2.0/UDP 127.0.0.1:{local_port};branch=z9hG4bK{uuid.uuid4().hex[:12]}",
        f'From: "Caller" <sip:{number}@127.0.0.1:{local_port}>;tag=uac{call_id[:8]}',
        f"To: <sip:pharmacy@{target}>" + (f";tag={to_tag}" if to_tag else ""),
        f"Call-ID: {call_id}",
        f"CSeq: {cseq} {method}",
        f"Contact: <sip:{number}@127.0.0.1:{local_port}>",
        "Max-Forwards: 70",
    ]
    if extra:
        lines.append(extra)
    if body:
        lines.append("Content-Type: application/sdp")
    lines.append(f"Content-Length: {len(body.encode())}")
    return (CRLF.join(lines) + CRLF + CRLF + body).encode()


RTPMAP = {"0": "PCMU/8000", "8": "PCMA/8000", "18": "G729/8000", "101": "telephone-event/8000"}


def offer(rtp_port: int, payload_types: str = "0 101") -> str:
    return CRLF.join(
        [
            "v=0",
            "o=uac 1 1 IN IP4 127.0.0.1",
            "s=-",
            "c=IN IP4 127.0.0.1",
            "t=0 0",
            f"m=audio {rtp_port} RTP/AVP {payload_types}",
            *(f"a=rtpmap:{pt} {RTPMAP[pt]}" for pt in payload_types.split()),
            "a=sendrecv",
            "",
        ]
    )


def rtp(
    payload: bytes,
    *,
    sequence: int,
    payload_type: int = 0,
    ssrc: int = 4242,
    timestamp: int | None = None,
) -> bytes:
    stamp = sequence * 160 if timestamp is None else timestamp
    return (
        struct.pack("!BBHII", 0x80, payload_type, sequence & 0xFFFF, stamp & 0xFFFFFFFF, ssrc)
        + payload
    )


ULAW_SILENCE = b"\xff" * 160


class SipPeer(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.messages: asyncio.Queue[str] = asyncio.Queue()
        self.transport: asyncio.DatagramTransport | None = None

    @classmethod
    async def open(cls) -> SipPeer:
        transport, peer = await asyncio.get_running_loop().create_datagram_endpoint(
            cls, local_addr=("127.0.0.1", 0)
        )
        peer.transport = transport
        return peer

    @property
    def port(self) -> int:
        assert self.transport is not None
        return self.transport.get_extra_info("sockname")[1]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.messages.put_nowait(data.decode(errors="replace"))

    def send(self, data: bytes, target: str) -> None:
        assert self.transport is not None
        host, port = target.rsplit(":", 1)
        self.transport.sendto(data, (host, int(port)))

    async def final(self, call_id: str) -> str:
        """The next final response (or request) on this call, skipping 1xx."""
        while True:
            message = await self.messages.get()
            if f"Call-ID: {call_id}" not in message:
                continue
            if re.match(r"SIP/2.0 1\d\d ", message):
                continue
            return message

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Call:
    """One call placed by the `SipPeer`, with its media on a `Capture` socket.

    Its RTP timestamps are its sampling clock, as a phone's are: quiet between words
    (nothing sent, as a phone suppressing silence does) moves them on. A phone that
    `keep_sending` sends every 20 ms of it, and its timestamps go on one packet at a
    time even when this loop is late to send them."""

    def __init__(self, peer: SipPeer, media: Capture, target: str, number: str) -> None:
        self.peer, self.media, self.target, self.number = peer, media, target, number
        self.call_id = uuid.uuid4().hex
        self.to_tag = ""
        self.remote_rtp: tuple[str, int] | None = None
        self._sequence = 0
        self._timestamp = 0
        self._clock: float | None = None  # when the line's sampling clock started
        self._sending = asyncio.Lock()
        self._continuous = False

    def _request(self, method: str, cseq: int, body: str = "") -> bytes:
        return request(
            method,
            self.target,
            call_id=self.call_id,
            number=self.number,
            local_port=self.peer.port,
            cseq=cseq,
            to_tag=self.to_tag,
            body=body,
        )

    async def invite(self, body: str | None = None) -> str:
        sdp = offer(self.media.port) if body is None else body
        self.peer.send(self._request("INVITE", 1, sdp), self.target)
        answer = await self.peer.final(self.call_id)
        if answer.startswith("SIP/2.0 200"):
            self.to_tag = re.search(r"^To:.*;tag=([^;\r\n]+)", answer, re.M).group(1)  # type: ignore[union-attr]
            port = int(re.search(r"^m=audio (\d+)", answer, re.M).group(1))  # type: ignore[union-attr]
            self.remote_rtp = ("127.0.0.1", port)
            self._clock = asyncio.get_running_loop().time()
            self.peer.send(self._request("ACK", 1), self.target)
        return answer

    async def speak(self, ulaw: bytes, *, held_up: tuple[float, float] | None = None) -> None:
        """Stream μ-law at the pace a phone sends it: 20 ms packets. `held_up` is (at,
        for) in seconds: the packets from `at` in are held back `for` seconds, as a
        network or a busy machine holds them, and then come at once."""
        assert self.remote_rtp is not None
        loop = asyncio.get_running_loop()
        if self._clock is None:
            self._clock = loop.time()
        async with self._sending:
            now = loop.time()
            if not self._continuous:
                self._timestamp = max(self._timestamp, round((now - self._clock) / 0.02) * 160)
            due = now
            hold_at = None if held_up is None else round(held_up[0] / 0.02) * 160
            for offset in range(0, len(ulaw), 160):
                if offset == hold_at and held_up is not None:
                    await asyncio.sleep(held_up[1])  # `due` stays: the rest goes at once
                self.media.send(
                    rtp(
                        ulaw[offset : offset + 160],
                        sequence=self._sequence,
                        timestamp=self._timestamp,
                    ),
                    self.remote_rtp,
                )
                self._sequence += 1
                self._timestamp += 160
                due += 0.02
                await asyncio.sleep(max(0.0, due - loop.time()))

    async def keep_sending(self) -> None:
        """Silence between words, as a phone that never suppresses it sends: run as a
        task from the answer on; `speak` takes the line while it talks."""
        self._continuous = True
        while True:
            await self.speak(ULAW_SILENCE)
            await asyncio.sleep(0)  # a waiting `speak` takes the lock here

    async def bye(self) -> str:
        self.peer.send(self._request("BYE", 2), self.target)
        return await self.peer.final(self.call_id)
