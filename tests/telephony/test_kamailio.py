"""A call through kamailio, acting as registrar and proxy as a PBX would."""

from __future__ import annotations

import asyncio
import glob
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from .conftest import Phone, start_phone
from .sipp import free_udp_port, scenario, sipp
from .softphones import Baresip
from .test_sipp_calls import caller_turns, heard, said_in_db, times_said
from .test_softphones import caller_voice, converse
from .uac import SipPeer, request

CONFIG = Path(__file__).parent / "kamailio" / "kamailio.cfg"


class Kamailio:
    def __init__(self, process: asyncio.subprocess.Process, port: int) -> None:
        self.process, self.port = process, port
        self.lines: list[str] = []
        self._changed = asyncio.Condition()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            async with self._changed:
                self.lines.append(line.decode(errors="replace").rstrip())
                self._changed.notify_all()

    async def logged(self, pattern: str) -> str:
        """The first log line matching `pattern`, once kamailio has written it."""
        found: list[str] = []

        def match() -> bool:
            found[:] = [line for line in self.lines if re.search(pattern, line)]
            return bool(found)

        async with self._changed:
            await self._changed.wait_for(match)
        return found[0]


MODULES = glob.glob("/usr/lib/*/kamailio/modules")


@asynccontextmanager
async def running(config: Path, port: int, folder: Path, *defines: str) -> AsyncIterator[Kamailio]:
    """kamailio in the foreground on `port`, answering SIP, until the block ends."""
    process = await asyncio.create_subprocess_exec(
        "kamailio",
        *("-f", str(config), "-DD", "-E", "-w", str(folder), "-Y", str(folder)),
        *("-P", str(folder / "kamailio.pid"), *defines),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    server = Kamailio(process, port)
    try:
        await asyncio.wait_for(ready(port), 20)
        yield server
    finally:
        process.terminate()
        await process.wait()


PASSWORD = "s3cret-pharmacy"


def configured(folder: Path) -> tuple[Path, int]:
    [modules] = MODULES
    port = free_udp_port()
    config = folder / "kamailio.cfg"
    text = CONFIG.read_text().replace("@PORT@", str(port)).replace("@MODULES@", modules)
    config.write_text(text.replace("@PASSWORD@", PASSWORD))
    return config, port


@pytest.fixture
async def kamailio(tmp_path) -> AsyncIterator[Kamailio]:
    config, port = configured(tmp_path)
    async with running(config, port, tmp_path) as server:
        yield server


@pytest.fixture
async def kamailio_with_auth(tmp_path) -> AsyncIterator[Kamailio]:
    config, port = configured(tmp_path)
    async with running(config, port, tmp_path, "-A", "WITH_AUTH") as server:
        yield server


async def ready(port: int) -> None:
    """kamailio answers SIP: an OPTIONS gets a response (404: nobody registered)."""
    peer = await SipPeer.open()
    try:
        while True:
            call_id = uuid.uuid4().hex
            probe = request(
                "OPTIONS",
                f"127.0.0.1:{port}",
                call_id=call_id,
                number="probe",
                local_port=peer.port,
                cseq=1,
            )
            peer.send(probe, f"127.0.0.1:{port}")
            try:
                await asyncio.wait_for(peer.final(call_id), 0.5)
                return
            except TimeoutError:
                continue  # not listening yet: ask again
    finally:
        peer.close()


async def test_a_call_through_kamailio_as_registrar_and_proxy(
    kamailio, capture, stt, tts, tmp_path
) -> None:
    # The gateway registers as "pharmacy" and callers dial pharmacy@kamailio.
    phone = await start_phone(
        tmp_path, stt, tts, server="127.0.0.1", server_port=kamailio.port, username="pharmacy"
    )
    try:
        await asyncio.wait_for(kamailio.logged(r"registered sip:pharmacy@"), 20)
        actions = caller_turns(tts, tmp_path, "PCMA", ["Do you have any ibuprofen?"])
        call = scenario(tmp_path, capture.port, "+15550180", actions, codecs="8 0")
        run = await sipp(call, f"127.0.0.1:{kamailio.port}")
        assert run.returncode == 0, run.output
        [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    finally:
        await phone.stop()
    # The INVITE and the BYE both went through kamailio, and so did the answers.
    await asyncio.wait_for(kamailio.logged(r"relaying INVITE for sip:pharmacy@127\.0\.0\.1"), 5)
    await asyncio.wait_for(kamailio.logged(r"relaying BYE"), 5)
    assert summary.codec == "PCMA" and summary.ended_by == "caller"
    assert "ibuprofen" in summary.transcripts[0].lower()
    assert any("ibuprofen" in m.lower() for m in said_in_db(phone.services.db, "+15550180"))
    words = await heard(stt, capture.only())
    assert times_said(words, "ibuprofen") >= 1, words


async def registering(kamailio: Kamailio, password: str, tmp_path, stt, tts) -> Phone:
    """A gateway that registers with kamailio as "pharmacy", with this password."""
    return await start_phone(
        tmp_path,
        stt,
        tts,
        server="127.0.0.1",
        server_port=kamailio.port,
        username="pharmacy",
        password=password,
    )


async def test_registered_with_a_password_and_called_by_a_softphone_through_kamailio(
    kamailio_with_auth, stt, tts, tmp_path
) -> None:
    kamailio = kamailio_with_auth
    phone = await registering(kamailio, PASSWORD, tmp_path, stt, tts)
    softphone = await Baresip.start(tmp_path / "baresip", caller_voice(tmp_path / "voice.wav"))
    try:
        # Challenged first, then let in on the digest of the right password.
        await asyncio.wait_for(kamailio.logged(r"challenged sip:pharmacy@"), 20)
        await asyncio.wait_for(kamailio.logged(r"authenticated sip:pharmacy@"), 20)
        await asyncio.wait_for(kamailio.logged(r"registered sip:pharmacy@"), 20)
        summary = await converse(phone, softphone, f"sip:pharmacy@127.0.0.1:{kamailio.port}", stt)
        # A second call, which the gateway ends: its BYE reaches the phone.
        await softphone.dial(f"sip:pharmacy@127.0.0.1:{kamailio.port}")
        await phone.endpoint.stop()
        closed = await softphone.event("CALL_CLOSED")
        assert "peer" in closed.param.lower()
        assert phone.endpoint.finished[-1].ended_by == "shutdown"
    finally:
        await softphone.stop()
        await phone.stop()
    await asyncio.wait_for(kamailio.logged(r"relaying INVITE for sip:pharmacy@127\.0\.0\.1"), 5)
    assert summary.client_id == "sip-caller"


async def test_a_wrong_password_is_refused_and_the_gateway_says_so(
    kamailio_with_auth, stt, tts, tmp_path
) -> None:
    kamailio = kamailio_with_auth
    phone = await registering(kamailio, "not-the-password", tmp_path, stt, tts)
    try:
        await asyncio.wait_for(kamailio.logged(r"challenged sip:pharmacy@"), 20)
        await asyncio.wait_for(phone.endpoint.registration_failed.wait(), 30)
        assert phone.endpoint.status != "REGISTERED"
    finally:
        await phone.stop()
    assert not any(re.search(r"registered sip:pharmacy@", line) for line in kamailio.lines)
