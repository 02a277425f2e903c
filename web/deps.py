"""The gateway as a FastAPI dependency: routes and sockets declare `GatewayDep`
instead of reading `app.state` (set once, by `web.app.create_app`).

Modules the gateway itself is built from (auth, callers, metrics) cannot import it,
and take what they need from the connection as before."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from web.gateway import Gateway


def current_gateway(connection: HTTPConnection) -> Gateway:
    gateway: Gateway = connection.app.state.gateway
    return gateway


GatewayDep = Annotated[Gateway, Depends(current_gateway)]
