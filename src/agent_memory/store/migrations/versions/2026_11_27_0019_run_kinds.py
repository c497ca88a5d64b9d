"""Chat turns apart from scheduled runs, and the review-decisions switch: a run records
what started it (only scheduled runs count toward the reset warning), and an agent's
settings say whether a render adds its recent decisions by default.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "agent_runs",
        sa.Column("kind", sa.String(16), server_default=sa.text("'scheduled'"), nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_agent_runs_kind"), "agent_runs", "kind IN ('scheduled', 'chat')"
    )
    op.add_column(
        "agent_settings",
        sa.Column(
            "review_decisions", sa.Boolean(), server_default=sa.text("false"), nullable=False
        ),
    )


def downgrade() -> None:
    op.drop_column("agent_settings", "review_decisions")
    op.drop_constraint(op.f("ck_agent_runs_kind"), "agent_runs", type_="check")
    op.drop_column("agent_runs", "kind")
