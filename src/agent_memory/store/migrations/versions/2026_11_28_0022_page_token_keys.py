"""Page tokens are sealed with a key every server of the database shares: one row a
key, the newest sealing, an older one opening its tokens until it expires. The
service's own table: no tenant's rows.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "page_token_keys",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("secret", sa.LargeBinary(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("id > 0", name=op.f("ck_page_token_keys_id_positive")),
        sa.CheckConstraint(
            "octet_length(secret) = 32", name=op.f("ck_page_token_keys_secret_length")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_page_token_keys")),
    )


def downgrade() -> None:
    op.drop_table("page_token_keys")
