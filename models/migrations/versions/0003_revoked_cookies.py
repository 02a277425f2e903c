"""Signed-out operator cookies, shared by every gateway on the database.

Revision ID: 0003
Revises: 0002
Created: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "revoked_cookies",
        sa.Column("nonce", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("nonce"),
    )
    with op.batch_alter_table("revoked_cookies", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_revoked_cookies_expires_at"), ["expires_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("revoked_cookies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_revoked_cookies_expires_at"))
    op.drop_table("revoked_cookies")
