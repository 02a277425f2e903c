"""A line's quiet: silence when the phone stopped sending, not when its packets were
held up (telephony/quiet.py), alone and on a call from a phone of each kind."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from sqlmodel import Session, select

from models.tables import TurnRow
from telephony.quiet import LATE_S, SUPPRESSED_S, LineQuiet, is_loud
from tests.voice.speech import names, piper
from voice.codecs import pcm16_to_ulaw
from voice.resample import resample

from .test_call_lifecycle import REPLY_STARTED, quiet_after_voice, replied, ulaw, voiced_packets
from .uac import Call

RATE = 8000
PACKET = 160  # 20 ms


def talk(
    quiet: LineQuiet, start: float, packets: int, timestamp: int, *, loud: bool = False
) -> tuple[float, int]:
    """`packets` sent 20 ms apart from `start`, each on time and after the last: when
    the last one came, and the timestamp the next one would carry."""
    for n in range(packets):
        stamp = (timestamp + n * PACKET) % 2**32
        assert quiet.packet(start + n * 0.02, stamp, PACKET, loud=loud) == 0.0
    return start + (packets - 1) * 0.02, (timestamp + packets * PACKET) % 2**32


def frames(seconds: float) -> int:
    """Samples in `seconds` of whole 20 ms frames."""
    return round(seconds / 0.02) * PACKET


def test_packets_held_up_for_less_than_the_wait_are_no_silence() -> None:
    quiet = LineQuiet(RATE, 0.0)
    last, stamp = talk(quiet, 0.0, 10, 0)
    # Nothing for a quarter of a second, looked at every 0.1 s as the call does.
    assert [quiet.due(last + t) for t in (0.1, 0.2, 0.25)] == [0, 0, 0]
    # Then the held-up packets, where the last left off.
    assert quiet.packet(last + 0.26, stamp, PACKET) == 0.0
    assert quiet.stalls == 0 and not quiet.suppresses


def test_a_phone_that_stops_sending_is_heard_as_silence_all_of_it() -> None:
    quiet = LineQuiet(RATE, 0.0)
    last, stamp = talk(quiet, 0.0, 10, 0)
    assert quiet.due(last + LATE_S - 0.01) == 0
    # Once the wait is over, the whole quiet at once: a turn ends when it would have.
    assert quiet.due(last + LATE_S + 0.01) == frames(LATE_S)
    assert quiet.due(last + LATE_S + 0.01) == 0  # given once
    assert quiet.due(last + 1.0) == frames(1.0) - frames(LATE_S)
    # It speaks again, its clock moved on by the quiet: it suppresses silence, and
    # was not held up.
    assert quiet.packet(last + 1.5, stamp + frames(1.48), PACKET) == 0.0
    assert quiet.suppresses and quiet.stalls == 0
    # From now on its quiet is silence sooner.
    last, stamp = talk(quiet, last + 1.52, 10, stamp + frames(1.5))
    assert quiet.due(last + SUPPRESSED_S + 0.01) == frames(SUPPRESSED_S)


def test_a_phone_that_suppresses_silence_still_waits_when_it_stops_mid_word() -> None:
    """A phone stops sending only once its caller has been quiet a while: quiet right
    after loud packets is more likely packets held up."""
    quiet = LineQuiet(RATE, 0.0)
    last, stamp = talk(quiet, 0.0, 10, 0)
    quiet.due(last + 1.0)
    last, stamp = talk(quiet, last + 1.0, 10, stamp + frames(0.98), loud=True)
    assert quiet.suppresses
    assert quiet.due(last + SUPPRESSED_S + 0.01) == 0
    assert quiet.due(last + LATE_S + 0.01) == frames(LATE_S)
    # Words, then a tenth of a second of quiet packets, then nothing: silence soon.
    last, stamp = talk(quiet, last + 1.0, 5, stamp + frames(0.98), loud=True)
    last, stamp = talk(quiet, last + 0.02, 6, stamp)
    assert quiet.due(last + SUPPRESSED_S + 0.01) == frames(SUPPRESSED_S)


def test_only_a_voice_is_loud() -> None:
    assert not is_loud(b"") and not is_loud(bytes(320))
    hiss = (np.random.default_rng(1).normal(0, 100, 160)).astype(np.int16).tobytes()
    word = (3000 * np.sin(np.arange(160) / 4)).astype(np.int16).tobytes()
    assert not is_loud(hiss) and is_loud(word)


def test_quiet_filled_in_that_was_packets_held_up_is_counted() -> None:
    quiet = LineQuiet(RATE, 0.0)
    last, stamp = talk(quiet, 0.0, 10, 0)
    assert quiet.due(last + 0.5) == frames(0.5)
    # The packets come: their timestamps go on from the last, so it was a stall.
    assert quiet.packet(last + 0.55, stamp, PACKET) == 0.5
    assert quiet.stalls == 1 and quiet.stalled_s == 0.5 and not quiet.suppresses
    # A packet lost within the next: the rest of the filling is counted.
    assert quiet.due(last + 0.55 + 0.44) == frames(0.44)
    stalled = quiet.packet(last + 1.0, stamp + 2 * PACKET, PACKET)
    assert stalled == pytest.approx(0.44 - 0.02)
    assert quiet.stalls == 2


def test_timestamps_wrap_and_sources_restart() -> None:
    quiet = LineQuiet(RATE, 0.0)
    # Across 2^32, a packet after the last is continuous.
    last, stamp = talk(quiet, 0.0, 3, 2**32 - PACKET)
    assert stamp == 2 * PACKET and not quiet.suppresses
    # A clock set anywhere else (another sipp file, another source) is no stall either.
    assert quiet.due(last + 0.5) == frames(0.5)
    assert quiet.packet(last + 0.5, 12345, PACKET) == 0.0
    assert quiet.suppresses and quiet.stalls == 0


def test_a_hold_is_no_quiet_of_the_callers() -> None:
    quiet = LineQuiet(RATE, 0.0)
    last, stamp = talk(quiet, 0.0, 10, 0)
    quiet.restart(last + 30.0)  # resumed after half a minute on hold
    assert quiet.quiet_s(last + 30.0) == 0.0
    assert quiet.due(last + 30.0 + LATE_S + 0.01) == frames(LATE_S)
    # Whatever the phone's clock says after the hold, it is no stall and no skip.
    assert quiet.packet(last + 30.4, stamp, PACKET) == 0.0
    assert quiet.stalls == 0 and not quiet.suppresses


async def answered(capture, call: Call, *, continuous: bool = False) -> asyncio.Task | None:
    """The call is answered and greeted. A `continuous` phone sends silence from the
    answer on, until the task returned is cancelled."""
    streams = len(capture.streams)
    answer = await asyncio.wait_for(call.invite(), 10)
    assert answer.startswith("SIP/2.0 200 OK"), answer
    line = asyncio.create_task(call.keep_sending()) if continuous else None
    await asyncio.wait_for(
        capture.until(lambda c: len(c.streams) > streams and quiet_after_voice(c.latest())), 20
    )
    return line


async def reply_over(phone, capture, client_id: str) -> None:
    """The reply to what was just said has been said, and the line is quiet again."""
    before = voiced_packets(capture.latest())
    await replied(phone, capture, client_id, before + REPLY_STARTED)
    await asyncio.wait_for(capture.until(lambda c: quiet_after_voice(c.latest())), 30)


def turns(phone, client_id: str) -> list[TurnRow]:
    with Session(phone.services.db) as s:
        query = select(TurnRow).where(TurnRow.client_id == client_id).order_by(TurnRow.id)
        return list(s.exec(query).all())


async def test_packets_held_up_mid_word_are_heard_as_they_were_said(
    phone, capture, peer, tts
) -> None:
    """A phone that sends all the time: packets held back a fifth of a second in the
    middle of "ibuprofen" add no pause to what is heard."""
    # Made before the call: Piper on this loop would hold up the phone's packets too.
    sentence = ulaw(tts, "Do you have any ibuprofen?")
    call = Call(peer, capture, phone.target, "+15550190")
    line = await answered(capture, call, continuous=True)
    assert line is not None
    try:
        await call.speak(sentence)
        await reply_over(phone, capture, "+15550190")
        await call.speak(sentence, held_up=(1.0, 0.2))
        await reply_over(phone, capture, "+15550190")
    finally:
        line.cancel()
    assert (await asyncio.wait_for(call.bye(), 5)).startswith("SIP/2.0 200 OK")
    [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    first, second = turns(phone, "+15550190")
    # Heard the same length: the 0.1-0.2 s a tick of silence would have put in is not.
    assert abs(second.speech_s - first.speech_s) <= 0.04, (first, second)
    assert summary.stalls == 0, summary
    assert names(first.transcript, "Ibuprofen") and names(second.transcript, "Ibuprofen")


async def test_a_phone_that_sends_nothing_while_quiet_is_answered_each_turn(
    phone, capture, peer, tts
) -> None:
    """Silence suppression: only the words are sent, and the clock moves on over the
    quiet. Every turn still ends, and none of the quiet is taken for a stall."""
    words = [
        pcm16_to_ulaw(resample(piper(text), 16000, 8000))
        for text in ("Do you have any ibuprofen?", "What about paracetamol?")
    ]
    call = Call(peer, capture, phone.target, "+15550191")
    await answered(capture, call)
    for said in words:
        await call.speak(said)
        await reply_over(phone, capture, "+15550191")
    assert (await asyncio.wait_for(call.bye(), 5)).startswith("SIP/2.0 200 OK")
    [summary] = await asyncio.wait_for(phone.endpoint.wait_finished(1), 10)
    assert summary.stalls == 0, summary
    first, second = turns(phone, "+15550191")
    assert names(first.transcript, "Ibuprofen") and names(second.transcript, "Paracetamol")
