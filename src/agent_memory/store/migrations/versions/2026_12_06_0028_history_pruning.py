"""Memory events by time, and how far the sweeper has pruned them: each event that
crosses the horizon of the history kept is read once, in time order through an index,
after the point the last sweep reached (``history_sweep``, one row).

Revision ID: 0028
Revises: 0025
Create Date: 2026-12-06 06:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_memory_events_at", "memory_events", ["occurred_at", "id"])
    op.create_table(
        "history_sweep",
        sa.Column("one", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("swept_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("swept_id", sa.Uuid(), nullable=False),
        sa.CheckConstraint("one", name=op.f("ck_history_sweep_one")),
        sa.PrimaryKeyConstraint("one", name=op.f("pk_history_sweep")),
    )


def downgrade() -> None:
    op.drop_table("history_sweep")
    op.drop_index("ix_memory_events_at", table_name="memory_events")
