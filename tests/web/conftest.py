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
from web import create_app


@dataclass
class Running:
    services: Services
    url: str  # http://127.0.0.1:port

    @property
    def ws(self) -> str:
        return self.url.replace("http://", "ws://")


async def start(services: Services, stt, tts) -> tuple[Running, uvicorn.Server, asyncio.Task]:
    app = create_app(make_gateway(services, (stt, tts)))
    # Bound and listening before serve() starts: clients can connect at once, no polling.
    sock = listen("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="off"))
    task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    return Running(services, f"http://127.0.0.1:{port}"), server, task


@pytest.fixture
async def gateway(tmp_path, stt, tts) -> AsyncIterator[Running]:
    services = build_services(Settings(data_dir=tmp_path, provider="scripted", idle_timeout=None))
    running, server, task = await start(services, stt, tts)
    try:
        yield running
    finally:
        server.should_exit = True
        await task
        await services.aclose()
