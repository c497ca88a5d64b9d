"""Evidence that reads back: raw provider events in conversation snapshots, an index
to list snapshots by recency, and the result of each finished extraction job.

Snapshots stored before keep their messages and get no raw events. Jobs that ended
before keep no result (NULL): they read back with their outcome and detail only.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "conversations",
        sa.Column(
            "raw_events",
            postgresql.JSONB(),
            nullable=False,
            server_default=sa.text("'[]'::jsonb"),
        ),
    )
    op.add_column(
        "conversations",
        sa.Column("raw_event_count", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.create_index(
        "ix_conversations_updated",
        "conversations",
        ["tenant_id", "updated_at", "provider", "conversation_id"],
    )
    op.add_column("extraction_jobs", sa.Column("result", postgresql.JSONB()))


def downgrade() -> None:
    op.drop_column("extraction_jobs", "result")
    op.drop_index("ix_conversations_updated", table_name="conversations")
    op.drop_column("conversations", "raw_event_count")
    op.drop_column("conversations", "raw_events")
