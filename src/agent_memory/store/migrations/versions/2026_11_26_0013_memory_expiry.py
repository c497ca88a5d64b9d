"""Memories may expire (AIP-214): ``expire_time``, and an index the sweeper reads.

The index holds only rows with an expiry, so memories that never expire cost it
nothing.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 16:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("expire_time", sa.TIMESTAMP(timezone=True)))
    op.create_index(
        "ix_memories_expiry",
        "memories",
        ["expire_time"],
        postgresql_where=sa.text("expire_time IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_memories_expiry", table_name="memories")
    op.drop_column("memories", "expire_time")
