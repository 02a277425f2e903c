"""The seed's session socket: each text message in gets the swarm's reply out.

Same per-client session as voice, so a caller can type and talk in one conversation.
"""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from models.calls import Channel
from swarm import SwarmError
from voice.session import TURN_FAILED
from web.callers import socket_caller
from web.deps import GatewayDep
from web.ids import web_client_id

log = logging.getLogger("web.text")
router = APIRouter()


@router.websocket("/api/v1/session/{client_id}")
async def session_socket(websocket: WebSocket, gateway: GatewayDep, client_id: str) -> None:
    if not web_client_id(client_id):
        await websocket.close(code=1008, reason="invalid client id")
        return
    given = await socket_caller(websocket, client_id)
    if given is None:
        return
    client_id = given
    await websocket.accept()
    session = gateway.engine.session(client_id, gateway.swarm)
    call = await gateway.calls.open(client_id, Channel.WEB, speak=websocket.send_text)
    log.info("text_connected client_id=%s call_id=%s", client_id, call.id)
    try:
        while True:
            received = await websocket.receive()
            if received["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(received.get("code", 1000))
            message = received.get("text")
            if message is None:
                await websocket.send_text("error: this socket takes text messages")
                continue
            if len(message) > gateway.max_text_message:
                await websocket.send_text(
                    f"error: message too long ({len(message)} > {gateway.max_text_message} chars)"
                )
                continue
            # A NUL means nothing in words, and PostgreSQL refuses it in every query.
            message = message.replace("\x00", "")
            if not message.strip():
                continue
            if await gateway.calls.to_operator(client_id, message):
                continue  # they answer, by typing to this socket
            call.turn = turn = asyncio.ensure_future(session.complete(message))
            try:
                await asyncio.wait({turn})
            finally:
                turn.cancel()  # this socket's own task cancelled: the turn goes with it
                call.turn = None
            if turn.cancelled():
                continue  # an operator took over: they answer
            try:
                await websocket.send_text(turn.result())
            except SwarmError as exc:
                log.error("text_turn_failed client_id=%s error=%r", client_id, exc)
                # The error names internals (a session, a host): the log has it.
                await websocket.send_text(f"error: {TURN_FAILED}")
    except WebSocketDisconnect:
        log.info("text_disconnected client_id=%s", client_id)
    finally:
        await gateway.calls.close(call, ended_by="caller")
