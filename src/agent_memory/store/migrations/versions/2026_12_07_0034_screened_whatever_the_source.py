"""The learned screens judge a memory whatever its source: a MANUAL one too, since a model
writes them (the MCP server's memory_upsert) as well as a person. Each memory keeps
whether a person wrote its present text (a key of the editor role), whose own words the
screens take as read. The MANUAL memories written before count as a person's, as they
did (who wrote them is not recorded). The index of the memories the screens have yet to
read leaves out a person's and takes in every source.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-07 08:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HASHED = "hashtextextended(key || E'\\n' || value, 0)"
_CURRENT = f"superseded_by IS NULL AND embedded_hash = {_HASHED}"
_UNREAD = f"screened_hash IS DISTINCT FROM {_HASHED}"


def _index(where: str) -> None:
    op.create_index(
        "ix_memories_unscreened",
        "memories",
        ["embedding_model", "tenant_id"],
        postgresql_where=sa.text(where),
    )


def upgrade() -> None:
    op.add_column(
        "memories",
        sa.Column("text_by_person", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.execute("UPDATE memories SET text_by_person = true WHERE source = 'manual'")
    op.drop_index("ix_memories_unscreened", table_name="memories")
    _index(f"{_CURRENT} AND NOT text_by_person AND {_UNREAD}")


def downgrade() -> None:
    op.drop_index("ix_memories_unscreened", table_name="memories")
    _index(f"source <> 'manual' AND {_CURRENT} AND {_UNREAD}")
    op.drop_column("memories", "text_by_person")
