"""One voice call from answer to goodbye, whatever carries its audio.

A phone line (`telephony.call`) and a browser socket (`web.voice_socket`) differ in
how audio arrives and leaves; what a call does between them is the same, and lives
here once: the console is told the call is live, the caller is greeted, the
transport's receive loop runs, and then one shutdown, in this order:

1. the voice session closes (what was said stays committed; what was not is cut);
2. its last events (the cut turn's metrics among them) are handled, for up to 5 s;
3. the forwarder stops;
4. the transport hangs up its side, if it has one;
5. the console is told who ended the call.

The transport passes its own parts in as callables; the world beyond the call (the
caller's conversation, the console's record) comes in through a `CallPort`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Protocol

from voice.events import TurnMetricsEvent, VoiceEvent
from voice.session import Responder, VoiceSession

# Waiting longer for the last events would keep a line, or a socket, open for nothing.
DRAIN_S = 5.0

# Called once the call is over, with who ended it ("caller", "gateway", …).
Finish = Callable[[str], Awaitable[None]]


class CallPort(Protocol):
    """What a voice call needs from the world: the caller's conversation, seen as
    voice, and the operators' console. Keyed by the caller's client id, so one port
    may serve every call of a gateway."""

    def responder(self, client_id: str) -> Responder:
        """The caller's conversation, as their voice session answers from it."""
        ...

    def greet(self, client_id: str) -> Awaitable[str]:
        """Commits the greeting to the caller's history and returns its words."""
        ...

    def record_turn(self, client_id: str, event: TurnMetricsEvent) -> Awaitable[None]:
        """One voice turn's latencies, for the console and the turns table."""
        ...

    def started(self, client_id: str, voice: VoiceSession) -> Awaitable[Finish]:
        """The call is live (the console lists it); returns what to call when it is over."""
        ...


@dataclass(frozen=True)
class CallLog:
    """Where the runner's lines go: the transport's logger, its prefix and its key, so
    a call's lines read alike whoever wrote them. The lines are `<prefix>_log_failed`
    (the console's record), `<prefix>_greeting_failed`, `<prefix>_event_failed` and
    `<prefix>_close_failed`."""

    logger: logging.Logger
    prefix: str  # "call" on a phone line, "voice" from a browser
    key: str  # "call_id=…", "client_id=…"

    def failed(self, what: str) -> None:
        self.logger.exception("%s_%s_failed %s", self.prefix, what, self.key)


async def run_call(
    voice: VoiceSession,
    port: CallPort,
    *,
    receive: Callable[[], Awaitable[None]],
    deliver: Callable[[VoiceEvent], Awaitable[None]],
    ended_by: Callable[[], str],
    log: CallLog,
    greet: bool = True,
    hang_up: Callable[[str], None] | None = None,
) -> str:
    """Run one call over a transport, and return who ended it.

    `receive` feeds the caller's audio to `voice` and returns when the caller is gone;
    `deliver` takes each of the session's events to the caller, one at a time (turn
    metrics are recorded through `port` before it sees them, while later events go on);
    `ended_by` says who ended the call, asked once `voice` has closed; `hang_up` ends
    the transport's side, given that answer. Without `greet` (a browser resuming its conversation) nobody is greeted.
    A failure of `receive` is raised after the shutdown.
    """
    client_id = voice.session_id
    forwarder = asyncio.get_running_loop().create_task(
        _forward(voice, port, deliver, log), name=f"call-out-{client_id}"
    )
    finish: Finish | None = None
    try:
        try:
            finish = await port.started(client_id, voice)
        except Exception:
            # The caller is on the line: the console missing a call must not drop it.
            log.failed("log")
        if greet:
            await _greet(voice, port, log)
        await receive()
    finally:
        # Committed messages stay committed: closing cancels only what is unsaid.
        try:
            await voice.close()
        except Exception:
            # The rest of the shutdown must still run: the BYE, the console's record.
            log.failed("close")
        # The cut turn's metrics are among the last events: handle them, then stop.
        with suppress(TimeoutError):
            await asyncio.wait_for(voice.events.join(), DRAIN_S)
        forwarder.cancel()
        with suppress(asyncio.CancelledError):
            await forwarder
        by = ended_by()
        try:
            if hang_up is not None:
                hang_up(by)
        finally:
            if finish is not None:
                try:
                    await finish(by)
                except Exception:
                    log.failed("log")
    return by


async def _greet(voice: VoiceSession, port: CallPort, log: CallLog) -> None:
    try:
        greeting = await port.greet(voice.session_id)
    except Exception:
        # The caller is on the line: a failed greeting must not drop the call.
        log.failed("greeting")
        return
    await voice.say(greeting)


async def _forward(
    voice: VoiceSession,
    port: CallPort,
    deliver: Callable[[VoiceEvent], Awaitable[None]],
    log: CallLog,
) -> None:
    sending = asyncio.Lock()  # one event at a time to the transport
    records: asyncio.Queue[TurnMetricsEvent] = asyncio.Queue()

    async def send(event: VoiceEvent) -> None:
        try:
            async with sending:
                await deliver(event)
        except Exception:
            # One event that could not be handled must not silence the call.
            log.failed("event")

    async def record_then_send() -> None:
        while True:
            event = await records.get()
            try:
                try:
                    await port.record_turn(voice.session_id, event)
                except Exception:
                    log.failed("event")
                await send(event)
            finally:
                voice.events.task_done()

    # The turns table is written beside the call, in order, not before its next event: a
    # slow database (a busy SQLite retried, a PostgreSQL failover) must not hold the
    # reply's audio back. The transport sees a turn's metrics once they are written.
    recorder = asyncio.get_running_loop().create_task(
        record_then_send(), name=f"call-out-{voice.session_id}-turns"
    )
    try:
        while True:
            event = await voice.events.get()
            if isinstance(event, TurnMetricsEvent):
                records.put_nowait(event)
                continue
            try:
                await send(event)
            finally:
                voice.events.task_done()
    finally:
        recorder.cancel()
        with suppress(asyncio.CancelledError):
            await recorder
