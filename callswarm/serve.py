"""`callswarm serve`: the gateway under uvicorn, wired from one Settings object."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path

import uvicorn
from sqlalchemy.engine import Engine as Database

from callswarm import __version__
from callswarm.app import Services, build_services
from callswarm.heap import settle_heap, unsettle_heap
from callswarm.retention import purge_periodically, retention
from callswarm.settings import Settings
from callswarm.voice_bridge import SwarmResponder, TurnRecorder, phone_hooks, turn_sink
from callswarm.warmup import Step, VoiceLoader, Warmup
from models.redact import Redaction
from telephony import SipConfig, SipEndpoint
from voice.stt import WhisperSTT, bundled_whisper, bundled_whisper_base
from voice.tts import PiperTTS, bundled_voice
from voice.turn import EndOfTurn, SmartTurn, installed_smart_turn
from voice.voiced import load_silero
from web import Gateway, create_app
from web.auth import OperatorAuth
from web.callers import CallerKeys
from web.gateway import VoiceEngines, Warm, Warming
from web.journal import Journal
from web.live import CallOptions, LiveCalls
from web.metrics import Metrics
from web.peers import PeerWatch

log = logging.getLogger("callswarm.serve")


def whisper_path(settings: Settings) -> Path:
    if settings.stt_model == "base":
        return bundled_whisper_base(settings.data_dir)
    return bundled_whisper()


def voice_loader(services: Services) -> VoiceLoader:
    """Piper first (the greeting needs it), then Whisper, then the end-of-turn model."""
    settings = services.settings

    def load(step: Step) -> VoiceEngines:
        def piper() -> PiperTTS:
            # onnxruntime's optimised graphs are kept: a restart loads them (0.3 s, not 1.3 s).
            tts = PiperTTS(bundled_voice(), cache_dir=settings.data_dir / "voice-cache")
            tts.warm_up()
            return tts

        def whisper() -> WhisperSTT:
            vocabulary = services.agency.vocabulary(services.db)
            stt = WhisperSTT(whisper_path(settings), vocabulary=vocabulary)
            stt.warm_up()
            # The second opinion on what is said over a reply ships in Whisper's wheel:
            # loaded here, no caller's first cough waits for it.
            load_silero()
            return stt

        tts = step("piper", piper)
        stt = step("whisper", whisper)
        return VoiceEngines(stt, tts, step("end_of_turn", lambda: end_of_turn(settings)))

    return load


def voice_engines(services: Services) -> VoiceEngines:
    """All loaded now, before serving: for benchmarks and tests."""
    return voice_loader(services)(lambda name, load: load())


def end_of_turn(settings: Settings) -> EndOfTurn | None:
    """Smart Turn when chosen and installed; otherwise a fixed silence ends turns."""
    if settings.end_of_turn != "model":
        return None
    path = installed_smart_turn(settings.data_dir)
    if path is None:
        log.warning(
            "turn_model_missing data_dir=%s fallback=silence hint='callswarm model install'",
            settings.data_dir,
        )
        return None
    model = SmartTurn(path)
    model.warm_up()
    return model


def operator_auth(settings: Settings, db: Database | None = None) -> OperatorAuth:
    """Sign-in from the settings; with neither token nor password, a fresh token that
    `serve` prints, so a console is never open to anyone who finds the port."""
    token = settings.operator_token.get_secret_value() if settings.operator_token else None
    password = settings.operator_password.get_secret_value() if settings.operator_password else None
    if not token and not password:
        token = secrets.token_urlsafe(18)
    secret = (
        settings.operator_secret.get_secret_value().encode()
        if settings.operator_secret
        else secrets.token_bytes(32)
    )
    return OperatorAuth(
        token=token, password=password, secret=secret, secure_cookie=settings.secure_cookies, db=db
    )


def caller_keys(settings: Settings) -> CallerKeys:
    """Browser callers' signing key: the setting, else one kept in the data folder (made
    on first use, readable by this user only), so a restart does not cut every browser
    caller off their session."""
    if settings.caller_secret:
        secret = settings.caller_secret.get_secret_value().encode()
    else:
        path = settings.data_dir / "caller-secret"
        path.parent.mkdir(parents=True, exist_ok=True)
        # Made once, by whichever gateway of the data folder comes first.
        with suppress(FileExistsError):
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
            with os.fdopen(os.open(path, flags, 0o600), "wb") as f:
                f.write(secrets.token_bytes(32))
        secret = path.read_bytes()
    return CallerKeys(
        secret=secret, secure_cookie=settings.secure_cookies, max_opens=settings.caller_max_opens
    )


def make_gateway(
    services: Services,
    engines: VoiceEngines | None = None,
    warming: Warming | None = None,
) -> Gateway:
    """`engines`: loaded voice engines, or None for a text-only gateway; `warming`
    instead: engines that load while the gateway serves (`serve`).

    Starts the console's journal, so it is called on the running event loop."""
    settings = services.settings
    engine, swarm = services.engine, services.swarm
    calls = live_calls(services)
    redaction = Redaction(settings.redact_transcripts)
    recorder = TurnRecorder(services.db, redaction=redaction)
    journal = Journal(services.db, engine.bus, calls.call_of, redaction=redaction)
    journal.start()
    metrics = Metrics(calls, engine)
    metrics.start()
    calls.end_lost_calls()  # after the journal and metrics listen: they count them
    # The timing hooks, all wired here. Histograms are thread-safe: Whisper and Piper
    # report from their worker threads.
    engine.on_completion = metrics.completion
    if engines is not None:
        time_engines(metrics, engines)

    def responder(client_id: str) -> SwarmResponder:
        return SwarmResponder(engine.session(client_id, swarm))

    return Gateway(
        engine=engine,
        swarm=swarm,
        db=services.db,
        greeting=services.greeting,
        responder=responder,
        record_turn=turn_sink(recorder, calls),
        calls=calls,
        journal=journal,
        auth=operator_auth(settings, services.db),
        callers=caller_keys(settings),
        metrics=metrics,
        heartbeat_s=settings.sse_heartbeat,
        warming=warming or Warm(engines),
        info={
            "version": __version__,
            # Providers, not backends: an agent's own backend is named by its address.
            "providers": sorted({name.partition(":")[0] for name in services.backends}),
            "shop": services.business.name,
            "agency": services.agency.name,
        },
    )


