"""Operators sign in with the token or the password and get a signed session cookie.

The cookie is `name|expiry|nonce|signature` (HMAC-SHA256 over the rest), so any
gateway that shares the secret accepts it. API clients may skip the cookie and send
`Authorization: Bearer <token>`. Every sign-in, failed or not, and every operator
action goes into `audit_log`.

Gateways sharing a database share what must not differ between them: a sign-out
(`revoked_cookies`) and the failed sign-ins that throttle an address (`audit_log`).
Each also keeps its own copy, so a database hiccup neither lets a signed-out cookie
back in nor lifts a throttle.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from pydantic import BaseModel, Field
from sqlalchemy.engine import Engine as Database
from sqlmodel import Session as DbSession

from models.calls import AuditRow, failed_logins, is_revoked, record_audit, revoke_cookie

if TYPE_CHECKING:
    from web.gateway import Gateway

log = logging.getLogger("web.auth")
router = APIRouter(prefix="/api/auth", tags=["auth"])

COOKIE = "callswarm_operator"
_NAME = re.compile(r"^[A-Za-z0-9 ._@-]{1,40}$")
# Failed sign-ins per address before a pause: enough for typos, not for guessing.
MAX_FAILURES, FAILURE_WINDOW_S = 10, 300.0


@dataclass
class OperatorAuth:
    token: str | None
    password: str | None
    secret: bytes
    max_age_s: int = 12 * 3600
    secure_cookie: bool = False
    # Where sign-outs and failed sign-ins are shared with other gateways; None: nowhere.
    db: Database | None = field(default=None, repr=False)
    _failures: dict[str, deque[float]] = field(default_factory=dict, repr=False)
    # Signed-out cookies, until they expire anyway.
    _revoked: dict[str, int] = field(default_factory=dict, repr=False)

    def accepts(self, *, token: str | None, password: str | None) -> bool:
        return bool(
            (token and self.token and _same(token, self.token))
            or (password and self.password and _same(password, self.password))
        )

    def issue(self, operator: str, now: float | None = None) -> str:
        expires = int((time.time() if now is None else now) + self.max_age_s)
        payload = f"{_b64(operator.encode())}|{expires}|{secrets.token_urlsafe(9)}"
        return f"{payload}|{self._sign(payload)}"

    def verify(self, cookie: str, now: float | None = None) -> str | None:
        """The operator a cookie names, or None if it is forged, garbled, expired or
        signed out. Blocking (it may ask the database): call it from a worker thread."""
        parts = cookie.split("|")
        if len(parts) != 4 or not parts[1].isdigit():
            return None
        if not _same(parts[3], self._sign("|".join(parts[:3]))):
            return None
        if int(parts[1]) < (time.time() if now is None else now) or self._is_revoked(parts[2]):
            return None
        try:
            return base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4)).decode()
        except ValueError:
            return None

    def _is_revoked(self, nonce: str) -> bool:
        if nonce in self._revoked or self.db is None:
            return nonce in self._revoked
        try:
            with DbSession(self.db) as db:
                return is_revoked(db, nonce)
        except Exception as exc:
            log.error("revocations_unreadable error=%r", exc)
            return False  # what this gateway knows was checked above

    def revoke(self, cookie: str, now: float | None = None) -> None:
        """Sign a cookie out, on every gateway of the database. Blocking."""
        parts = cookie.split("|")
        current = time.time() if now is None else now
        for nonce, expires in list(self._revoked.items()):
            if expires < current:
                del self._revoked[nonce]
        if len(parts) != 4 or not parts[1].isdigit():
            return
        self._revoked[parts[2]] = int(parts[1])
        if self.db is not None:
            try:
                with DbSession(self.db) as db:
                    revoke_cookie(db, parts[2], datetime.fromtimestamp(int(parts[1]), UTC))
            except Exception as exc:
                log.error("revocation_unsaved error=%r", exc)

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self.secret, payload.encode(), hashlib.sha256).digest())

    def throttled(self, address: str, now: float | None = None) -> bool:
        """Too many failed sign-ins from `address` lately, here or on any gateway of the
        database (their audit log). Blocking."""
        cutoff = (time.time() if now is None else now) - FAILURE_WINDOW_S
        recent = self._failures.get(address, deque())
        while recent and recent[0] < cutoff:
            recent.popleft()
        if len(recent) >= MAX_FAILURES or self.db is None:
            return len(recent) >= MAX_FAILURES
        try:
            with DbSession(self.db) as db:
                since = datetime.fromtimestamp(cutoff, UTC)
                return failed_logins(db, address, since) >= MAX_FAILURES
        except Exception as exc:
            log.error("failed_logins_unreadable error=%r", exc)
            return False

    def failed(self, address: str) -> None:
        self._failures.setdefault(address, deque(maxlen=MAX_FAILURES)).append(time.time())


def _same(given: str, expected: str) -> bool:
    """A constant-time comparison that takes any text: compare_digest refuses str with
    non-ASCII characters, and a fuzzer's token then raised a server error."""
    return hmac.compare_digest(given.encode(), expected.encode())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _address(request: Request) -> str:
    return request.client.host if request.client else ""


