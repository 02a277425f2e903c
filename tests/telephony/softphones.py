"""Real softphones for the tests, started and driven headless on loopback.

- **baresip** 1.0 (Debian): the caller's voice is a WAV (`aufile`), what it hears is
  dumped to WAV (`sndfile`), and it is driven over `ctrl_tcp` (JSON in netstrings), whose
  events are awaited: nothing here sleeps to wait for the phone.
- **linphonec** 5.1 (Debian `linphone-cli`): driven over stdin, its state lines awaited
  on stdout. `soundcard use files` plays a WAV as the microphone and records what it
  hears. Its "No listening point matching" came from a database it could not open:
  `[storage] uri=null` starts it without one.

Both are bound to 127.0.0.1, and their SDP names 127.0.0.1 (baresip 1.0 binds its RTP
sockets to 0.0.0.0 whatever the config says; the traffic itself stays on loopback).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import socket
import wave
from dataclasses import dataclass
from pathlib import Path

from ..conftest import worker_ports
from .sipp import free_udp_port

# Each softphone's media ports, below the kernel's ephemeral range (32768 and up), where
# `free_udp_port` and every client socket draw theirs.
BARESIP_RTP = (27000, 27999)
LINPHONE_RTP = (28000, 28999)
# baresip's SIP port (it listens on UDP and TCP alike) and its control port, also below
# that range: a free UDP port from the kernel was once a TCP client's source port, and
# baresip failed to start ("Address already in use").
BARESIP_PORTS = (29000, 29999)

TIMEOUT_S = 30


def free_port(low: int, high: int, *, taken: tuple[int, ...] = ()) -> int:
    """A port of this worker's share of `low`-`high` free for both TCP and UDP now."""
    start, end = worker_ports(low, high)
    for port in random.sample(range(start, end + 1), end - start + 1):
        if port in taken:
            continue
        try:
            with (
                socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp,
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
            ):
                tcp.bind(("127.0.0.1", port))
                udp.bind(("127.0.0.1", port))
        except OSError:
            continue
        return port
    raise RuntimeError(f"no free port in {start}-{end}")


def write_wav(path: Path, pcm16_8k: bytes) -> Path:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(pcm16_8k)
    return path