def time_engines(metrics: Metrics, engines: VoiceEngines) -> None:
    engines.stt.on_decode, engines.tts.on_synthesis = metrics.stt.observe, metrics.tts.observe
    if isinstance(engines.turn, SmartTurn):
        engines.turn.on_decision = metrics.turn.observe


def sip_config(settings: Settings) -> SipConfig:
    return SipConfig(
        host=settings.sip_host,
        port=settings.sip_port,
        server=settings.sip_server,
        server_port=settings.sip_server_port,
        username=settings.sip_username,
        password=settings.sip_password.get_secret_value(),
        max_calls=settings.sip_max_calls,
        rtp_ports=(settings.rtp_port_low, settings.rtp_port_high),
    )


def live_calls(services: Services) -> LiveCalls:
    settings = services.settings
    recordings = settings.data_dir / "recordings" if settings.record_calls else None
    return LiveCalls(
        services.db,
        services.engine,
        services.swarm,
        CallOptions(
            recordings=recordings,
            max_recording_s=settings.max_recording_s,
            transfer_tools=frozenset({services.agency.transfer_tool}),
            instance=settings.resolved_instance,
        ),
    )


def sip_endpoint(
    services: Services, engines: VoiceEngines, config: SipConfig, calls: LiveCalls
) -> SipEndpoint:
    hooks = phone_hooks(
        services.engine,
        services.swarm,
        services.greeting,
        services.agency.transfer_words,
        TurnRecorder(services.db, redaction=Redaction(services.settings.redact_transcripts)),
        calls,
    )
    return SipEndpoint(config, hooks, stt=engines.stt, tts=engines.tts, turn=engines.turn)


def listen(host: str, port: int) -> socket.socket:
    """Bind before serving, so the URL printed is already accepting connections."""
    return socket.create_server((host, port))


