"""A real gateway on a loopback port, in the test's own event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import uvicorn

from callswarm.app import Services, build_services
from callswarm.serve import listen, make_gateway
from callswarm.settings import Settings
from web import Gateway, create_app
from web.gateway import VoiceEngines


@dataclass
class Running:
    services: Services
    url: str  # http://127.0.0.1:port
    gateway: Gateway

    @property
    def ws(self) -> str:
        return self.url.replace("http://", "ws://")


async def start(
    services: Services, stt, tts, turn=None
) -> tuple[Running, uvicorn.Server, asyncio.Task]:
    return await serving(services, make_gateway(services, VoiceEngines(stt, tts, turn)))


async def serving(
    services: Services, gateway: Gateway
) -> tuple[Running, uvicorn.Server, asyncio.Task]:
    app = create_app(gateway)
    # Bound and listening before serve() starts: clients can connect at once, no polling.
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="off"))
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    return Running(services, f"http://127.0.0.1:{port}", gateway), server, task


async def stop(running: Running, server: uvicorn.Server, task: asyncio.Task) -> None:
    """In `serve`'s order: streams end, uvicorn stops, the journal saves, services close."""
    running.gateway.journal.hub.close()
    server.should_exit = True
    await task
    await running.gateway.aclose()
    await running.services.aclose()


@pytest.fixture
async def gateway(tmp_path, database_url, stt, tts) -> AsyncIterator[Running]:
    settings = Settings(
        data_dir=tmp_path, database_url=database_url, provider="scripted", idle_timeout=None
    )
    services = build_services(settings)
    running, server, task = await start(services, stt, tts)
    try:
        yield running
    finally:
        await stop(running, server, task)
