"""Recall: stemmed lexemes on archival lines, and trigram similarity for typos.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 22:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # pg_trgm is a trusted extension (PostgreSQL 13+): a database owner may create it.
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.add_column(
        "archival_lines",
        sa.Column(
            "lexemes",
            postgresql.TSVECTOR(),
            sa.Computed("to_tsvector('english'::regconfig, content)", persisted=True),
            nullable=False,
        ),
    )


def downgrade() -> None:
    op.drop_column("archival_lines", "lexemes")
    # The extension stays: other objects of the database may use it.
