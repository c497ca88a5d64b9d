"""Typed ORM models. Every table leads with ``tenant_id`` so it can be distributed by tenant."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    Double,
    ForeignKeyConstraint,
    Index,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

Timestamp = DateTime(timezone=True)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class ApiKeyRow(Base):
    """An API key; only a hash of its secret is kept."""

    __tablename__ = "api_keys"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255))
    secret_hash: Mapped[bytes] = mapped_column(LargeBinary(32))
    name: Mapped[str] = mapped_column(String(255), server_default="")
    created_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(Timestamp)

    __table_args__ = (UniqueConstraint("id"),)


class MemoryRow(Base):
    """A memory: one key/value fact owned by exactly one agent or workspace."""

    __tablename__ = "memories"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16))
    owner_id: Mapped[str] = mapped_column(String(255))
    key: Mapped[str] = mapped_column(String(255))
    value: Mapped[str] = mapped_column(Text)
    pinned: Mapped[bool] = mapped_column(server_default=text("false"))
    importance: Mapped[int] = mapped_column(SmallInteger, server_default=text("0"))
    source: Mapped[str] = mapped_column(String(16))
    tags: Mapped[list[str]] = mapped_column(ARRAY(Text), server_default=text("'{}'"))
    confidence: Mapped[float | None] = mapped_column(Double)
    metadata_: Mapped[dict[str, Any]] = mapped_column(
        "metadata", JSONB, server_default=text("'{}'::jsonb")
    )
    version: Mapped[int] = mapped_column(server_default=text("1"))
    created_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    created_by: Mapped[str] = mapped_column(String(255))
    updated_by: Mapped[str] = mapped_column(String(255))
    conversation_provider: Mapped[str | None] = mapped_column(String(64))
    conversation_id: Mapped[str | None] = mapped_column(String(255))

    __table_args__ = (
        UniqueConstraint("tenant_id", "scope", "owner_id", "key"),
        CheckConstraint("scope IN ('agent', 'workspace')", name="scope"),
        CheckConstraint("source IN ('manual', 'auto', 'director', 'memorize')", name="source"),
        CheckConstraint("importance BETWEEN 0 AND 100", name="importance"),
        CheckConstraint("char_length(key) BETWEEN 1 AND 255", name="key_length"),
        CheckConstraint("char_length(value) BETWEEN 1 AND 2000", name="value_length"),
        Index(
            "ix_memories_listing",
            "tenant_id",
            "scope",
            "owner_id",
            text("pinned DESC"),
            text("importance DESC"),
            "key",
        ),
        Index("ix_memories_source_created", "tenant_id", "source", "owner_id", "created_at"),
    )


class MemoryGroundingRow(Base):
    """A span of a conversation that supports a memory, in the order it was given."""

    __tablename__ = "memory_groundings"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    memory_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    ordinal: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    message_position: Mapped[int]
    provider_message_id: Mapped[str] = mapped_column(String(255))
    start_character: Mapped[int]
    end_character: Mapped[int]
    quote: Mapped[str] = mapped_column(Text)
    raw_event_index: Mapped[int | None]
    raw_start_character: Mapped[int | None]
    raw_end_character: Mapped[int | None]
    metadata_: Mapped[dict[str, Any]] = mapped_column(
        "metadata", JSONB, server_default=text("'{}'::jsonb")
    )

    __table_args__ = (
        ForeignKeyConstraint(
            ["tenant_id", "memory_id"],
            ["memories.tenant_id", "memories.id"],
            ondelete="CASCADE",
            name="fk_memory_groundings_memory",
        ),
        CheckConstraint("char_length(quote) <= 2000", name="quote_length"),
    )


class ConversationRow(Base):
    """A conversation snapshot, stored once per (provider, conversation id), updated in place."""

    __tablename__ = "conversations"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    message_count: Mapped[int]
    created_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())


class MemoryEventRow(Base):
    """The audit trail: who changed a memory, when, from what to what. Outlives the memory."""

    __tablename__ = "memory_events"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    memory_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True))
    event_type: Mapped[str] = mapped_column(String(16))
    actor_user_id: Mapped[str] = mapped_column(String(255))
    occurred_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    old_memory: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    new_memory: Mapped[dict[str, Any] | None] = mapped_column(JSONB)

    __table_args__ = (
        Index("ix_memory_events_memory", "tenant_id", "memory_id", "occurred_at", "id"),
        CheckConstraint(
            "event_type IN ('created', 'updated', 'pinned', 'unpinned', 'deleted')", name="type"
        ),
    )


class AgentSettingsRow(Base):
    """Per-agent switches; an agent without a row reads as the defaults."""

    __tablename__ = "agent_settings"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    memory_enabled: Mapped[bool] = mapped_column(server_default=text("false"))
    updated_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    updated_by: Mapped[str] = mapped_column(String(255))


class BlockRow(Base):
    """A full-replacement block of one user, or of that user plus one agent.

    ``agent_id`` is empty for the user scope so the key has no NULLs.
    ``updated_at`` is the compare-and-set token: every write makes it strictly later.
    """

    __tablename__ = "blocks"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    label: Mapped[str] = mapped_column(String(16), primary_key=True)
    content: Mapped[str] = mapped_column(Text)
    version: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(Timestamp, server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(Timestamp)

    __table_args__ = (
        CheckConstraint("scope IN ('user', 'agent')", name="scope"),
        CheckConstraint("label IN ('core', 'archival')", name="label"),
        CheckConstraint("(scope = 'user') = (agent_id = '')", name="agent_id"),
        CheckConstraint("version >= 1", name="version"),
    )


class BlockVersionRow(Base):
    """One accepted write of a block; the newest few are kept, and go with the block."""

    __tablename__ = "block_versions"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    label: Mapped[str] = mapped_column(String(16), primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    content: Mapped[str] = mapped_column(Text)
    char_count: Mapped[int]
    writer_user_id: Mapped[str] = mapped_column(String(255))
    written_at: Mapped[datetime] = mapped_column(Timestamp)

    __table_args__ = (
        ForeignKeyConstraint(
            ["tenant_id", "user_id", "scope", "agent_id", "label"],
            [
                "blocks.tenant_id",
                "blocks.user_id",
                "blocks.scope",
                "blocks.agent_id",
                "blocks.label",
            ],
            ondelete="CASCADE",
            name="fk_block_versions_block",
        ),
    )


class ArchivalLineRow(Base):
    """A non-empty line of an archival block, under its 1-based line number in the block.

    Rewritten with the block in one transaction, so recall never sees half a write.
    """

    __tablename__ = "archival_lines"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    line_number: Mapped[int] = mapped_column(primary_key=True)
    content: Mapped[str] = mapped_column(Text)


__all__ = [
    "AgentSettingsRow",
    "ApiKeyRow",
    "ArchivalLineRow",
    "Base",
    "BlockRow",
    "BlockVersionRow",
    "ConversationRow",
    "MemoryEventRow",
    "MemoryGroundingRow",
    "MemoryRow",
]
