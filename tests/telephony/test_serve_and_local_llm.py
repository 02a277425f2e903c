"""A phone call end to end on the embedded model, and `callswarm serve --sip` as a process."""

from __future__ import annotations

import asyncio
import re
import signal
import sys

import httpx
import pytest

from callswarm.app import open_database
from callswarm.settings import Settings
from tests.conftest import worker_ports
from tests.test_cli import base_env
from tests.web.console import Sse

from .conftest import start_phone
from .sipp import free_udp_port, scenario, sipp
from .test_sipp_calls import caller_turns, heard, one_call, said_in_db, times_said


async def test_a_phone_call_on_the_embedded_model(capture, stt, tts, tmp_path, bundled_model):
    settings = Settings(
        data_dir=tmp_path, provider="local", local_model_path=bundled_model, idle_timeout=None
    )
    phone = await start_phone(tmp_path, stt, tts, settings)
    try:
        # The model takes seconds, not milliseconds: the caller listens longer.
        summary = await one_call(
            phone, capture, tts, tmp_path, "+15550160", ["Do you have any ibuprofen?"], listen_s=20
        )
    finally:
        await phone.stop()
    assert "ibuprofen" in summary.transcripts[0].lower()
    greeting, reply = summary.replies
    assert "ibuprofen" in reply.lower()
    assert said_in_db(phone.services.db, "+15550160")[-1] == f"assistant: {reply}"
    words = await heard(stt, capture.only())
    assert times_said(words, "ibuprofen") >= 1, words


# No underrun is a claim on real-time headroom: it needs the machine to itself.
@pytest.mark.solo
async def test_serve_sip_answers_calls_beside_the_web_and_stops_on_ctrl_c(
    capture, stt, tts, tmp_path
) -> None:
    sip_port = free_udp_port()
    rtp = worker_ports(29000, 29999)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "callswarm", "serve", "--port", "0", "--provider", "scripted"),
        *("--sip", "--sip-port", str(sip_port)),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=base_env(tmp_path)
        | {"CALLSWARM_RTP_PORT_LOW": str(rtp[0]), "CALLSWARM_RTP_PORT_HIGH": str(rtp[1])},
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        console = (await asyncio.wait_for(process.stdout.readline(), 120)).decode()
        url, token = re.search(
            r"(http://[\d.:]+/)console, token for this run: (\S+)", console
        ).groups()
        assert f"serving on {url}" in (await process.stdout.readline()).decode()
        # The web serves at once; the phone line opens once the voice is loaded.
        announced = (await asyncio.wait_for(process.stdout.readline(), 120)).decode()
        assert f"answering SIP on 127.0.0.1:{sip_port}" in announced, announced
        actions = caller_turns(tts, tmp_path, "PCMA", ["Do you have any ibuprofen?"])
        call = scenario(tmp_path, capture.port, "+15550170", actions, codecs="8 0")
        bearer = {"Authorization": f"Bearer {token}"}
        async with (
            httpx.AsyncClient(base_url=url, headers=bearer, timeout=60) as api,
            api.stream("GET", "/api/events") as events,
        ):
            run = await sipp(call, f"127.0.0.1:{sip_port}")
            assert run.returncode == 0, run.output
            # The phone call reached the console's stream, from start to end.
            seen = await Sse(events).until("call_ended")
            assert seen[0]["kind"] == "call_started" and seen[0]["data"]["channel"] == "sip"
            assert seen[0]["client_id"] == "+15550170"
            assert "turn" in {e["kind"] for e in seen}
            process.send_signal(signal.SIGINT)
            _out, errors = await asyncio.wait_for(process.communicate(), 60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    err = errors.decode()
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert "call_ended" in err and "sip_stopped" in err and "gateway_stopped" in err
    # Out of the collector's way before the first caller, and the caller heard no gap.
    assert "heap_settled" in err.split("sip_started")[0]
    assert re.search(r"call_ended .* underruns=0 ", err), err
    # What the caller said is in the gateway's database; what it said back was heard.
    db = open_database(Settings(data_dir=tmp_path))
    try:
        assert any("ibuprofen" in m.lower() for m in said_in_db(db, "+15550170"))
    finally:
        db.dispose()
    words = await heard(stt, capture.only())
    assert times_said(words, "ibuprofen") >= 1, words
