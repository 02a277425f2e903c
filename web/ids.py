"""Client ids travel in URLs and end up in logs and the database: only a safe alphabet."""

from __future__ import annotations

import re

# Phone numbers (+15550123), uuids, "web-…": letters, digits and + - _ . : only, no "..".
_CLIENT_ID = re.compile(r"^(?!.*\.\.)[A-Za-z0-9+_.:-]{1,64}$")


def valid_client_id(client_id: str) -> bool:
    return bool(_CLIENT_ID.match(client_id))


_CALL_ID = re.compile(r"^[0-9a-f]{32}$")
# What the telephony side keys phone callers by: their number, or "sip-…".
_PHONE_SESSION = re.compile(r"^(\+?[0-9]+|sip-.*)$")


def valid_call_id(call_id: str) -> bool:
    return bool(_CALL_ID.match(call_id))


def web_client_id(client_id: str) -> bool:
    """An id a browser may use: safe, and never a phone caller's (their number would
    otherwise open their history to anyone who knows it)."""
    return valid_client_id(client_id) and not _PHONE_SESSION.match(client_id)


# The largest row id (or offset) asked for: the id columns are 32-bit on PostgreSQL
# (INTEGER), and past that it raises "integer out of range", as SQLite's driver does
# past 64 bits, instead of finding nothing. Both were server errors (the API fuzz).
MAX_ROW_ID = 2**31 - 1
