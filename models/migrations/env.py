"""Alembic's environment: migrations run on the connection `models.migrate` hands over."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import models.db  # noqa: F401  (registers every table on SQLModel.metadata)

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    # SQLite alters a table by copying it; batch mode writes migrations that way.
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