async def serve(settings: Settings, *, announce: Callable[[str], None] = print) -> None:
    """Serve as soon as the database is ready; the models load behind the open socket
    (`callswarm.warmup`), and callers who come meanwhile are greeted and then wait."""
    if settings.sip and not settings.voice:
        raise ValueError("SIP calls need voice: drop --no-voice or CALLSWARM_VOICE=false")
    services = build_services(settings)
    phone: SipEndpoint | None = None
    gateway: Gateway | None = None
    watch: PeerWatch | None = None
    background: list[asyncio.Task[None]] = []
    stopped = False

    def close_streams() -> None:
        # SSE streams never end by themselves: uvicorn would wait for them forever.
        if gateway is not None:
            gateway.journal.hub.close()

    async def stop() -> None:
        nonlocal stopped
        if stopped:
            return
        stopped = True
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        if phone is not None:
            await phone.stop()  # live calls get a BYE; what they committed stays
        if gateway is not None:
            await gateway.aclose()  # the last calls' events are saved
        if watch is not None:
            await watch.close()  # beating until now: peers left our closing calls alone
        await services.aclose()
        unsettle_heap()  # for a process that goes on without the gateway
        log.info("gateway_stopped")

    async def warm(warmup: Warmup, gateway: Gateway, server: _Server) -> None:
        nonlocal phone
        if settings.voice:
            try:
                engines = await warmup.voice()
            except RuntimeError:
                engines = None  # logged by the warm-up; web callers are told
            if engines is not None:
                time_engines(gateway.metrics, engines)
                # Out of the collector's way before the first phone call's audio.
                settle_heap()
            if settings.sip:
                try:
                    if engines is None:
                        raise RuntimeError("the voice did not load")
                    started = sip_endpoint(services, engines, sip_config(settings), gateway.calls)
                    await started.start()
                except Exception as exc:
                    # Asked to answer phones and cannot: a gateway that looks healthy
                    # while no call gets through is worse than one that stops.
                    log.error("sip_start_failed error=%r: stopping", exc)
                    server.should_exit = True
                    return
                phone = started
                announce(f"callswarm answering SIP on {settings.sip_host}:{settings.sip_port}")
        await warmup.wait()
        settle_heap()  # the models' warm-up made more that lives as long as the process

    try:
        warmup = Warmup(services, voice_loader(services) if settings.voice else None)
        gateway = make_gateway(services, warming=warmup)
        watch = PeerWatch(
            services.db,
            gateway.calls,
            every_s=settings.peer_beat_s,
            lost_after_s=settings.peer_lost_after_s,
        )
        watch.first_beat()
        app = create_app(gateway)
        sock = listen(settings.host, settings.port)
        host, port = sock.getsockname()[:2]
        config = uvicorn.Config(
            app,
            log_config=None,
            lifespan="off",
            ws_max_size=1 << 20,
            # Callers are counted per address (web/callers.py): behind a proxy, its
            # X-Forwarded-For names them, or every caller would share its address.
            forwarded_allow_ips=settings.forwarded_allow_ips,
        )
        server = _Server(config, close_streams, stop)
        loop = asyncio.get_running_loop()
        background += [
            loop.create_task(warmup.run()),
            loop.create_task(warm(warmup, gateway, server)),
        ]
        watch.start()
        keep = retention(settings)
        if not keep.keeps_all:
            folder = gateway.calls.options.recordings
            background.append(
                loop.create_task(
                    purge_periodically(services.db, keep, folder, settings.purge_every_s)
                )
            )
        if settings.operator_token or settings.operator_password:
            announce(f"operator console on http://{host}:{port}/console")
        else:
            announce(
                f"operator console on http://{host}:{port}/console, "
                f"token for this run: {gateway.auth.token}"
            )
        announce(f"callswarm serving on http://{host}:{port}/ (Ctrl-C to stop)")
        await server.serve(sockets=[sock])
    finally:
        await stop()  # if serving never started, or failed


class _Server(uvicorn.Server):
    """uvicorn, then our services, in one shutdown.

    uvicorn stops on SIGINT/SIGTERM: it stops accepting and closes the sockets (web
    callers' voice sessions close and keep what they committed). Only then may SIP calls
    and the services go, and it must happen here: once serve() returns, uvicorn re-raises
    the signal and asyncio cancels whatever the caller still awaits."""

    def __init__(
        self,
        config: uvicorn.Config,
        first: Callable[[], None],
        then: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(config)
        self._first, self._then = first, then

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._first()
        await super().shutdown(sockets=sockets)
        await self._then()
