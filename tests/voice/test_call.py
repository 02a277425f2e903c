"""The call runner both transports share (`voice.call.run_call`), on the fake engines
and a transport made of callables: the order of its life, and what no failure of the
world around a call may do to the caller."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from voice.call import CallLog, Finish, run_call
from voice.events import (
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    TurnMetricsEvent,
    VoiceEvent,
)
from voice.fakes import FakeSTT, FakeTTS, buzz, loud_is_speech
from voice.frames import AudioFrame
from voice.session import Responder, VoiceSession

from .speech import frames, silence

GREETING = "Hello, this is the bakery. What can I get you today?"
# A safety net for a broken runner, not a synchronisation: every wait is on an event.
WAIT_S = 20


class Baker:
    """A responder that answers every question the same way."""

    def __init__(self) -> None:
        self.cut: list[str] = []

    async def reply(self, text: str) -> AsyncIterator[str]:
        yield "Yes, baked fresh this morning."

    async def interrupted(self, spoken: str) -> None:
        self.cut.append(spoken)


class Port:
    """A `CallPort` that writes down what it is asked, in one order with the line's."""

    def __init__(
        self,
        order: list[str],
        *,
        refuse_start: bool = False,
        refuse_greeting: bool = False,
        refuse_finish: bool = False,
    ) -> None:
        self.order = order
        self.refuse_start, self.refuse_greeting = refuse_start, refuse_greeting
        self.refuse_finish = refuse_finish
        self.turns: list[TurnMetricsEvent] = []
        # Set: each turn's record waits for it, as on a slow database.
        self.database: asyncio.Event | None = None
        self.writing = asyncio.Event()  # a record has begun

    def responder(self, client_id: str) -> Responder:
        return Baker()

    async def greet(self, client_id: str) -> str:
        self.order.append(f"greet:{client_id}")
        if self.refuse_greeting:
            raise RuntimeError("the history is gone")
        return GREETING

    async def record_turn(self, client_id: str, event: TurnMetricsEvent) -> None:
        self.writing.set()
        if self.database is not None:
            await self.database.wait()
        self.order.append("record_turn")
        self.turns.append(event)

    async def started(self, client_id: str, voice: VoiceSession) -> Finish:
        self.order.append(f"started:{client_id}")
        if self.refuse_start:
            raise RuntimeError("the console's database is down")

        async def finish(ended_by: str) -> None:
            self.order.append(f"finish:{ended_by}")
            if self.refuse_finish:
                raise RuntimeError("the console's database is down")

        return finish


class Line:
    """The transport's side: what it delivered, and when it hung up."""

    def __init__(self, voice: VoiceSession, order: list[str], *, refuse: type | None = None):
        self.voice, self.order, self.refuse = voice, order, refuse
        self.delivered: list[VoiceEvent] = []
        self._seen: dict[type, asyncio.Event] = {}
        self._more = asyncio.Event()  # another event was delivered
        self.drained_at_hang_up: bool | None = None

    async def deliver(self, event: VoiceEvent) -> None:
        if self.refuse is not None and isinstance(event, self.refuse):
            self.refuse = None  # the first one only
            raise ConnectionError("the socket hiccupped")
        self.delivered.append(event)
        self.order.append(type(event).__name__)
        self._seen.setdefault(type(event), asyncio.Event()).set()
        self._more.set()

    async def until(self, kind: type, count: int = 1) -> None:
        """Until `count` events of `kind` have been delivered."""
        await asyncio.wait_for(self._seen.setdefault(kind, asyncio.Event()).wait(), WAIT_S)
        async with asyncio.timeout(WAIT_S):
            while sum(isinstance(e, kind) for e in self.delivered) < count:
                self._more.clear()
                await self._more.wait()

    def hang_up(self, ended_by: str) -> None:
        self.order.append(f"hang_up:{ended_by}")
        self.drained_at_hang_up = self.voice.events.empty()


