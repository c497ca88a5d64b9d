"""The text the learned screens last read of a memory (its hash), or that a person let go
from a hold: a memory a model wrote is judged while its text is another. None is read
yet, so the memories a model wrote that have a vector (those embedded before the
screens existed among them) wait for the index worker to judge them from the vectors
they have: none is made again, and recall by meaning keeps finding them meanwhile. A
memory held now (with a vector of its text) counts as read, and so does one whose
present text a person let go from a hold: an approval holds for the text approved.

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
    op.add_column("memories", sa.Column("screened_hash", sa.BigInteger(), nullable=True))
    # Read already: a memory held now whose vector is of its text (one whose text changed
    # since is judged as it is embedded), and one whose present text a person let go
    # from a hold (an approval's event: held before it, not after, that text after it).
    approved = """coalesce((e.old_memory ->> 'held_for_review')::boolean, false)
            AND NOT coalesce((e.new_memory ->> 'held_for_review')::boolean, false)
            AND e.new_memory ->> 'key' = m.key AND e.new_memory ->> 'value' = m.value"""
    op.execute(
        f"""
UPDATE memories AS m SET screened_hash = hashtextextended(m.key || E'\\n' || m.value, 0)
WHERE m.source <> 'manual'
  AND CASE WHEN m.held_for_review
           THEN m.embedded_hash = hashtextextended(m.key || E'\\n' || m.value, 0)
           ELSE EXISTS (SELECT FROM memory_events AS e
                        WHERE e.tenant_id = m.tenant_id AND e.memory_id = m.id AND {approved})
      END
"""
    )
    op.create_index(
        "ix_memories_unscreened",
        "memories",
        ["embedding_model", "tenant_id"],
        postgresql_where=sa.text(
            "source <> 'manual' AND superseded_by IS NULL"
            f" AND embedded_hash = {_HASHED}"
            f" AND screened_hash IS DISTINCT FROM {_HASHED}"
        ),
    )


def downgrade() -> None:
    op.drop_index("ix_memories_unscreened", table_name="memories")
    op.drop_column("memories", "screened_hash")
