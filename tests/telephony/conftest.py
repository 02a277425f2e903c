"""A real SIP endpoint on loopback, in the test's own event loop, over the scripted swarm."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from callswarm.app import Services, build_services
from callswarm.heap import settle_heap, unsettle_heap
from callswarm.serve import live_calls, sip_endpoint
from callswarm.settings import Settings
from telephony import SipConfig, SipEndpoint
from web.gateway import VoiceEngines
from web.live import LiveCalls

from ..conftest import worker_ports
from .sipp import Capture, free_udp_port
from .uac import SipPeer


@dataclass
class Phone:
    services: Services
    endpoint: SipEndpoint
    config: SipConfig
    calls: LiveCalls

    @property
    def target(self) -> str:
        return f"{self.config.host}:{self.config.port}"

    async def stop(self) -> None:
        await self.endpoint.stop()
        await self.services.aclose()
        unsettle_heap()


async def start_phone(tmp_path, stt, tts, settings: Settings | None = None, **config) -> Phone:
    settings = settings or Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None)
    services = build_services(settings)
    await services.warm_up()
    sip = SipConfig(port=free_udp_port(), rtp_ports=worker_ports(31000, 31999), **config)
    calls = live_calls(services)
    endpoint = sip_endpoint(services, VoiceEngines(stt, tts), sip, calls)
    await endpoint.start()
    settle_heap()  # as `callswarm serve` does before its first caller
    return Phone(services, endpoint, sip, calls)


@pytest.fixture
async def phone(tmp_path, stt, tts) -> AsyncIterator[Phone]:
    running = await start_phone(tmp_path, stt, tts)
    try:
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def capture() -> AsyncIterator[Capture]:
    """Where the caller's phone listens: the gateway's RTP for every call in the test."""
    media = await Capture.open()
    try:
        yield media
    finally:
        media.close()


@pytest.fixture
async def peer() -> AsyncIterator[SipPeer]:
    """A small SIP caller's signalling socket (tests/telephony/uac.py)."""
    sip = await SipPeer.open()
    try:
        yield sip
    finally:
        sip.close()
