"""Why a memory is held for review (the screen that held it, or a caller's request), so
the person who reviews it knows what to check: none on every row there is, holds made
before included.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07 05:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("hold_reason", sa.Text(), nullable=True))
    op.create_check_constraint(
        op.f("ck_memories_hold_reason"),
        "memories",
        "hold_reason IN ('instruction', 'credential', 'requested')",
    )
    op.create_check_constraint(
        op.f("ck_memories_hold_reason_held"), "memories", "held_for_review OR hold_reason IS NULL"
    )


def downgrade() -> None:
    op.drop_column("memories", "hold_reason")
