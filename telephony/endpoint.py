"""The SIP endpoint: pyVoIP (adapted) on its threads, one `PhoneCall` per call on the loop."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from contextlib import suppress
from dataclasses import dataclass

from telephony.adapter import AdaptedCall, AdaptedPhone
from telephony.call import CallHooks, CallSummary, PhoneCall, caller_client_id
from voice.speech import SpeechToText, TextToSpeech
from voice.turn import EndOfTurn

log = logging.getLogger("telephony.endpoint")


@dataclass(frozen=True)
class SipConfig:
    host: str = "127.0.0.1"  # bound, and advertised in Contact and SDP
    port: int = 5070
    server: str = ""  # registrar or PBX; empty: no registration (behind a trusted proxy)
    server_port: int = 5060
    username: str = "callswarm"
    password: str = ""
    max_calls: int = 8
    rtp_ports: tuple[int, int] = (10000, 20000)
    rtp_timeout: float = 30.0  # no media for this long: the caller is gone without a BYE
    deregister_timeout: float = 2.0

    @property
    def register(self) -> bool:
        return bool(self.server)


class SipEndpoint:
    def __init__(
        self,
        config: SipConfig,
        hooks: CallHooks,
        *,
        stt: SpeechToText,
        tts: TextToSpeech,
        turn: EndOfTurn | None = None,
    ) -> None:
        self.config = config
        self.hooks = hooks
        self.stt, self.tts, self.turn = stt, tts, turn
        self.phone: AdaptedPhone | None = None
        self.live: dict[str, PhoneCall] = {}
        self.finished: deque[CallSummary] = deque(maxlen=1000)
        self._changed: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Set when the registrar refused us for good (a wrong password): no calls come.
        self.registration_failed = asyncio.Event()

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Condition()
        config = self.config
        self.phone = AdaptedPhone(
            host=config.host,
            port=config.port,
            server=config.server,
            server_port=config.server_port,
            username=config.username,
            password=config.password,
            register=config.register,
            max_calls=config.max_calls,
            rtp_ports=config.rtp_ports,
            on_call=self._on_call,
            deregister_timeout=config.deregister_timeout,
            on_failed=self._registration_refused,
        )
        await asyncio.to_thread(self.phone.start)
        log.info(
            "sip_started address=%s:%d registrar=%s max_calls=%d",
            config.host,
            config.port,
            f"{config.server}:{config.server_port}" if config.register else "none",
            config.max_calls,
        )

    @property
    def status(self) -> str:
        return "stopped" if self.phone is None else self.phone.get_status().value

    def _registration_refused(self) -> None:
        """pyVoIP's register thread: the event is the loop's, so it is set there."""
        assert self._loop is not None  # start() set it before making the phone that calls this
        self._loop.call_soon_threadsafe(self.registration_failed.set)

    def _on_call(self, call: AdaptedCall) -> None:
        """pyVoIP's call thread: the call runs on the loop; this thread waits for it,
        because pyVoIP treats a call whose thread has ended as dead."""
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(self._run(call), self._loop)
        try:
            future.result()
        except Exception:
            log.exception("call_failed call_id=%s", call.call_id)

    async def _run(self, call: AdaptedCall) -> None:
        assert self.phone is not None and self._changed is not None
        try:
            number = call.request.headers["From"].get("number")
            phone_call = PhoneCall(
                call,
                caller_client_id(number, call.call_id),
                self.hooks,
                stt=self.stt,
                tts=self.tts,
                turn=self.turn,
                rtp_timeout=self.config.rtp_timeout,
            )
        except Exception:
            # Refused, not left ringing: the caller hears busy and may try again.
            log.exception("call_setup_failed call_id=%s", call.call_id)
            with suppress(Exception):
                call.deny()
            self.phone.end(call)
            return
        self.live[call.call_id] = phone_call
        try:
            summary = await phone_call.run()
            self.finished.append(summary)
        finally:
            del self.live[call.call_id]
            self.phone.end(call)
            async with self._changed:
                self._changed.notify_all()

    async def wait_finished(self, count: int) -> list[CallSummary]:
        """Until `count` calls have finished; the caller bounds the wait."""
        assert self._changed is not None
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.finished) >= count)
        return list(self.finished)

    async def stop(self) -> None:
        """Hang up live calls (their messages are committed), then leave the SIP server."""
        if self.phone is None:
            return
        assert self._changed is not None
        for phone_call in list(self.live.values()):
            phone_call.hang_up("shutdown")
        async with self._changed:
            await self._changed.wait_for(lambda: not self.live)
        phone, self.phone = self.phone, None
        await asyncio.to_thread(phone.stop)
        log.info("sip_stopped")
