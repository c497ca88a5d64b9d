"""A note on memories, for the people who read them: empty on every row there is.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06 03:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "memories", sa.Column("note", sa.Text(), server_default=sa.text("''"), nullable=False)
    )
    op.create_check_constraint("note_length", "memories", "char_length(note) <= 2000")


def downgrade() -> None:
    op.drop_constraint("note_length", "memories", type_="check")
    op.drop_column("memories", "note")
