"""Memory events by time: the sweeper finds those older than the history kept through
an index, per tenant and across tenants, instead of reading every event.

Revision ID: 0028
Revises: 0025
Create Date: 2026-12-06 06:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_memory_events_time", "memory_events", ["tenant_id", "occurred_at"])
    op.create_index("ix_memory_events_at", "memory_events", ["occurred_at"])


def downgrade() -> None:
    op.drop_index("ix_memory_events_at", table_name="memory_events")
    op.drop_index("ix_memory_events_time", table_name="memory_events")
