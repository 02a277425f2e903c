"""`callswarm serve`: the gateway under uvicorn, wired from one Settings object."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable

import uvicorn
from sqlmodel import Session as DbSession

from callswarm import __version__
from callswarm.app import Services, build_services
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder, TurnRecorder
from models.search import catalogue_vocabulary
from voice.stt import WhisperSTT, bundled_whisper
from voice.tts import PiperTTS, bundled_voice
from web import Gateway, create_app

log = logging.getLogger("callswarm.serve")


def voice_engines(services: Services) -> tuple[WhisperSTT, PiperTTS]:
    with DbSession(services.db) as db:
        vocabulary = catalogue_vocabulary(db)
    stt = WhisperSTT(bundled_whisper(), vocabulary=vocabulary)
    tts = PiperTTS(bundled_voice())
    stt.warm_up()
    tts.warm_up()
    return stt, tts


def make_gateway(
    services: Services, engines: tuple[WhisperSTT | None, PiperTTS | None] = (None, None)
) -> Gateway:
    """`engines`: the shared Whisper and Piper, or (None, None) for a text-only gateway."""
    stt, tts = engines
    recorder = TurnRecorder(services.db)
    engine, swarm = services.engine, services.swarm

    def responder(client_id: str) -> SwarmResponder:
        return SwarmResponder(engine.session(client_id, swarm))

    return Gateway(
        engine=engine,
        swarm=swarm,
        db=services.db,
        greeting=services.greeting,
        stt=stt,
        tts=tts,
        responder=responder,
        record_turn=lambda _client_id, event: recorder.record(event),
        info={
            "version": __version__,
            "providers": sorted(services.backends),
            "shop": services.settings.shop_name,
        },
    )


def listen(host: str, port: int) -> socket.socket:
    """Bind before serving, so the URL printed is already accepting connections."""
    return socket.create_server((host, port))


async def serve(settings: Settings, *, announce: Callable[[str], None] = print) -> None:
    services = build_services(settings)
    try:
        await services.warm_up()
        engines = voice_engines(services) if settings.voice else (None, None)
        app = create_app(make_gateway(services, engines))
        sock = listen(settings.host, settings.port)
        host, port = sock.getsockname()[:2]
        config = uvicorn.Config(app, log_config=None, lifespan="off", ws_max_size=1 << 20)
        server = uvicorn.Server(config)
        announce(f"callswarm serving on http://{host}:{port}/ (Ctrl-C to stop)")
        # uvicorn stops on SIGINT/SIGTERM: it stops accepting, closes the sockets
        # (callers' voice sessions close and keep what they committed), then returns.
        await server.serve(sockets=[sock])
    finally:
        await services.aclose()
        log.info("gateway_stopped")
