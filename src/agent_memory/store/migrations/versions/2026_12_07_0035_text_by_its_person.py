"""Each memory keeps who wrote its present text where a person did (``text_by``, the
user id of a key of the editor role), not only whether a person did: a prompt names
that person, whoever pinned the memory or changed its note since. The memories a person
wrote count as written by the user who last changed them, the best record kept of it.
The index of the memories the screens have yet to read leaves out the same ones.

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-07 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HASHED = "hashtextextended(key || E'\\n' || value, 0)"
_CURRENT = f"superseded_by IS NULL AND embedded_hash = {_HASHED}"
_UNREAD = f"screened_hash IS DISTINCT FROM {_HASHED}"


def _index(whose: str) -> None:
    op.drop_index("ix_memories_unscreened", table_name="memories")
    op.create_index(
        "ix_memories_unscreened",
        "memories",
        ["embedding_model", "tenant_id"],
        postgresql_where=sa.text(f"{_CURRENT} AND {whose} AND {_UNREAD}"),
    )


def upgrade() -> None:
    op.add_column("memories", sa.Column("text_by", sa.String(255), nullable=True))
    op.execute("UPDATE memories SET text_by = updated_by WHERE text_by_person")
    _index("text_by IS NULL")
    op.drop_column("memories", "text_by_person")


def downgrade() -> None:
    op.add_column(
        "memories",
        sa.Column("text_by_person", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.execute("UPDATE memories SET text_by_person = true WHERE text_by IS NOT NULL")
    _index("NOT text_by_person")
    op.drop_column("memories", "text_by")
