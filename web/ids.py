"""Client ids travel in URLs and end up in logs and the database: only a safe alphabet."""

from __future__ import annotations

import re

# Phone numbers (+15550123), uuids, "web-…": letters, digits and + - _ . : only, no "..".
_CLIENT_ID = re.compile(r"^(?!.*\.\.)[A-Za-z0-9+_.:-]{1,64}$")


def valid_client_id(client_id: str) -> bool:
    return bool(_CLIENT_ID.match(client_id))
