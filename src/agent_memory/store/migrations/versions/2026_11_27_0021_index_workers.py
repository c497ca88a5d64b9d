"""Index workers say how they go: each rewrites its row every few seconds (what it
embeds with, how many it embedded, how many a second), so that any server can say
whether indexing keeps up. The service's own table: no tenant's rows.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "index_workers",
        sa.Column("worker", sa.String(length=255), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("embedded", sa.BigInteger(), nullable=False),
        sa.Column("per_second", sa.Double(), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "seen_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.PrimaryKeyConstraint("worker", name=op.f("pk_index_workers")),
    )


def downgrade() -> None:
    op.drop_table("index_workers")
