"""Memorize groundings, conversation snapshots and the memory audit trail.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 22:03:56.955603
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("provider", sa.String(length=64), nullable=False),
        sa.Column("conversation_id", sa.String(length=255), nullable=False),
        sa.Column("messages", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("message_count", sa.Integer(), nullable=False),
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
        sa.PrimaryKeyConstraint(
            "tenant_id", "provider", "conversation_id", name=op.f("pk_conversations")
        ),
    )
    op.create_table(
        "memory_events",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("memory_id", sa.UUID(), nullable=False),
        sa.Column("event_type", sa.String(length=16), nullable=False),
        sa.Column("actor_user_id", sa.String(length=255), nullable=False),
        sa.Column(
            "occurred_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("old_memory", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("new_memory", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.CheckConstraint(
            "event_type IN ('created', 'updated', 'pinned', 'unpinned', 'deleted')",
            name=op.f("ck_memory_events_type"),
        ),
        sa.PrimaryKeyConstraint("tenant_id", "id", name=op.f("pk_memory_events")),
    )
    op.create_index(
        "ix_memory_events_memory",
        "memory_events",
        ["tenant_id", "memory_id", "occurred_at", "id"],
        unique=False,
    )
    op.create_table(
        "memory_groundings",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("memory_id", sa.UUID(), nullable=False),
        sa.Column("ordinal", sa.SmallInteger(), nullable=False),
        sa.Column("message_position", sa.Integer(), nullable=False),
        sa.Column("provider_message_id", sa.String(length=255), nullable=False),
        sa.Column("start_character", sa.Integer(), nullable=False),
        sa.Column("end_character", sa.Integer(), nullable=False),
        sa.Column("quote", sa.Text(), nullable=False),
        sa.Column("raw_event_index", sa.Integer(), nullable=True),
        sa.Column("raw_start_character", sa.Integer(), nullable=True),
        sa.Column("raw_end_character", sa.Integer(), nullable=True),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "char_length(quote) <= 2000", name=op.f("ck_memory_groundings_quote_length")
        ),
        sa.ForeignKeyConstraint(
            ["tenant_id", "memory_id"],
            ["memories.tenant_id", "memories.id"],
            name="fk_memory_groundings_memory",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "tenant_id", "memory_id", "ordinal", name=op.f("pk_memory_groundings")
        ),
    )
    op.add_column(
        "memories", sa.Column("conversation_provider", sa.String(length=64), nullable=True)
    )
    op.add_column("memories", sa.Column("conversation_id", sa.String(length=255), nullable=True))
    op.create_index(
        "ix_memories_source_created",
        "memories",
        ["tenant_id", "source", "owner_id", "created_at"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_memories_source_created", table_name="memories")
    op.drop_column("memories", "conversation_id")
    op.drop_column("memories", "conversation_provider")
    op.drop_table("memory_groundings")
    op.drop_index("ix_memory_events_memory", table_name="memory_events")
    op.drop_table("memory_events")
    op.drop_table("conversations")