def operator_of(request: Request) -> str | None:
    """Blocking (a cookie's sign-out is looked up): FastAPI runs sync dependencies in
    its thread pool."""
    auth: OperatorAuth = request.app.state.auth
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        token = header[7:].strip()
        return "api-token" if auth.accepts(token=token, password=None) else None
    cookie = request.cookies.get(COOKIE)
    return auth.verify(cookie) if cookie else None


def require_operator(request: Request) -> str:
    """The dependency of every operator route: 401 without a valid cookie or token."""
    operator = operator_of(request)
    if operator is None:
        raise HTTPException(
            status_code=401, detail="sign in as an operator", headers={"WWW-Authenticate": "Bearer"}
        )
    return operator


Operator = Annotated[str, Depends(require_operator)]


async def audit(
    request: Request, operator: str, action: str, target: str = "", detail: str = ""
) -> None:
    """Record an operator's action; a database hiccup is logged, and the action stands."""
    gateway: Gateway = request.app.state.gateway
    row = AuditRow(
        operator=operator,
        action=action,
        target=target,
        address=_address(request),
        detail=detail[:2000],
    )

    def write() -> None:
        with DbSession(gateway.db) as db:
            record_audit(db, row)

    log.info("audit operator=%s action=%s target=%s", operator, action, target)
    try:
        await asyncio.to_thread(write)
    except Exception as exc:
        log.error("audit_unsaved operator=%s action=%s error=%r", operator, action, exc)


class Login(BaseModel):
    operator: str = Field(default="operator", description="Your name, for the audit log.")
    token: str | None = None
    password: str | None = None


@router.post("/login")
async def login(request: Request, response: Response, body: Login) -> dict[str, str]:
    """Exchange the operator token or password for a session cookie."""
    auth: OperatorAuth = request.app.state.auth
    address = _address(request)
    name = body.operator.strip()
    if not _NAME.match(name):
        raise HTTPException(422, "an operator name is 1-40 letters, digits, spaces or . _ @ -")
    if await asyncio.to_thread(auth.throttled, address):
        await audit(request, name, "login_throttled")
        raise HTTPException(429, "too many failed sign-ins; wait a few minutes")
    if not auth.accepts(token=body.token, password=body.password):
        auth.failed(address)
        await audit(request, name, "login_failed")
        raise HTTPException(401, "wrong token or password")
    response.set_cookie(
        COOKIE,
        auth.issue(name),
        max_age=auth.max_age_s,
        httponly=True,
        samesite="strict",
        secure=auth.secure_cookie,
        path="/",
    )
    await audit(request, name, "login")
    return {"operator": name}


@router.post("/logout")
async def logout(request: Request, response: Response, operator: Operator) -> dict[str, bool]:
    auth: OperatorAuth = request.app.state.auth
    cookie = request.cookies.get(COOKIE)
    if cookie:
        await asyncio.to_thread(auth.revoke, cookie)
    response.delete_cookie(COOKIE, path="/")
    await audit(request, operator, "logout")
    return {"ok": True}


@router.get("/me")
async def me(operator: Operator) -> dict[str, str]:
    return {"operator": operator}
