"""Whether the learned screens have read a memory's vector: the current memories a model
wrote that have a vector of their text are marked unread (those embedded before the
screens existed among them; which those are is not kept), for the index worker to judge
from the vectors they have (none is made again, so recall by meaning keeps finding them
meanwhile). One whose audit trail shows a hold is left as read: a person has seen it,
and an approval holds for the text approved.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-07 06:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HASHED = "hashtextextended(key || E'\\n' || value, 0)"


def upgrade() -> None:
    # Every row there is counts as read (no table rewrite); new rows start unread.
    op.add_column(
        "memories",
        sa.Column("screened", sa.Boolean(), server_default=sa.text("true"), nullable=False),
    )
    op.alter_column("memories", "screened", server_default=sa.text("false"))
    op.execute(
        """
UPDATE memories AS m SET screened = false
WHERE m.source <> 'manual' AND m.superseded_by IS NULL
  AND m.embedded_hash = hashtextextended(m.key || E'\\n' || m.value, 0)
  AND NOT m.held_for_review
  AND NOT EXISTS (
      SELECT FROM memory_events AS e
      WHERE e.tenant_id = m.tenant_id AND e.memory_id = m.id
        AND (coalesce((e.new_memory ->> 'held_for_review')::boolean, false)
             OR coalesce((e.old_memory ->> 'held_for_review')::boolean, false)))
"""
    )
    op.create_index(
        "ix_memories_unscreened",
        "memories",
        ["embedding_model", "tenant_id"],
        postgresql_where=sa.text(
            "NOT screened AND source <> 'manual' AND superseded_by IS NULL"
            f" AND embedded_hash = {_HASHED}"
        ),
    )


def downgrade() -> None:
    op.drop_index("ix_memories_unscreened", table_name="memories")
    op.drop_column("memories", "screened")
