"""Browser callers' credentials: a session resumes only for the browser it belongs to.

A browser caller used to be keyed by an id the page made up (`web-` and 8 hex digits
in `localStorage`, or any `?client=`). That id was the caller's only credential:
whoever knew or guessed it opened their session, and `ready` handed over their whole
history (medicines, orders, the name they gave).

Now the gateway gives each browser caller an id and signs it, in an HttpOnly cookie
(`POST /api/v1/caller`). A caller socket resumes the session of the id in its path
only when the cookie names that id; with no cookie, another id's cookie, or a forged
one, the socket gets a new, empty session under a new id (told in `ready`). An id a
client proposes is granted only while no session or call holds it, so no one can take
over a caller's id by asking for it. The cookie is `id|expiry|signature`
(HMAC-SHA256), so gateways that share `CALLSWARM_CALLER_SECRET` accept each other's.

Socket opens and refused resumes are counted per address: past the limits, a socket
is closed with 1008 before it touches a session.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import logging
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Annotated, Protocol

from fastapi import APIRouter, Body, Request, Response, WebSocket
from pydantic import BaseModel, Field
from sqlalchemy.engine import Engine as Database
from sqlmodel import Session as DbSession
from sqlmodel import select

from models.calls import CallRow
from models.tables import SessionRow
from swarm import Engine
from web.ids import web_client_id

log = logging.getLogger("web.callers")
router = APIRouter(prefix="/api/v1", tags=["callers"])

COOKIE = "callswarm_caller"
# Socket opens per address a minute: a page reconnecting after each drop opens a few;
# a script walking through ids opens thousands.
MAX_OPENS, OPEN_WINDOW_S = 60, 60.0
# Sockets per address that asked for an id without its cookie, before that address is
# refused for a while: a reloaded page never does it, a guesser does nothing else.
MAX_REFUSED, REFUSED_WINDOW_S = 10, 300.0
# Asked-for ids remembered as given; past this, a session or call row holds most anyway.
GRANTED_KEPT = 100_000
# Past this many addresses, the quiet ones are forgotten.
FORGET_PAST = 1024
# A throttled address is told this close code (policy violation), as a bad id is.
CLOSE_POLICY = 1008


@dataclass
class CallerKeys:
    """Signs and checks callers' cookies, and counts what each address tried."""

    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    max_age_s: int = 30 * 24 * 3600
    secure_cookie: bool = False
    max_opens: int = MAX_OPENS  # per address, per OPEN_WINDOW_S
    max_refused: int = MAX_REFUSED  # per address, per REFUSED_WINDOW_S
    _opens: dict[str, deque[float]] = field(default_factory=dict, repr=False)
    _refused: dict[str, deque[float]] = field(default_factory=dict, repr=False)
    _granted: set[str] = field(default_factory=set, repr=False)

    @staticmethod
    def mint() -> str:
        """A new caller id: 128 random bits, so none is guessed."""
        return f"web-{secrets.token_hex(16)}"

    def issue(self, client_id: str, now: float | None = None) -> str:
        expires = int((time.time() if now is None else now) + self.max_age_s)
        payload = f"{client_id}|{expires}"
        return f"{payload}|{self._sign(payload)}"

    def verify(self, cookie: str, now: float | None = None) -> str | None:
        """The caller id a cookie names, or None if it is forged, garbled or expired."""
        parts = cookie.split("|")
        if len(parts) != 3 or not parts[1].isdigit() or not web_client_id(parts[0]):
            return None
        expected = self._sign(f"{parts[0]}|{parts[1]}")
        if not hmac.compare_digest(parts[2].encode(), expected.encode()):  # any text, no raise
            return None
        if int(parts[1]) < (time.time() if now is None else now):
            return None
        return parts[0]

    def _sign(self, payload: str) -> str:
        digest = hmac.new(self.secret, b"caller|" + payload.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def reserve(self, client_id: str) -> bool:
        """Whether `client_id` may be granted: each asked-for id once, so two who ask for
        the same free id do not both get its cookie. Per gateway: only ids minted here
        (or by a peer) are unique across gateways."""
        if client_id in self._granted:
            return False
        self._granted.add(client_id)
        if len(self._granted) > GRANTED_KEPT:
            self._granted.pop()
        return True

    def opened(self, address: str, now: float | None = None) -> bool:
        """Count a socket open from `address`; False when it has opened too many lately."""
        return _count(self._opens, address, self.max_opens, OPEN_WINDOW_S, now)

    def refused(self, address: str, now: float | None = None) -> bool:
        """Count a resume refused to `address`; False when it has been refused too often."""
        return _count(self._refused, address, self.max_refused, REFUSED_WINDOW_S, now)

    def throttled(self, address: str, now: float | None = None) -> bool:
        current = time.time() if now is None else now
        recent = self._refused.get(address)
        if not recent:
            return False
        return _recent(recent, REFUSED_WINDOW_S, current) >= self.max_refused


def _recent(times: deque[float], window: float, now: float) -> int:
    while times and times[0] < now - window:
        times.popleft()
    return len(times)


def _count(
    seen: dict[str, deque[float]], address: str, limit: int, window: float, now: float | None
) -> bool:
    current = time.time() if now is None else now
    times = seen.setdefault(address, deque(maxlen=limit + 1))
    within = _recent(times, window, current) < limit
    times.append(current)
    if len(seen) > FORGET_PAST:
        # Addresses that went quiet are forgotten, so the map does not grow with every visitor.
        for other in [a for a, t in seen.items() if not t or t[-1] < current - window]:
            del seen[other]
    return within


class _Holder(Protocol):
    """What of the gateway this module reads (web.gateway imports this module)."""

    @property
    def engine(self) -> Engine: ...
    @property
    def db(self) -> Database: ...
    @property
    def callers(self) -> CallerKeys: ...


def _in_use(gateway: _Holder, client_id: str) -> bool | None:
    """A session or a call holds the id: live here, or saved by any gateway. None when
    the database cannot say (the id is then not granted, and no one is blamed)."""
    if client_id in gateway.engine.sessions:
        return True
    try:
        with DbSession(gateway.db) as db:
            if db.get(SessionRow, client_id) is not None:
                return True
            found = db.exec(select(CallRow.id).where(CallRow.client_id == client_id)).first()
            return found is not None
    except Exception as exc:
        log.error("caller_id_unchecked client_id=%s error=%r", client_id, exc)
        return None


def _address(host: str | None) -> str:
    """Whom to count: the host, or for IPv6 its /64, which one machine may fill with
    addresses of its own."""
    if not host or ":" not in host:
        return host or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)  # an IPv4 caller behind a dual-stack proxy
    return str(ipaddress.ip_network(f"{host}/64", strict=False))


