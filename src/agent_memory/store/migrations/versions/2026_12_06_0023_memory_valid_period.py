"""Facts valid for a period: ``valid_start_time`` and ``valid_end_time`` on memories,
the period ending after it starts.

Both are NULL on every row there is, so the constraint is added without a check and
validated after, under a lock that lets reads and writes go on.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06 02:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("valid_start_time", sa.TIMESTAMP(timezone=True)))
    op.add_column("memories", sa.Column("valid_end_time", sa.TIMESTAMP(timezone=True)))
    op.execute(
        "ALTER TABLE memories ADD CONSTRAINT ck_memories_valid_period"
        " CHECK (valid_end_time > valid_start_time) NOT VALID"
    )
    op.execute("ALTER TABLE memories VALIDATE CONSTRAINT ck_memories_valid_period")


def downgrade() -> None:
    op.execute("ALTER TABLE memories DROP CONSTRAINT ck_memories_valid_period")
    op.drop_column("memories", "valid_end_time")
    op.drop_column("memories", "valid_start_time")
