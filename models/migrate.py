"""Schema migrations with Alembic, run by the process that opens the database.

Every table comes from a migration in `models/migrations/versions/`. A database
made by a version before migrations (a SQLite file with tables and no
`alembic_version`) is upgraded too: the first migration creates only the tables
and indexes it lacks, and the later ones alter what is there.
"""

from __future__ import annotations

import logging
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

log = logging.getLogger("models.migrate")

SCRIPTS = Path(__file__).parent / "migrations"
# Any fixed number: instances starting together take turns migrating one database.
_LOCK_KEY = 0x63616C6C


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    revision = ScriptDirectory.from_config(_config()).get_current_head()
    assert revision is not None
    return revision


def current(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision`; a database already there is left as it is."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
        before = MigrationContext.configure(connection).get_current_revision()
        command.upgrade(_config(connection), revision)
        after = MigrationContext.configure(connection).get_current_revision()
    if before != after:
        log.info("schema_migrated from=%s to=%s", before, after)


def downgrade(engine: Engine, revision: str) -> None:
    """Undo migrations down to `revision` ("base": no tables at all)."""
    with engine.begin() as connection:
        command.downgrade(_config(connection), revision)


def revision(engine: Engine, message: str) -> None:
    """Write a new migration from the difference between the tables and the models."""
    with engine.begin() as connection:
        command.revision(_config(connection), message=message, autogenerate=True)
