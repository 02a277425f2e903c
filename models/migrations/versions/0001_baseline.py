"""The tables of callswarm before migrations (issues 2 to 8).

A database made by those versions has some or all of them already: only what
is missing is created, so such a file joins the migration history here.

Revision ID: 0001
Revises:
Created: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _missing(table: str) -> bool:
    return not sa.inspect(op.get_bind()).has_table(table)


def upgrade() -> None:
    if _missing("audit_log"):
        op.create_table(
            "audit_log",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("operator", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("action", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
            sa.Column("target", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("address", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("detail", sa.Text(), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("audit_log", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_audit_log_action"), ["action"], unique=False)
            batch_op.create_index(batch_op.f("ix_audit_log_operator"), ["operator"], unique=False)

    if _missing("call_events"):
        op.create_table(
            "call_events",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("call_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
            sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("data", sa.JSON(), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("call_events", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_call_events_call_id"), ["call_id"], unique=False)
            batch_op.create_index(
                batch_op.f("ix_call_events_client_id"), ["client_id"], unique=False
            )

    if _missing("calls"):
        op.create_table(
            "calls",
            sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
            sa.Column("caller", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
            sa.Column("ended_by", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True),
            sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True),
            sa.Column("agents", sqlmodel.sql.sqltypes.AutoString(length=500), nullable=False),
            sa.Column("first_seq", sa.Integer(), nullable=False),
            sa.Column("last_seq", sa.Integer(), nullable=True),
            sa.Column("turns", sa.Integer(), nullable=False),
            sa.Column("transfer_requested", sa.Boolean(), nullable=False),
            sa.Column("operator", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
            sa.Column("recording", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("calls", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_calls_caller"), ["caller"], unique=False)
            batch_op.create_index(batch_op.f("ix_calls_channel"), ["channel"], unique=False)
            batch_op.create_index(batch_op.f("ix_calls_client_id"), ["client_id"], unique=False)
            batch_op.create_index(batch_op.f("ix_calls_outcome"), ["outcome"], unique=False)
            batch_op.create_index(batch_op.f("ix_calls_started_at"), ["started_at"], unique=False)

    if _missing("customers"):
        op.create_table(
            "customers",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("phone", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=True),
            sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("customers", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_customers_client_id"), ["client_id"], unique=True)
            batch_op.create_index(batch_op.f("ix_customers_phone"), ["phone"], unique=False)

    if _missing("products"):
        op.create_table(
            "products",
            sa.Column("sku", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
            sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
            sa.Column(
                "active_ingredient", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False
            ),
            sa.Column("strength", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
            sa.Column("form", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
            sa.Column("pack_size", sa.Integer(), nullable=False),
            sa.Column("price_cents", sa.Integer(), nullable=False),
            sa.Column("stock", sa.Integer(), nullable=False),
            sa.Column("prescription_only", sa.Boolean(), nullable=False),
            sa.Column("description", sa.Text(), nullable=False),
            sa.Column("keywords", sa.Text(), nullable=False),
            sa.PrimaryKeyConstraint("sku"),
        )
        with op.batch_alter_table("products", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_products_name"), ["name"], unique=False)

    if _missing("orders"):
        op.create_table(
            "orders",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("customer_id", sa.Integer(), nullable=False),
            sa.Column(
                "status",
                sa.Enum("PENDING", "CONFIRMED", "CANCELLED", name="orderstatus"),
                nullable=False,
            ),
            sa.Column("total_cents", sa.Integer(), nullable=False),
            sa.Column("revision", sa.Integer(), nullable=False),
            sa.Column("read_back_revision", sa.Integer(), nullable=True),
            sa.Column("read_back_seq", sa.Integer(), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=True),
            sa.ForeignKeyConstraint(
                ["customer_id"],
                ["customers.id"],
            ),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("orders", schema=None) as batch_op:
            batch_op.create_index(
                batch_op.f("ix_orders_customer_id"), ["customer_id"], unique=False
            )
            batch_op.create_index(batch_op.f("ix_orders_status"), ["status"], unique=False)

    if _missing("sessions"):
        op.create_table(
            "sessions",
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("swarm", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("active_agent", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("nav_stack", sa.JSON(), nullable=False),
            sa.Column("customer_id", sa.Integer(), nullable=True),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
            sa.ForeignKeyConstraint(
                ["customer_id"],
                ["customers.id"],
            ),
            sa.PrimaryKeyConstraint("client_id"),
        )
        with op.batch_alter_table("sessions", schema=None) as batch_op:
            batch_op.create_index(
                batch_op.f("ix_sessions_customer_id"), ["customer_id"], unique=False
            )

    if _missing("messages"):
        op.create_table(
            "messages",
            sa.Column("seq", sa.Integer(), nullable=False),
            sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
            sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("content", sa.Text(), nullable=False),
            sa.Column("tool_name", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
            sa.Column("tool_call_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
            sa.Column("tool_calls", sa.JSON(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("mode", sqlmodel.sql.sqltypes.AutoString(length=10), nullable=False),
            sa.ForeignKeyConstraint(
                ["client_id"],
                ["sessions.client_id"],
            ),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("client_id", "seq"),
        )
        with op.batch_alter_table("messages", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_messages_client_id"), ["client_id"], unique=False)

    if _missing("order_lines"):
        op.create_table(
            "order_lines",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("order_id", sa.Integer(), nullable=False),
            sa.Column("sku", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
            sa.Column("quantity", sa.Integer(), nullable=False),
            sa.Column("unit_price_cents", sa.Integer(), nullable=False),
            sa.ForeignKeyConstraint(
                ["order_id"],
                ["orders.id"],
            ),
            sa.ForeignKeyConstraint(
                ["sku"],
                ["products.sku"],
            ),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("order_id", "sku"),
        )
        with op.batch_alter_table("order_lines", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_order_lines_order_id"), ["order_id"], unique=False)

    if _missing("threads"):
        op.create_table(
            "threads",
            sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("sender", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("recipient", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.ForeignKeyConstraint(
                ["client_id"],
                ["sessions.client_id"],
            ),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("threads", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_threads_client_id"), ["client_id"], unique=False)

    if _missing("turns"):
        op.create_table(
            "turns",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("client_id", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("transcript", sa.Text(), nullable=False),
            sa.Column("speech_s", sa.Float(), nullable=False),
            sa.Column("stt_s", sa.Float(), nullable=True),
            sa.Column("first_token_s", sa.Float(), nullable=True),
            sa.Column("first_audio_s", sa.Float(), nullable=True),
            sa.Column("voice_to_voice_s", sa.Float(), nullable=True),
            sa.Column("interrupted", sa.Boolean(), nullable=False),
            sa.ForeignKeyConstraint(
                ["client_id"],
                ["sessions.client_id"],
            ),
            sa.PrimaryKeyConstraint("id"),
        )
        with op.batch_alter_table("turns", schema=None) as batch_op:
            batch_op.create_index(batch_op.f("ix_turns_client_id"), ["client_id"], unique=False)

    if _missing("thread_messages"):
        op.create_table(
            "thread_messages",
            sa.Column("seq", sa.Integer(), nullable=False),
            sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
            sa.Column("agent", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=False),
            sa.Column("content", sa.Text(), nullable=False),
            sa.Column("tool_name", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
            sa.Column("tool_call_id", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
            sa.Column("tool_calls", sa.JSON(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("thread_id", sqlmodel.sql.sqltypes.AutoString(length=300), nullable=False),
            sa.ForeignKeyConstraint(
                ["thread_id"],
                ["threads.id"],
            ),
            sa.PrimaryKeyConstraint("id"),
            sa.UniqueConstraint("thread_id", "seq"),
        )
        with op.batch_alter_table("thread_messages", schema=None) as batch_op:
            batch_op.create_index(
                batch_op.f("ix_thread_messages_thread_id"), ["thread_id"], unique=False
            )


def downgrade() -> None:
    with op.batch_alter_table("thread_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_thread_messages_thread_id"))

    op.drop_table("thread_messages")
    with op.batch_alter_table("turns", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_turns_client_id"))

    op.drop_table("turns")
    with op.batch_alter_table("threads", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_threads_client_id"))

    op.drop_table("threads")
    with op.batch_alter_table("order_lines", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_order_lines_order_id"))

    op.drop_table("order_lines")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_messages_client_id"))

    op.drop_table("messages")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_customer_id"))

    op.drop_table("sessions")
    with op.batch_alter_table("orders", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_orders_status"))
        batch_op.drop_index(batch_op.f("ix_orders_customer_id"))

    op.drop_table("orders")
    with op.batch_alter_table("products", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_products_name"))

    op.drop_table("products")
    with op.batch_alter_table("customers", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_customers_phone"))
        batch_op.drop_index(batch_op.f("ix_customers_client_id"))

    op.drop_table("customers")
    with op.batch_alter_table("calls", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_calls_started_at"))
        batch_op.drop_index(batch_op.f("ix_calls_outcome"))
        batch_op.drop_index(batch_op.f("ix_calls_client_id"))
        batch_op.drop_index(batch_op.f("ix_calls_channel"))
        batch_op.drop_index(batch_op.f("ix_calls_caller"))

    op.drop_table("calls")
    with op.batch_alter_table("call_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_call_events_client_id"))
        batch_op.drop_index(batch_op.f("ix_call_events_call_id"))

    op.drop_table("call_events")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_operator"))
        batch_op.drop_index(batch_op.f("ix_audit_log_action"))

    op.drop_table("audit_log")
    # PostgreSQL keeps an enum's type after its table is gone.
    sa.Enum(name="orderstatus").drop(op.get_bind(), checkfirst=True)
