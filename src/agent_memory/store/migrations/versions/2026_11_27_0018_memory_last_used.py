"""When a memory last reached a model: ``last_used_time``, set by a render that shows
it and a recall that returns it, in the same statement.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 04:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("last_used_time", sa.DateTime(timezone=True)))


def downgrade() -> None:
    op.drop_column("memories", "last_used_time")
