"""Gateways' beats, so one can end the calls of another that died (`models.gateways`).

Revision ID: 0004
Revises: 0003
Created: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gateways",
        sa.Column("instance", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
        sa.Column("beats", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("instance"),
    )


def downgrade() -> None:
    op.drop_table("gateways")
