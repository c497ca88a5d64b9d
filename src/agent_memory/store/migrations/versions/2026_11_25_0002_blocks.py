"""Blocks: full-replacement core and archival blocks, their versions and archival lines.

Every key leads with ``tenant_id`` and then the owning user, so one user's blocks
sit together and the tables can be distributed by tenant.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 22:02:32.592893
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BLOCK_KEY = ["tenant_id", "user_id", "scope", "agent_id", "label"]


def _owner_columns() -> list[sa.Column[str]]:
    return [
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "blocks",
        *_owner_columns(),
        sa.Column("label", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("scope IN ('user', 'agent')", name=op.f("ck_blocks_scope")),
        sa.CheckConstraint("label IN ('core', 'archival')", name=op.f("ck_blocks_label")),
        sa.CheckConstraint("(scope = 'user') = (agent_id = '')", name=op.f("ck_blocks_agent_id")),
        sa.CheckConstraint("version >= 1", name=op.f("ck_blocks_version")),
        sa.PrimaryKeyConstraint(*BLOCK_KEY, name=op.f("pk_blocks")),
    )
    op.create_table(
        "block_versions",
        *_owner_columns(),
        sa.Column("label", sa.String(length=16), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("char_count", sa.Integer(), nullable=False),
        sa.Column("writer_user_id", sa.String(length=255), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            BLOCK_KEY,
            [f"blocks.{c}" for c in BLOCK_KEY],
            name="fk_block_versions_block",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(*BLOCK_KEY, "version", name=op.f("pk_block_versions")),
    )
    op.create_table(
        "archival_lines",
        *_owner_columns(),
        sa.Column("line_number", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id",
            "user_id",
            "scope",
            "agent_id",
            "line_number",
            name=op.f("pk_archival_lines"),
        ),
    )


def downgrade() -> None:
    op.drop_table("archival_lines")
    op.drop_table("block_versions")
    op.drop_table("blocks")
