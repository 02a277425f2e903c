"""The database engine: a SQLite file by default (WAL), PostgreSQL (psycopg 3) or any SQLAlchemy URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import create_engine

import models.calls  # noqa: F401  (registers every table on SQLModel.metadata)
import models.gateways  # noqa: F401
import models.shop  # noqa: F401
import models.tables  # noqa: F401
from models.migrate import upgrade


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers (the console) run while a turn writes; busy_timeout makes
    # concurrent writers wait instead of failing with "database is locked".
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def database_url(url: str) -> str:
    """PostgreSQL URLs without a driver use psycopg 3, the one callswarm installs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def make_engine(url: str, *, migrate: bool = True, echo: bool = False) -> Engine:
    """Build the one engine a process uses; the CLI owns it and passes it down.

    With `migrate`, the schema is brought up to date first (see `models.migrate`)."""
    url = database_url(url)
    kwargs: dict[str, Any] = {"echo": echo}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 10}
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    else:
        kwargs["pool_pre_ping"] = True
    engine = create_engine(url, **kwargs)
    if url.startswith("sqlite"):
        event.listen(engine, "connect", _sqlite_pragmas)
    if migrate:
        upgrade(engine)
    return engine
