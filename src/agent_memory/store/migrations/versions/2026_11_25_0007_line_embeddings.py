"""Line embeddings: a vector per archival line when an embedder is configured.

A plain ``REAL[]`` works on every PostgreSQL; pgvector is only needed to compare them.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 23:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "archival_lines",
        sa.Column("embedding", postgresql.ARRAY(sa.REAL()), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("archival_lines", "embedding")
