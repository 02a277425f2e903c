"""Two keywords of the bundled catalogue, as a catalogue loaded before holds them.

Voltarol is diclofenac, not ibuprofen: as a keyword of the ibuprofen gel it offered the
gel to a caller asking for the diclofenac one. Chlorpheniramine is chlorphenamine's
American name, which the list of drug names files as another drug: without it, a
caller asking for it would hear the shop does not stock it (models/drug_names.py).
Only rows still holding the bundled keywords are changed; a shop's own are its own.

Revision ID: 0005
Revises: 0004
Created: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# (sku, keywords before, keywords after)
_CHANGES = (
    (
        "IBUGEL-50",
        "gel sprain strain muscle joint topical nurofen voltarol",
        "gel sprain strain muscle joint topical nurofen",
    ),
    (
        "CHLOR4-28",
        "allergy itch bites drowsy antihistamine piriton",
        "allergy itch bites drowsy antihistamine piriton chlorpheniramine",
    ),
)


def _set(old_at: int, new_at: int) -> None:
    connection = op.get_bind()
    has_fts = sa.inspect(connection).has_table("product_fts")
    for change in _CHANGES:
        sku, old, new = change[0], change[old_at], change[new_at]
        params = {"sku": sku, "old": old, "new": new}
        updated = connection.execute(
            sa.text("UPDATE products SET keywords = :new WHERE sku = :sku AND keywords = :old"),
            params,
        )
        if updated.rowcount and has_fts:
            # SQLite's full-text copy of the column (models/catalogue.py).
            connection.execute(
                sa.text("UPDATE product_fts SET keywords = :new WHERE sku = :sku"), params
            )


def upgrade() -> None:
    _set(1, 2)


def downgrade() -> None:
    _set(2, 1)
