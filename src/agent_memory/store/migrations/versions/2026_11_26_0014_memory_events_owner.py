"""Find a subject's audit events by the owner their snapshots name, for forgetting.

Forgetting an agent or a workspace empties the snapshots of every event about its
memories, those deleted long ago included; without this index that reads every
event of the tenant.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "CREATE INDEX ix_memory_events_owner ON memory_events "
        "(tenant_id, (coalesce(new_memory, old_memory) ->> 'owner_id'))"
    )


def downgrade() -> None:
    op.drop_index("ix_memory_events_owner", table_name="memory_events")
