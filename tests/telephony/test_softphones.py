"""Real softphones call the gateway: baresip and linphonec from Debian, headless on
loopback (tests/telephony/softphones.py).

For each: the call is answered; the greeting and the reply are transcribed from the
softphone's own recording, and the caller's question from the gateway's side; a key
pressed on the softphone reaches the gateway as RFC 2833; the softphone holds and resumes
with re-INVITEs; and either side hangs up.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import pytest

from telephony import CallSummary
from tests.voice.speech import names, piper, silence
from voice.resample import resample
from web.call_events import CallEvent, TransferRequested, TurnTaken

from .conftest import Phone
from .sipp import speech_stretches
from .softphones import Baresip, Linphonec, write_wav

E = TypeVar("E", bound=CallEvent)

PHONES = {"baresip": Baresip, "linphonec": Linphonec}
QUESTION = "Do you have any ibuprofen?"


def caller_voice(path: Path) -> Path:
    """Quiet while the greeting plays, the question, then quiet for the rest of the call
    (baresip hangs up when its file ends; linphonec plays it again)."""
    pcm = silence(7.0) + piper(QUESTION) + silence(90.0)
    return write_wav(path, resample(pcm, 16000, 8000))


async def heard(stt, pcm16_8k: bytes) -> str:
    texts = [
        (await stt.transcribe(resample(stretch, 8000, 16000))).text
        for stretch in speech_stretches(pcm16_8k)
    ]
    return " ".join(texts).lower()


async def call_event(events, kind: type[E]) -> E:
    async with asyncio.timeout(60):
        async for event in events:
            if isinstance(event, kind):
                return event
    raise AssertionError("the event stream ended")


@pytest.fixture(params=sorted(PHONES))
async def softphone(request, tmp_path) -> AsyncIterator[Baresip | Linphonec]:
    started = await PHONES[request.param].start(
        tmp_path / request.param, caller_voice(tmp_path / "voice.wav")
    )
    try:
        yield started
    finally:
        await started.stop()


async def converse(phone: Phone, softphone: Baresip | Linphonec, uri: str, stt) -> CallSummary:
    """Every cell of the interop table but the gateway's hang-up, on one call to `uri`."""
    with phone.services.engine.bus.subscribe() as events:
        await softphone.dial(uri)
        turn = await call_event(events, TurnTaken)  # the question heard, the reply sent
        assert names(turn.transcript, "Ibuprofen")
        await softphone.hold()
        await softphone.resume()
        await softphone.dtmf("0")  # after the resume: the call still carries keys
        await call_event(events, TransferRequested)
        await softphone.hangup()
    [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 30)
    assert summary.ended_by == "caller"
    assert summary.holds == 1
    assert summary.dtmf == ("0",)
    assert summary.bad_packets == 0  # linphonec's STUN probes are not counted as bad RTP
    said = await heard(stt, softphone.heard())
    assert "riverside pharmacy" in said  # the greeting, as the softphone recorded it
    assert "ibuprofen" in said.split("riverside pharmacy", 1)[1]  # and the reply after it
    return summary


async def test_a_softphone_talks_presses_a_key_holds_resumes_and_hangs_up(
    phone: Phone, softphone: Baresip | Linphonec, stt
) -> None:
    summary = await converse(phone, softphone, f"sip:pharmacy@{phone.target}", stt)
    assert summary.client_id == "sip-caller"


async def test_the_gateway_hangs_up_on_a_softphone(
    phone: Phone, softphone: Baresip | Linphonec
) -> None:
    await softphone.dial(f"sip:pharmacy@{phone.target}")
    await phone.endpoint.stop()  # shutting down hangs up live calls with a BYE
    if isinstance(softphone, Baresip):
        closed = await softphone.event("CALL_CLOSED")
        assert "peer" in closed.param.lower()
    else:
        await softphone.hung_up_by_peer()
    [summary] = phone.endpoint.finished
    assert summary.ended_by == "shutdown"
