"""Several gateways on one database, and PostgreSQL's full-text index for products.

- `calls.instance`: which gateway answered the call.
- PostgreSQL: a GIN index on the same text search document `models.search` queries,
  so product search does not scan the catalogue. SQLite keeps its FTS5 table.

Revision ID: 0002
Revises: 0001
Created: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# `models.search.PG_DOCUMENT` as of this revision: a query on another expression would
# not use the index (tests/models/test_migrations.py checks the plan).
_DOCUMENT = "to_tsvector('english', name || ' ' || active_ingredient || ' ' || keywords)"


def upgrade() -> None:
    with op.batch_alter_table("calls", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "instance",
                sqlmodel.sql.sqltypes.AutoString(length=100),
                nullable=False,
                server_default="",
            )
        )
        batch_op.create_index(batch_op.f("ix_calls_instance"), ["instance"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"CREATE INDEX ix_products_search ON products USING gin ({_DOCUMENT})")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_products_search")
    with op.batch_alter_table("calls", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_calls_instance"))
        batch_op.drop_column("instance")
