"""Real SIP callers for the tests: sipp scenarios, caller audio as G.711 files, and a
capture socket that stands where the caller's phone would hear the gateway."""

from __future__ import annotations

import asyncio
import socket
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from telephony.wire import BadPacket, RtpPacket, parse_rtp
from voice.codecs import alaw_to_pcm16, pcm16_to_alaw, pcm16_to_ulaw, ulaw_to_pcm16
from voice.resample import resample

SCENARIOS = Path(__file__).parent / "scenarios"
DTMF_PCAP = "/usr/share/sip-tester/dtmf_2833_{}.pcap"
DTMF_NAMES = {"#": "pound", "*": "star"}
PAYLOAD_TYPE = {"PCMU": 0, "PCMA": 8}


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def g711_file(path: Path, pcm16: bytes, rate: int, codec: str) -> Path:
    """Caller speech as the raw G.711 file sipp's rtp_stream plays."""
    narrow = resample(pcm16, rate, 8000)
    path.write_bytes(pcm16_to_alaw(narrow) if codec == "PCMA" else pcm16_to_ulaw(narrow))
    return path


def stream(path: Path, codec: str) -> str:
    return f'  <nop><action><exec rtp_stream="{path},1,{PAYLOAD_TYPE[codec]}"/></action></nop>\n'


def pause(seconds: float) -> str:
    return f'  <pause milliseconds="{int(seconds * 1000)}"/>\n'


def dtmf(key: str) -> str:
    pcap = DTMF_PCAP.format(DTMF_NAMES.get(key, key))
    return f'  <nop><action><exec play_pcap_audio="{pcap}"/></action></nop>\n'


def scenario(
    directory: Path,
    rtp_port: int,
    number: str,
    actions: str,
    *,
    codecs: str = "0 8",
    name: str = "direct_call.xml",
) -> Path:
    """A caller's scenario file: who calls (`number`), offering `codecs` in that order,
    asking for the gateway's audio at `rtp_port`, and doing `actions` once answered."""
    values = {"number": number, "codecs": codecs, "rtp_port": str(rtp_port), "actions": actions}
    text = string.Template((SCENARIOS / name).read_text()).substitute(values)
    path = directory / name
    path.write_text(text)
    return path


@dataclass
class SippRun:
    returncode: int
    output: str


async def sipp(
    scenario_file: Path,
    target: str,
    *,
    calls: int = 1,
    extra: tuple[str, ...] = (),
    max_seconds: float = 120.0,
    spread_s: float = 1.0,
) -> SippRun:
    """Run sipp to completion: `calls` calls, started evenly within `spread_s`."""
    args = [
        "sipp",
        "-sf",
        str(scenario_file),
        "-i",
        "127.0.0.1",
        "-p",
        str(free_udp_port()),
        "-mi",
        "127.0.0.1",
        "-mp",
        str(free_udp_port()),
        "-m",
        str(calls),
        "-l",
        str(calls),
        "-r",
        str(calls),
        "-rp",
        str(max(1, int(spread_s * 1000))),
        "-timeout",
        f"{int(max_seconds)}s",
        "-timeout_error",
        "-nostdin",
        "-trace_err",
        "-error_file",
        str(scenario_file.with_suffix(".errors")),
        *extra,
    ]
    if target:
        args.insert(3, target)
    process = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=scenario_file.parent,
    )
    try:
        out, _ = await asyncio.wait_for(process.communicate(), max_seconds + 30)
    except BaseException:  # cancelled, or out of time: no sipp is left behind
        if process.returncode is None:
            process.kill()
        await process.wait()
        raise
    errors = scenario_file.with_suffix(".errors")
    text = out.decode(errors="replace")[-3000:]
    if errors.exists():
        text += "\n" + errors.read_text()[-3000:]
    assert process.returncode is not None
    return SippRun(process.returncode, text)