class CallerRequest(BaseModel):
    client_id: str | None = Field(
        default=None,
        description="An id to be known by; granted only if no session or call holds it.",
    )


class CallerGrant(BaseModel):
    client_id: str = Field(description="Open the caller sockets with this id.")


@router.post("/caller")
async def caller(
    request: Request,
    response: Response,
    body: Annotated[CallerRequest | None, Body()] = None,
) -> CallerGrant:
    """This browser's caller id, in a signed HttpOnly cookie that the caller sockets
    require to resume its session. A browser that has one keeps it, whatever it asks
    for (its expiry is renewed); one without gets the id it asks for, once and only if
    no session or call holds it, else a new one."""
    gateway: _Holder = request.app.state.gateway
    keys = gateway.callers
    cookie = request.cookies.get(COOKIE)
    held = keys.verify(cookie) if cookie else None
    proposed = body.client_id if body is not None else None
    address = _address(request.client.host if request.client else None)
    if held is not None or proposed is None:
        # A browser's id is never swapped for one it asks for: a link could otherwise
        # move a caller onto an id whose cookie someone else holds.
        client_id = held or keys.mint()
    elif (
        web_client_id(proposed)
        # Whether an id is held is itself worth guessing at: a guesser stops being told.
        and not keys.throttled(address)
        and keys.reserve(proposed)
        and await asyncio.to_thread(_in_use, gateway, proposed) is False
    ):
        client_id = proposed
    else:
        client_id = keys.mint()
    if proposed and client_id != proposed:
        keys.refused(address)
        log.info("caller_id_refused address=%s proposed=%s given=%s", address, proposed, client_id)
    response.set_cookie(
        COOKIE,
        keys.issue(client_id),
        max_age=keys.max_age_s,
        httponly=True,
        samesite="strict",
        secure=keys.secure_cookie,
        path="/",
    )
    return CallerGrant(client_id=client_id)


async def socket_caller(websocket: WebSocket, client_id: str) -> str | None:
    """The id a caller socket may use: the one in its path when its cookie names it,
    else a new one (a new, empty session). None, with the socket closed, when the
    address is throttled. Call before `accept`."""
    gateway: _Holder = websocket.app.state.gateway
    keys = gateway.callers
    address = _address(websocket.client.host if websocket.client else None)
    if not keys.opened(address):
        log.warning("caller_throttled address=%s reason=opens", address)
        await websocket.close(code=CLOSE_POLICY, reason="too many connections; try again later")
        return None
    cookie = websocket.cookies.get(COOKIE)
    if cookie and keys.verify(cookie) == client_id:
        return client_id  # a caller with their own cookie is never held up by a guesser's
    if keys.throttled(address):
        log.warning("caller_throttled address=%s reason=refused", address)
        await websocket.close(code=CLOSE_POLICY, reason="too many connections; try again later")
        return None
    given = keys.mint()
    if await asyncio.to_thread(_in_use, gateway, client_id) is True:
        # Someone else's session: counted, so that guessing ids soon stops working.
        keys.refused(address)
        log.warning("caller_resume_refused address=%s asked=%s given=%s", address, client_id, given)
    else:
        log.info("caller_id_given asked=%s given=%s", client_id, given)
    return given
