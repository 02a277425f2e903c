"""The FastAPI app: REST for what the gateway is, sockets for callers, the page at `/`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from web import auth, callers, console_api, metrics, shop_api, sse, text_socket, voice_socket
from web.deps import GatewayDep
from web.gateway import Gateway, Readiness

STATIC = Path(__file__).parent / "static"


def create_app(gateway: Gateway) -> FastAPI:
    app = FastAPI(
        title="callswarm",
        version=str(gateway.info.get("version", "0")),
        description="Voice and telephony assistant gateway: REST, the caller sockets, the page.",
    )
    app.state.gateway = gateway
    app.state.auth = gateway.auth
    app.state.voice_connections = voice_socket.Connections()
    app.include_router(callers.router)
    app.include_router(text_socket.router)
    app.include_router(voice_socket.router)
    app.include_router(auth.router)
    app.include_router(console_api.router)
    app.include_router(shop_api.router)
    app.include_router(sse.router)
    app.include_router(metrics.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/api/ping", tags=["gateway"])
    async def ping() -> dict[str, bool]:
        return {"ok": True}

    @app.get("/api/ready", tags=["gateway"])
    async def ready(gateway: GatewayDep) -> Readiness:
        """What is still warming. The gateway serves meanwhile: callers are greeted, and
        their first turn waits for its model."""
        return gateway.warming.readiness()

    @app.get("/api/info", tags=["gateway"])
    async def info(gateway: GatewayDep) -> dict[str, Any]:
        """The swarm, its agents and their tools, and the agency's mission."""
        registry = gateway.engine.registry
        spec = registry.swarms[gateway.swarm]
        return {
            "swarm": spec.name,
            "default_agent": spec.default_agent,
            "mission": spec.mission,
            "agents": [
                {
                    "name": name,
                    "description": registry.agents[name].description,
                    "tools": list(registry.agents[name].tools),
                }
                for name in spec.agents
            ],
            "voice": gateway.warming.has_voice,
            **{k: v for k, v in gateway.info.items() if k != "version"},
            "version": app.version,
        }

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/console", include_in_schema=False)
    async def console() -> FileResponse:
        # The page is public; everything it shows comes from operator-only routes.
        return FileResponse(STATIC / "console.html")

    return app