def read_wav_loosely(path: Path) -> bytes:
    """16-bit samples after the data chunk: linphonec's header gives a wrong size."""
    raw = path.read_bytes()
    start = raw.find(b"data")
    assert start >= 0, f"{path} has no data chunk"
    data = raw[start + 8 :]
    return data[: len(data) // 2 * 2]


@dataclass
class Event:
    kind: str
    call_id: str
    param: str


class Baresip:
    """One baresip process: `dial`, `dtmf`, `hold`, `resume`, `hangup`, and its events."""

    def __init__(self, directory: Path, process: asyncio.subprocess.Process) -> None:
        self.directory = directory
        self.process = process
        self.recordings = directory / "rec"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._responses: asyncio.Queue[dict] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._stdout: asyncio.Task[None] | None = None
        self.log: list[str] = []

    @classmethod
    async def start(cls, directory: Path, voice: Path) -> Baresip:
        if shutil.which("baresip") is None:
            raise RuntimeError("baresip is not installed: `make system-deps` installs it")
        (directory / "rec").mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (a test's tmp dir)
        control = free_port(*BARESIP_PORTS)
        sip = free_port(*BARESIP_PORTS, taken=(control,))
        (directory / "accounts").write_text(
            "<sip:caller@127.0.0.1>;regint=0;answermode=auto;audio_codecs=PCMU,PCMA\n"
        )
        (directory / "config").write_text(
            "\n".join(
                [
                    "poll_method epoll",
                    f"sip_listen 127.0.0.1:{sip}",
                    "net_interface 127.0.0.1",  # else its SDP names another interface
                    "call_max_calls 4",
                    f"audio_source aufile,{voice}",
                    "audio_alert none",
                    "audio_level no",
                    "rtp_ports {}-{}".format(*worker_ports(*BARESIP_RTP)),
                    "rtcp_mux no",
                    "jitter_buffer_delay 5-10",
                    "module_path /usr/lib/baresip/modules",
                    "module g711.so",
                    "module sndfile.so",
                    "module aufile.so",
                    "module_tmp account.so",
                    "module_app menu.so",
                    "module_app ctrl_tcp.so",
                    f"ctrl_tcp_listen 127.0.0.1:{control}",
                    f"snd_path {directory / 'rec'}",
                    "statmode_default off",
                    "ringback_disabled yes",
                    "",
                ]
            )
        )
        process = await asyncio.create_subprocess_exec(
            "baresip",
            "-f",
            str(directory),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
        )
        phone = cls(directory, process)
        await phone._wait_ready()
        phone._reader, phone._writer = await asyncio.open_connection("127.0.0.1", control)
        phone._pump = asyncio.create_task(phone._read_control())
        return phone

    async def _wait_ready(self) -> None:
        assert self.process.stdout is not None
        async with asyncio.timeout(TIMEOUT_S):
            while True:
                line = (await self.process.stdout.readline()).decode(errors="replace")
                if not line:
                    raise RuntimeError("baresip exited:\n" + "".join(self.log))
                self.log.append(line)
                if "baresip is ready" in line:
                    break
        self._stdout = asyncio.create_task(self._drain_stdout())

    async def _drain_stdout(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.log.append(line.decode(errors="replace"))

    async def _read_control(self) -> None:
        assert self._reader is not None
        while True:
            length = await self._reader.readuntil(b":")
            body = await self._reader.readexactly(int(length[:-1]) + 1)
            message = json.loads(body[:-1])
            if message.get("event"):
                self._events.put_nowait(
                    Event(message.get("type", ""), message.get("id", ""), message.get("param", ""))
                )
            elif message.get("response"):
                self._responses.put_nowait(message)

    async def command(self, command: str, params: str | None = None) -> dict:
        assert self._writer is not None
        message = {"command": command, "token": command}
        if params is not None:
            message["params"] = params
        raw = json.dumps(message).encode()
        self._writer.write(b"%d:%s," % (len(raw), raw))
        await self._writer.drain()
        try:
            response = await asyncio.wait_for(self._responses.get(), TIMEOUT_S)
        except TimeoutError:
            raise AssertionError(f"baresip gave no answer to {command!r}: {self.state()}") from None
        assert response.get("ok"), (command, response)
        return response

    def state(self) -> str:
        """What a failure needs to be read: the reader task, the process and its log."""
        pump = self._pump
        if pump is None or not pump.done():
            reader = "reading"
        elif pump.cancelled():
            reader = "cancelled"
        else:
            reader = f"stopped on {pump.exception()!r}"
        log = "".join(self.log[-40:])
        code = self.process.returncode
        process = "running" if code is None else f"exited with {code}"
        return f"control reader {reader}, baresip {process}, log:\n{log}"

    async def event(self, *kinds: str) -> Event:
        """The next event of one of these kinds (the ones between are passed over)."""
        try:
            async with asyncio.timeout(TIMEOUT_S):
                while True:
                    event = await self._events.get()
                    if event.kind in kinds:
                        return event
        except TimeoutError:
            raise AssertionError(f"baresip sent no {kinds}: {self.state()}") from None

    async def dial(self, uri: str) -> Event:
        await self.command("dial", uri)
        return await self.event("CALL_ESTABLISHED")

    async def dtmf(self, keys: str) -> None:
        await self.command("sndcode", keys)

    async def hold(self) -> None:
        await self.command("hold")
        await self.event("CALL_REMOTE_SDP")  # the answer to its re-INVITE

    async def resume(self) -> None:
        await self.command("resume")
        await self.event("CALL_REMOTE_SDP")

    async def hangup(self) -> Event:
        await self.command("hangup")
        return await self.event("CALL_CLOSED")

    def heard(self) -> bytes:
        """What the phone received on its last call, 8 kHz PCM16."""
        [received] = sorted(self.recordings.glob("dump-*-dec.wav"))[-1:]
        with wave.open(str(received)) as audio:
            assert audio.getframerate() == 8000
            return audio.readframes(audio.getnframes())

    async def stop(self) -> None:
        for task in (self._pump, self._stdout):
            if task is not None:
                task.cancel()
        if self._writer is not None:
            self._writer.close()
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


LINPHONERC = """\
[sip]
sip_port={sip}
sip_tcp_port=0
sip_tls_port=0
bind_address=127.0.0.1
contact="caller" <sip:caller@127.0.0.1>
guess_hostname=0
use_ipv6=0
default_proxy=-1
register_only_when_network_is_up=0
use_rfc2833=1
use_info=0

[rtp]
audio_rtp_port={rtp_low}-{rtp_high}
bind_address=127.0.0.1

[sound]
echocancellation=0

[video]
capture=0
display=0
automatically_initiate=0
automatically_accept=0

[storage]
uri=null
call_logs_db_uri=null
zrtp_secrets_db_uri=null

[misc]
add_missing_audio_codecs=0
add_missing_video_codecs=0

[audio_codec_0]
mime=PCMU
rate=8000
channels=1
enabled=1

[audio_codec_1]
mime=PCMA
rate=8000
channels=1
enabled=1
"""


class Linphonec:
    """One linphonec process, driven by its command line."""

    def __init__(self, directory: Path, process: asyncio.subprocess.Process) -> None:
        self.directory = directory
        self.process = process
        self.recording = directory / "heard.wav"
        self.output = ""
        self._seen = 0
        self._changed = asyncio.Event()
        self._pump = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, directory: Path, voice: Path) -> Linphonec:
        if shutil.which("linphonec") is None:
            raise RuntimeError("linphonec is not installed: `make system-deps` installs it")
        directory.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (a test's tmp dir)
        rc = directory / "linphonerc"  # linphonec rewrites it: a fresh one each start
        rtp_low, rtp_high = worker_ports(*LINPHONE_RTP)
        rc.write_text(LINPHONERC.format(sip=free_udp_port(), rtp_low=rtp_low, rtp_high=rtp_high))
        process = await asyncio.create_subprocess_exec(
            "linphonec",
            "-c",
            str(rc),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={"HOME": str(directory), "PATH": "/usr/bin:/bin"},
        )
        phone = cls(directory, process)
        await phone.send("soundcard use files", "Using wav files instead of soundcard")
        await phone.send(f"play {voice}")
        await phone.send(f"record {phone.recording}")
        return phone

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.output += chunk.decode(errors="replace")
            self._changed.set()

    async def wait_for(self, pattern: str) -> str:
        """The next output, from where the last wait stopped, that matches `pattern`
        (searched, not anchored: the prompt has no newline and sticks to lines)."""
        async with asyncio.timeout(TIMEOUT_S):
            while True:
                match = re.search(pattern, self.output[self._seen :])
                if match:
                    self._seen += match.end()
                    return match.group(0)
                if self.process.returncode is not None:
                    raise RuntimeError("linphonec exited:\n" + self.output[-2000:])
                self._changed.clear()
                await self._changed.wait()

    async def send(self, line: str, expect: str | None = None) -> str | None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")
        await self.process.stdin.drain()
        return await self.wait_for(expect) if expect else None

    async def dial(self, uri: str) -> None:
        await self.send(f"call {uri}", r"Media streams established with [^\n]* for call \d+")

    async def dtmf(self, keys: str) -> None:
        await self.send(keys)  # each key is sent as an RFC 2833 event

    async def hold(self) -> None:
        await self.send("pause", r"is now paused")

    async def resume(self) -> None:
        await self.send("resume", r"Media streams established")

    async def hangup(self) -> None:
        await self.send("terminate", r"ended")

    async def hung_up_by_peer(self) -> None:
        try:
            await self.wait_for(r"Call \d+ with [^\n]* ended")
        except TimeoutError:
            raise AssertionError("no hang-up seen:\n" + self.output[-3000:]) from None

    def heard(self) -> bytes:
        return read_wav_loosely(self.recording)

    async def stop(self) -> None:
        if self.process.returncode is None:
            try:
                await self.send("quit")
                await asyncio.wait_for(self.process.wait(), 10)
            except (TimeoutError, ConnectionError, BrokenPipeError):
                self.process.kill()
                await self.process.wait()
        self._pump.cancel()