@dataclass
class Stream:
    """Everything the gateway sent on one call (one SSRC)."""

    payload_type: int
    packets: list[tuple[float, RtpPacket]] = field(default_factory=list)

    def pcm16(self) -> bytes:
        decode = alaw_to_pcm16 if self.payload_type == 8 else ulaw_to_pcm16
        return b"".join(decode(p.payload) for _, p in self.packets)

    def voiced_seconds(self, threshold: int = 500) -> float:
        return float(self.voiced_frames(threshold).sum() * 0.02)

    def speech(self, threshold: int = 500, gap_s: float = 0.8) -> list[bytes]:
        return speech_stretches(self.pcm16(), threshold, gap_s)

    def voiced_frames(self, threshold: int = 500) -> np.ndarray:
        return voiced_frames(self.pcm16(), threshold)

    def halves_of_a_repeat(self) -> tuple[Stream, Stream]:
        """A reply said twice after the greeting, each on its own. The greeting is the
        first stretch of voice, up to a second of silence (the caller's own words make
        one); the rest is cut where half of its voiced frames are behind, in the middle
        of the silence there. The reply and its repeat are the same audio, so that silence
        is the gap between them: however long the gap, wherever the sender's clock and
        this stream's first packet stand from each other, and whatever silence a stalled
        synthesis put inside either."""
        assert all(len(p.payload) == 160 for _, p in self.packets)  # one 20 ms frame each
        voiced = np.flatnonzero(self.voiced_frames())
        gaps = np.flatnonzero(np.diff(voiced) >= 50)
        assert gaps.size, "no second of silence after the greeting"
        replies = voiced[gaps[0] + 1 :]
        half = replies.size // 2
        assert half, "no reply after the greeting"
        cut = int(replies[half - 1] + replies[half]) // 2 + 1
        return Stream(self.payload_type, self.packets[:cut]), Stream(
            self.payload_type, self.packets[cut:]
        )


def voiced_frames(pcm16_8k: bytes, threshold: int = 500) -> np.ndarray:
    """Per 20 ms: does it carry speech (a peak above `threshold`)?"""
    samples = np.frombuffer(pcm16_8k, dtype="<i2")
    frames = samples[: samples.size // 160 * 160].reshape(-1, 160)
    return np.abs(frames.astype(np.int32)).max(axis=1) > threshold


def speech_stretches(pcm16_8k: bytes, threshold: int = 500, gap_s: float = 0.8) -> list[bytes]:
    """The stretches of speech in 8 kHz audio, split at silences of `gap_s` or more."""
    voiced = np.flatnonzero(voiced_frames(pcm16_8k, threshold))
    if voiced.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(voiced) > gap_s / 0.02)
    starts = np.concatenate(([voiced[0]], voiced[breaks + 1]))
    ends = np.concatenate((voiced[breaks], [voiced[-1]])) + 1
    return [pcm16_8k[a * 320 : b * 320] for a, b in zip(starts, ends, strict=True)]


class Capture(asyncio.DatagramProtocol):
    """Where the caller's phone would listen: the gateway's RTP, per SSRC."""

    def __init__(self) -> None:
        self.streams: dict[int, Stream] = {}
        self.junk = 0
        self.transport: asyncio.DatagramTransport | None = None
        self._arrived = asyncio.Event()

    @classmethod
    async def open(cls) -> Capture:
        loop = asyncio.get_running_loop()
        transport, capture = await loop.create_datagram_endpoint(cls, local_addr=("127.0.0.1", 0))
        capture.transport = transport
        return capture

    @property
    def port(self) -> int:
        assert self.transport is not None
        return self.transport.get_extra_info("sockname")[1]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            packet = parse_rtp(data)
        except BadPacket:
            self.junk += 1
            return
        stream = self.streams.setdefault(packet.ssrc, Stream(packet.payload_type))
        stream.packets.append((asyncio.get_running_loop().time(), packet))
        self._arrived.set()

    async def until(self, condition: Callable[[Capture], bool]) -> None:
        """Wait for packets until `condition` holds; the caller bounds the wait."""
        while not condition(self):
            self._arrived.clear()
            await self._arrived.wait()

    def latest(self) -> Stream:
        """The stream of the call answered last."""
        return list(self.streams.values())[-1]

    def only(self) -> Stream:
        assert len(self.streams) == 1, f"{len(self.streams)} RTP streams"
        return next(iter(self.streams.values()))

    def send(self, data: bytes, address: tuple[str, int]) -> None:
        assert self.transport is not None
        self.transport.sendto(data, address)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