def session(stt: FakeSTT, tts: FakeTTS, port: Port, *, realtime: bool = False) -> VoiceSession:
    return VoiceSession(
        "caller-1",
        port.responder("caller-1"),
        stt=stt,
        tts=tts,
        realtime=realtime,
        gauge=loud_is_speech,
    )


LOG = CallLog(logging.getLogger("tests.voice.call"), "call", "call_id=c-1")


def logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOG.logger.name]


def forwarders() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("call-out-")]


class Rig:
    """One call's fakes, wired as a transport wires them, and `run_call` over them."""

    def __init__(
        self,
        heard: list[str] | None = None,
        *,
        realtime: bool = False,
        refuse: type | None = None,
        **port: bool,
    ) -> None:
        self.order: list[str] = []
        self.stt, self.tts = FakeSTT(heard or []), FakeTTS()
        self.port = Port(self.order, **port)
        self.voice = session(self.stt, self.tts, self.port, realtime=realtime)
        self.line = Line(self.voice, self.order, refuse=refuse)

    async def run(
        self,
        receive: Callable[[], Awaitable[None]],
        ended_by: str = "caller",
        *,
        hang_up: bool = True,
        greet: bool = True,
    ) -> str:
        return await run_call(
            self.voice,
            self.port,
            receive=receive,
            deliver=self.line.deliver,
            ended_by=lambda: ended_by,
            hang_up=self.line.hang_up if hang_up else None,
            log=LOG,
            greet=greet,
        )


async def test_a_call_is_listed_greeted_answered_and_closed_in_that_order() -> None:
    rig = Rig(["Do you have rye bread?"])
    order, voice, line = rig.order, rig.voice, rig.line

    async def receive() -> None:
        order.append("receive")
        await line.until(ReplyDoneEvent)  # the greeting was said
        for chunk in frames(silence(0.5) + buzz(1.5, pitch=180.0) + silence(1.0)):
            await voice.push(AudioFrame(chunk, 16000))
        await line.until(TurnMetricsEvent)  # the caller's turn was answered

    ended_by = await rig.run(receive)

    assert ended_by == "caller"
    assert order[:3] == ["started:caller-1", "greet:caller-1", "receive"]
    # The fake voice speaks a sentence at a time.
    assert " ".join(rig.tts.spoken) == f"{GREETING} Yes, baked fresh this morning."
    done = [e.text for e in line.delivered if isinstance(e, ReplyDoneEvent)]
    assert done == [GREETING, "Yes, baked fresh this morning."]
    # The turn was recorded before the transport saw it.
    [turn] = rig.port.turns
    assert turn.transcript == "Do you have rye bread?"
    assert order.index("record_turn") == order.index("TurnMetricsEvent") - 1
    assert order[-2:] == ["hang_up:caller", "finish:caller"]
    assert line.drained_at_hang_up and not forwarders()


async def test_the_shutdown_runs_in_order_when_the_receive_loop_fails() -> None:
    # In real time: the greeting is still playing when the line fails.
    rig = Rig(realtime=True)
    order, voice, line = rig.order, rig.voice, rig.line

    async def receive() -> None:
        await line.until(ReplyAudioEvent)
        raise ConnectionResetError("the line dropped")

    with pytest.raises(ConnectionResetError):
        await rig.run(receive, "gateway")

    # Closing the voice cut the greeting; that event was delivered before the hang-up,
    # then the console heard who ended the call, and nothing came after.
    assert "ReplyDoneEvent" not in order
    cut = order.index("InterruptedEvent")
    assert order[cut + 1 :] == ["hang_up:gateway", "finish:gateway"]
    [interrupted] = [e for e in line.delivered if isinstance(e, InterruptedEvent)]
    assert GREETING.startswith(interrupted.spoken)
    assert line.drained_at_hang_up and not forwarders()
    await voice.push(AudioFrame(buzz(0.5), 16000))  # closed: ignored, nothing is heard
    assert voice.events.empty() and rig.stt.heard == []


