"""Initial schema: API keys, memories and agent settings.

Revision ID: 0001
Revises:
Create Date: 2026-11-25 21:50:13.929284
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agent_settings",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("memory_enabled", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("updated_by", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "agent_id", name=op.f("pk_agent_settings")),
    )
    op.create_table(
        "api_keys",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("secret_hash", sa.LargeBinary(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), server_default="", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("id", name=op.f("uq_api_keys_id")),
    )
    op.create_table(
        "memories",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("pinned", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("importance", sa.SmallInteger(), server_default=sa.text("0"), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column(
            "tags", postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False
        ),
        sa.Column("confidence", sa.Double(), nullable=True),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("updated_by", sa.String(length=255), nullable=False),
        sa.CheckConstraint("scope IN ('agent', 'workspace')", name=op.f("ck_memories_scope")),
        sa.CheckConstraint(
            "source IN ('manual', 'auto', 'director', 'memorize')", name=op.f("ck_memories_source")
        ),
        sa.CheckConstraint(
            "char_length(key) BETWEEN 1 AND 255", name=op.f("ck_memories_key_length")
        ),
        sa.CheckConstraint(
            "char_length(value) BETWEEN 1 AND 2000", name=op.f("ck_memories_value_length")
        ),
        sa.CheckConstraint("importance BETWEEN 0 AND 100", name=op.f("ck_memories_importance")),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_memories")),
        sa.UniqueConstraint(
            "tenant_id",
            "scope",
            "owner_id",
            "key",
            name=op.f("uq_memories_tenant_id_scope_owner_id_key"),
        ),
    )
    op.create_index(
        "ix_memories_listing",
        "memories",
        [
            "tenant_id",
            "scope",
            "owner_id",
            sa.literal_column("pinned DESC"),
            sa.literal_column("importance DESC"),
            "key",
        ],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_memories_listing", table_name="memories")
    op.drop_table("memories")
    op.drop_table("api_keys")
    op.drop_table("agent_settings")
