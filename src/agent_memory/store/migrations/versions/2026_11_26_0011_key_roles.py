"""Give every API key a role.

``reader`` reads, ``editor`` also writes MANUAL memories and blocks, ``orchestrator``
does everything. Keys created before roles existed could do everything, so they
become orchestrators; adding a column with a constant default rewrites no row.

Replicas of the code before it keep working on this schema, but they do not check
roles: stop them before handing out reader or editor keys.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "api_keys",
        sa.Column("role", sa.Text(), server_default="orchestrator", nullable=False),
    )
    op.create_check_constraint(
        op.f("ck_api_keys_role"), "api_keys", "role IN ('reader', 'editor', 'orchestrator')"
    )


def downgrade() -> None:
    op.drop_constraint(op.f("ck_api_keys_role"), "api_keys", type_="check")
    op.drop_column("api_keys", "role")
