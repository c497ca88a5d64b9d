"""Index director learnings alone.

The index over every memory by (tenant, source, owner, created_at) served only the
learnings listing, cost every memory write an index entry, and, on an owner the
statistics had not seen yet, looked cheap enough for the planner to take it for
lookups by key. A partial index over director rows serves the listing alone.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26 04:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_memories_learnings",
        "memories",
        ["tenant_id", "owner_id", "created_at"],
        postgresql_where=sa.text("source = 'director'"),
    )
    op.drop_index("ix_memories_source_created", table_name="memories")


def downgrade() -> None:
    op.create_index(
        "ix_memories_source_created",
        "memories",
        ["tenant_id", "source", "owner_id", "created_at"],
    )
    op.drop_index("ix_memories_learnings", table_name="memories")
