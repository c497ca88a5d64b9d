"""When a run's prompt was rendered, so it can be rendered again as it was: unset on
every run recorded before.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 05:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("agent_runs", sa.Column("render_time", sa.DateTime(timezone=True)))


def downgrade() -> None:
    op.drop_column("agent_runs", "render_time")
