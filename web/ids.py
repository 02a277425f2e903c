"""Client ids travel in URLs and end up in logs and the database: only a safe alphabet."""

from __future__ import annotations

import re

from fastapi import HTTPException

# Phone numbers (+15550123), uuids, "web-…": letters, digits and + - _ . : only, no "..".
_CLIENT_ID = re.compile(r"^(?!.*\.\.)[A-Za-z0-9+_.:-]{1,64}$")


def valid_client_id(client_id: str) -> bool:
    return bool(_CLIENT_ID.match(client_id))


def require_client_id(client_id: str) -> str:
    if not valid_client_id(client_id):
        raise HTTPException(status_code=422, detail="invalid client id")
    return client_id