async def test_a_console_that_cannot_list_the_call_does_not_drop_the_caller(caplog) -> None:
    rig = Rig(refuse_start=True)
    order = rig.order

    async def receive() -> None:
        order.append("receive")
        await rig.line.until(ReplyDoneEvent)

    ended_by = await rig.run(receive)

    assert ended_by == "caller" and " ".join(rig.tts.spoken) == GREETING
    assert order[:3] == ["started:caller-1", "greet:caller-1", "receive"]
    # Nothing to finish: the console never had the call.
    assert order[-1] == "hang_up:caller" and not any(o.startswith("finish") for o in order)
    assert logged(caplog) == ["call_log_failed call_id=c-1"]


async def test_a_failed_greeting_is_logged_and_the_call_goes_on(caplog) -> None:
    rig = Rig(refuse_greeting=True)

    async def receive() -> None:
        rig.order.append("receive")

    await rig.run(receive, hang_up=False)

    assert rig.tts.spoken == [] and rig.line.delivered == []
    assert rig.order == ["started:caller-1", "greet:caller-1", "receive", "finish:caller"]
    assert logged(caplog) == ["call_greeting_failed call_id=c-1"]


async def test_a_resumed_call_is_not_greeted_again() -> None:
    rig = Rig()

    async def receive() -> None:
        rig.order.append("receive")

    ended_by = await rig.run(receive, "taken_over", hang_up=False, greet=False)

    assert ended_by == "taken_over" and rig.tts.spoken == []
    assert rig.order == ["started:caller-1", "receive", "finish:taken_over"]


async def test_an_event_or_a_finish_that_fails_does_not_stop_the_call(caplog) -> None:
    rig = Rig(refuse_finish=True, refuse=ReplyAudioEvent)

    async def receive() -> None:
        await rig.line.until(ReplyDoneEvent)

    ended_by = await rig.run(receive, hang_up=False)

    # The first audio frame was lost; the rest of the greeting still went out.
    assert ended_by == "caller" and rig.order[-1] == "finish:caller"
    assert any(isinstance(e, ReplyAudioEvent) for e in rig.line.delivered)
    assert logged(caplog) == [
        "call_event_failed call_id=c-1",
        "call_log_failed call_id=c-1",
    ]


async def test_a_slow_turns_table_does_not_hold_back_the_next_reply() -> None:
    """Each turn's metrics are written to the database; a slow write (a busy SQLite
    retried, a failover) goes on beside the call, and the transport sees the metrics
    once it is done."""
    rig = Rig(["Do you have rye bread?", "And white bread?"])
    rig.port.database = asyncio.Event()
    voice, line = rig.voice, rig.line

    async def say(pitch: float) -> None:
        for chunk in frames(silence(1.0) + buzz(1.2, pitch=pitch) + silence(1.0)):
            await voice.push(AudioFrame(chunk, 16000))

    async def receive() -> None:
        await line.until(ReplyDoneEvent)  # the greeting
        await say(180.0)
        await asyncio.wait_for(rig.port.writing.wait(), WAIT_S)  # the first turn's record
        await say(230.0)
        await line.until(ReplyDoneEvent, count=3)  # both answered, the record still waiting
        assert not any(isinstance(e, TurnMetricsEvent) for e in line.delivered)
        rig.port.database.set()
        await line.until(TurnMetricsEvent, count=2)

    await rig.run(receive)

    assert [t.transcript for t in rig.port.turns] == ["Do you have rye bread?", "And white bread?"]
    # Each turn's metrics reached the transport after its record.
    assert rig.order.index("record_turn") < rig.order.index("TurnMetricsEvent")


async def test_a_session_that_fails_to_close_still_hangs_up_and_tells_the_console(
    caplog,
) -> None:
    rig = Rig()

    async def broken_close() -> None:
        raise RuntimeError("the history could not be revised")

    rig.voice.close = broken_close  # type: ignore[method-assign]

    async def receive() -> None:
        await rig.line.until(ReplyDoneEvent)

    assert await rig.run(receive) == "caller"
    assert rig.order[-2:] == ["hang_up:caller", "finish:caller"]
    assert "call_close_failed call_id=c-1" in logged(caplog)
    assert not forwarders()
