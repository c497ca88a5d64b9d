"""A memory may be superseded by the one that replaced it: ``superseded_by``.

Superseded memories stay readable by id and in the audit trail, which records the
change as a ``superseded`` event; listings, rendering and recall leave them out.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 20:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TYPES = "'created', 'updated', 'pinned', 'unpinned', 'deleted'"


def upgrade() -> None:
    op.add_column("memories", sa.Column("superseded_by", postgresql.UUID(as_uuid=True)))
    op.drop_constraint(op.f("ck_memory_events_type"), "memory_events", type_="check")
    op.create_check_constraint(
        op.f("ck_memory_events_type"), "memory_events", f"event_type IN ({_TYPES}, 'superseded')"
    )


def downgrade() -> None:
    op.execute("UPDATE memory_events SET event_type = 'updated' WHERE event_type = 'superseded'")
    op.drop_constraint(op.f("ck_memory_events_type"), "memory_events", type_="check")
    op.create_check_constraint(
        op.f("ck_memory_events_type"), "memory_events", f"event_type IN ({_TYPES})"
    )
    op.drop_column("memories", "superseded_by")
