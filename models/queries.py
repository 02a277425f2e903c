"""Small query pieces shared by the console's filters and searches."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, func, or_


def contains(text: str, *columns: Any) -> ColumnElement[bool]:
    """Any of `columns` holds `text`, ignoring case; `%` and `_` in it are plain characters."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return or_(*(func.lower(column).like(f"%{escaped}%", escape="\\") for column in columns))
