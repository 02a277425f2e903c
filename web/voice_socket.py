"""`/ws/voice/{client_id}`: push-to-talk audio in, events and reply audio out.

The protocol is in docs/protocol.md. One receiver reads the caller, one sender
forwards the voice session's events (the call around them, from greeting to
shutdown, is `voice.call.run_call`'s); bad input gets an `error` event and the
session carries on. A new connection with the same client id resumes the same
swarm session (its history is sent in `ready`) and takes over from an older socket.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from models.calls import Channel
from swarm import Mode, Role, Session
from voice.call import CallLog, Finish, run_call
from voice.events import (
    ErrorEvent,
    InterruptedEvent,
    ReplyAudioEvent,
    ReplyDoneEvent,
    ReplyTextEvent,
    SpeechEndedEvent,
    SpeechStartedEvent,
    TranscriptEvent,
    TurnMetricsEvent,
    VoiceEvent,
)
from voice.frames import SUPPORTED_RATES, AudioFrame
from voice.session import Responder, VoiceSession
from web.callers import socket_caller
from web.deps import GatewayDep
from web.gateway import Gateway, VoiceEngines
from web.ids import web_client_id

log = logging.getLogger("web.voice")
router = APIRouter()

OUTPUT_RATE = 16000
# Socket close codes (4000-4999 are the application's).
CLOSE_TAKEN_OVER = 4001


class ProtocolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class Connections:
    """The live socket per client id, so a reconnect takes over cleanly."""

    def __init__(self) -> None:
        self._live: dict[str, VoiceConnection] = {}

    async def take(self, connection: VoiceConnection) -> None:
        old = self._live.get(connection.client_id)
        self._live[connection.client_id] = connection
        if old is not None:
            await old.close(CLOSE_TAKEN_OVER, "taken over by a new connection")

    def release(self, connection: VoiceConnection) -> None:
        if self._live.get(connection.client_id) is connection:
            del self._live[connection.client_id]


@router.websocket("/ws/voice/{client_id}")
async def voice_socket(websocket: WebSocket, gateway: GatewayDep, client_id: str) -> None:
    if not web_client_id(client_id):
        await websocket.close(code=1008, reason="invalid client id")
        return
    if not gateway.warming.has_voice:
        await websocket.close(code=1011, reason="voice is not enabled on this gateway")
        return
    connections: Connections = websocket.app.state.voice_connections
    given = await socket_caller(websocket, client_id)
    if given is None:
        return
    client_id = given
    await websocket.accept()
    try:
        engines = await _engines(websocket, gateway, client_id)
    except RuntimeError as exc:
        log.error("voice_unavailable client_id=%s error=%s", client_id, exc)
        await websocket.close(code=1011, reason="voice could not be loaded")
        return
    connection = VoiceConnection(websocket, gateway, client_id, engines)
    await connections.take(connection)
    try:
        await connection.run()
    except WebSocketDisconnect:
        log.info("voice_left_while_warming client_id=%s", client_id)
    finally:
        connections.release(connection)


async def _engines(websocket: WebSocket, gateway: Gateway, client_id: str) -> VoiceEngines:
    """The loaded engines; a caller who came during the warm-up is told, and waits. What
    they send meanwhile (their `start`) stays queued in the socket until then."""
    readiness = gateway.warming.readiness()
    if not readiness.voice:
        log.info("voice_waits_for_warm_up client_id=%s", client_id)
        await websocket.send_text(json.dumps({"type": "warming", "stages": dict(readiness.stages)}))
    return await gateway.warming.voice()


@dataclass(frozen=True)
class BrowserPort:
    """A browser call's view of the gateway: a `voice.call.CallPort` over the caller's
    swarm session (the connection's own: a take-over may end the old one's meanwhile)."""

    gateway: Gateway
    session: Session

    def responder(self, client_id: str) -> Responder:
        return self.gateway.calls.responder(client_id, self.gateway.responder(client_id))

    async def greet(self, client_id: str) -> str:
        # The greeting is part of the conversation: in the history, then spoken.
        await self.session.emit(self.gateway.greeting)
        return self.gateway.greeting

    async def record_turn(self, client_id: str, event: TurnMetricsEvent) -> None:
        await self.gateway.record_turn(client_id, event)

    async def started(self, client_id: str, voice: VoiceSession) -> Finish:
        calls = self.gateway.calls
        call = await calls.open(client_id, Channel.WEB, voice=voice)

        async def finish(ended_by: str) -> None:
            await calls.close(call, ended_by=ended_by)

        return finish


class VoiceConnection:
    def __init__(
        self, websocket: WebSocket, gateway: Gateway, client_id: str, engines: VoiceEngines
    ) -> None:
        self.websocket = websocket
        self.gateway = gateway
        self.client_id = client_id
        self.rate: int | None = None  # set by `start`
        self.session = gateway.engine.session(client_id, gateway.swarm)
        self.port = BrowserPort(gateway, self.session)
        self.voice = VoiceSession(
            client_id,
            self.port.responder(client_id),
            stt=engines.stt,
            tts=engines.tts,
            turn=engines.turn,
            output_rate=OUTPUT_RATE,
        )
        self._agent = ""
        self._send_lock = asyncio.Lock()
        self._gone = False  # the socket is closed: events are still handled, not sent
        self.ended_by = "caller"

    async def run(self) -> None:
        log.info("voice_connected client_id=%s", self.client_id)
        history = await self.session.get_raw_history()
        self._agent = await self.session.get_agent_name()
        await self._send(
            {
                "type": "ready",
                "client_id": self.client_id,
                "sample_rate": OUTPUT_RATE,
                "agent": self._agent,
                "resumed": bool(history),
                "history": [
                    {"role": m.role.value, "agent": m.agent, "text": m.content}
                    for m in history
                    # What was said aloud: not code's instructions, not bare tool calls.
                    if (m.role is Role.ASSISTANT or (m.role is Role.USER and m.mode is Mode.USER))
                    and m.content
                    and not m.tool_calls
                ],
            }
        )
        try:
            await run_call(
                self.voice,
                self.port,
                receive=self._receive,
                deliver=self._deliver,
                ended_by=lambda: self.ended_by,
                log=CallLog(log, "voice", f"client_id={self.client_id}"),
                # A resumed conversation was greeted when it began.
                greet=not history,
            )
        finally:
            log.info("voice_disconnected client_id=%s", self.client_id)

    async def close(self, code: int, reason: str) -> None:
        self.ended_by = "taken_over" if code == CLOSE_TAKEN_OVER else "gateway"
        if self.websocket.application_state is WebSocketState.CONNECTED:
            with suppress(RuntimeError, WebSocketDisconnect):
                await self.websocket.close(code=code, reason=reason)

    # --- caller → gateway ---------------------------------------------------------------

    async def _receive(self) -> None:
        while True:
            try:
                message = await self.websocket.receive()
            except RuntimeError:
                return  # closed from our side (taken over)
            if message["type"] == "websocket.disconnect":
                return
            try:
                if message.get("bytes") is not None:
                    await self._audio(message["bytes"])
                elif message.get("text") is not None:
                    await self._control(message["text"])
            except ProtocolError as exc:
                log.warning(
                    "voice_bad_input client_id=%s code=%s error=%s", self.client_id, exc.code, exc
                )
                await self._send({"type": "error", "code": exc.code, "message": str(exc)})

    async def _audio(self, data: bytes) -> None:
        if self.rate is None:
            raise ProtocolError("not_started", "send a start message before any audio")
        if len(data) > self.gateway.max_audio_message:
            raise ProtocolError(
                "too_large",
                f"an audio message is at most {self.gateway.max_audio_message} bytes, "
                f"got {len(data)}",
            )
        try:
            frame = AudioFrame(data, self.rate)
        except ValueError as exc:
            raise ProtocolError("bad_audio", str(exc)) from exc
        await self.voice.push(frame)

    async def _control(self, text: str) -> None:
        if len(text) > self.gateway.max_text_message:
            raise ProtocolError(
                "too_large", f"a text message is at most {self.gateway.max_text_message} characters"
            )
        try:
            message = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProtocolError("bad_message", f"not JSON: {exc.msg}") from exc
        except RecursionError as exc:
            # "[[[[…" a thousand deep fits in a message and took the socket down (the fuzz).
            raise ProtocolError("bad_message", "JSON nested too deep") from exc
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise ProtocolError("bad_message", 'a control message is an object with a "type"')
        kind = message["type"]
        if kind == "start":
            rate = message.get("sample_rate")
            if type(rate) is not int or rate not in SUPPORTED_RATES:
                raise ProtocolError(
                    "bad_sample_rate",
                    f"sample_rate must be one of {sorted(SUPPORTED_RATES)}, got {rate!r}",
                )
            if message.get("encoding", "pcm16") != "pcm16":
                raise ProtocolError("bad_encoding", "only pcm16 (little-endian, mono) is taken")
            self.rate = rate
            await self._send({"type": "started", "sample_rate": rate})
        elif kind == "release":
            await self.voice.end_of_speech()
        elif kind == "interrupt":
            await self.voice.interrupt()
        else:
            raise ProtocolError("unknown_type", f"unknown message type {kind!r}")

    # --- gateway → caller ---------------------------------------------------------------

    async def _deliver(self, event: VoiceEvent) -> None:
        if self._gone:
            return
        try:
            if isinstance(event, ReplyAudioEvent):
                async with self._send_lock:
                    await self.websocket.send_bytes(event.frame.pcm)
                return
            out = _describe(event)
            if out is not None:
                await self._send(out)
            if isinstance(event, (ReplyTextEvent, ReplyDoneEvent)):
                agent = await self.session.get_agent_name()
                if agent != self._agent:
                    self._agent = agent
                    await self._send({"type": "agent", "agent": agent})
        except (WebSocketDisconnect, RuntimeError):
            self._gone = True  # the receiver ends the connection

    async def _send(self, payload: dict[str, Any]) -> None:
        async with self._send_lock:
            await self.websocket.send_text(json.dumps(payload))


def _describe(event: VoiceEvent) -> dict[str, Any] | None:
    if isinstance(event, SpeechStartedEvent):
        return {"type": "listening"}
    if isinstance(event, SpeechEndedEvent):
        return {"type": "thinking", "speech_s": round(event.duration, 3)}
    if isinstance(event, TranscriptEvent):
        return {"type": "transcript", "text": event.text, "confidence": round(event.confidence, 3)}
    if isinstance(event, ReplyTextEvent):
        return {"type": "reply_text", "text": event.text}
    if isinstance(event, ReplyDoneEvent):
        return {"type": "reply_done", "text": event.text}
    if isinstance(event, InterruptedEvent):
        return {"type": "interrupted", "spoken": event.spoken}
    if isinstance(event, TurnMetricsEvent):
        metrics = event.metrics
        return {
            "type": "turn_metrics",
            "stt_s": metrics.stt_s,
            "first_token_s": metrics.first_token_s,
            "first_audio_s": metrics.first_audio_s,
            "voice_to_voice_s": metrics.voice_to_voice_s,
            "interrupted": metrics.interrupted,
        }
    if isinstance(event, ErrorEvent):
        return {"type": "error", "code": "turn_failed", "message": event.message}
    return None
