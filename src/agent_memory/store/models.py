"""Typed ORM models. Every table leads with ``tenant_id`` so it can be distributed by tenant."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    REAL,
    BigInteger,
    CheckConstraint,
    Computed,
    DateTime,
    Double,
    ForeignKeyConstraint,
    Index,
    Integer,
    Interval,
    LargeBinary,
    MetaData,
    Numeric,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from agent_memory.domain.blocks import BlockLabel, BlockScope
from agent_memory.domain.identity import Role
from agent_memory.domain.memory import HoldReason, MemorySource
from agent_memory.store.columns import (
    EVIDENCE,
    FULL,
    INTERNAL,
    KEPT,
    MERGED,
    OUTPUT,
    PATCHED,
    WRITTEN,
    policy,
)
from agent_memory.store.search import memory_lexemes, memory_owner
from agent_memory.store.vectors import line_hash, memory_hash, unscreened

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

Timestamp = DateTime(timezone=True)


def one_of(column: str, values: type[StrEnum]) -> CheckConstraint:
    """The check that ``column`` holds one of an enum's values, in the enum's order, named
    as the column: the domain's enum is the one list of them."""
    listed = ", ".join(f"'{v.value}'" for v in values)
    return CheckConstraint(f"{column} IN ({listed})", name=column)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def index_queue(table: str, hashed: str) -> tuple[Index, Index]:
    """The background indexer's two ways in: rows whose text changed since their vector
    was made (or that have none; ``hashed`` is the hash of their text now), and rows by
    the model that made their vector (after a change of model, those of the old one)."""
    return (
        Index(
            f"ix_{table}_unindexed",
            "tenant_id",
            postgresql_where=text(f"embedded_hash IS DISTINCT FROM {hashed}"),
        ),
        Index(
            f"ix_{table}_embedding_model",
            "embedding_model",
            postgresql_where=text("embedding_model IS NOT NULL"),
        ),
    )


class ApiKeyRow(Base):
    """An API key; only a hash of its secret is kept."""

    __tablename__ = "api_keys"

    tenant_id: Mapped[str] = mapped_column(
        String(255), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, info=policy(OUTPUT | WRITTEN))
    user_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    secret_hash: Mapped[bytes] = mapped_column(LargeBinary(32), info=policy(OUTPUT | WRITTEN))
    name: Mapped[str] = mapped_column(String(255), server_default="", info=policy(OUTPUT | WRITTEN))
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    revoked_at: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(OUTPUT))
    role: Mapped[str] = mapped_column(
        Text, server_default="orchestrator", info=policy(OUTPUT | WRITTEN)
    )

    __table_args__ = (
        UniqueConstraint("id"),
        one_of("role", Role),
    )


class MemoryRow(Base):
    """A memory: one key/value fact owned by exactly one agent or workspace."""

    __tablename__ = "memories"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    scope: Mapped[str] = mapped_column(String(16), info=policy(OUTPUT | WRITTEN))
    owner_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    key: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN | PATCHED))
    value: Mapped[str] = mapped_column(Text, info=policy(OUTPUT | WRITTEN | MERGED | PATCHED))
    pinned: Mapped[bool] = mapped_column(
        server_default=text("false"), info=policy(OUTPUT | WRITTEN | MERGED | PATCHED)
    )
    importance: Mapped[int] = mapped_column(
        SmallInteger, server_default=text("0"), info=policy(OUTPUT | WRITTEN | MERGED | PATCHED)
    )
    source: Mapped[str] = mapped_column(String(16), info=policy(OUTPUT | WRITTEN))
    # Evidence: what the writer knew of where the fact came from, replaced as a whole.
    tags: Mapped[list[str]] = mapped_column(
        ARRAY(Text), server_default=text("'{}'"), info=policy(OUTPUT | WRITTEN | EVIDENCE | PATCHED)
    )
    confidence: Mapped[float | None] = mapped_column(
        Double, info=policy(OUTPUT | WRITTEN | EVIDENCE)
    )
    metadata_: Mapped[dict[str, Any]] = mapped_column(
        "metadata",
        JSONB,
        server_default=text("'{}'::jsonb"),
        info=policy(OUTPUT | WRITTEN | EVIDENCE),
    )
    version: Mapped[int] = mapped_column(
        server_default=text("1"), info=policy(OUTPUT, on_change="{t}.version + 1")
    )
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT, on_change="clock_timestamp()")
    )
    created_by: Mapped[str] = mapped_column(String(255), info=policy(WRITTEN, value="%(actor)s"))
    updated_by: Mapped[str] = mapped_column(
        String(255), info=policy(WRITTEN, value="%(actor)s", on_change="%(actor)s")
    )
    conversation_provider: Mapped[str | None] = mapped_column(
        String(64), info=policy(OUTPUT | WRITTEN | EVIDENCE)
    )
    conversation_id: Mapped[str | None] = mapped_column(
        String(255), info=policy(OUTPUT | WRITTEN | EVIDENCE)
    )
    # AIP-214: past it the memory is invisible, and the sweeper deletes it. A write
    # gives an instant or a time to live, counted on the database's clock.
    expire_time: Mapped[datetime | None] = mapped_column(
        Timestamp,
        info=policy(
            OUTPUT | WRITTEN | MERGED | PATCHED,
            value="coalesce(%(expire_time)s::timestamptz, clock_timestamp() + %(ttl)s::interval)",
        ),
    )
    # The memory that replaced this one; set, it is left out of listings, rendering and
    # recall but stays readable by id. Not a foreign key: the replacement may be deleted.
    # Writing the key again brings it back.
    superseded_by: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), info=policy(OUTPUT, on_merge="NULL")
    )
    # When the memory last reached a model (rendered or recalled); see mark_used.
    last_used_time: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(OUTPUT))
    # When the fact holds in the world (NULL: open at that end); rendering and recall
    # show it only within. Superseding the memory ends the period (see _SUPERSEDE).
    valid_start_time: Mapped[datetime | None] = mapped_column(
        Timestamp, info=policy(OUTPUT | WRITTEN | MERGED | PATCHED)
    )
    valid_end_time: Mapped[datetime | None] = mapped_column(
        Timestamp, info=policy(OUTPUT | WRITTEN | MERGED | PATCHED)
    )
    # A note for the people who read the memory; empty when none.
    note: Mapped[str] = mapped_column(
        Text, server_default=text("''"), info=policy(OUTPUT | WRITTEN | MERGED | PATCHED)
    )
    # Kept out of prompts and recall until a person clears it: set by the index worker
    # when a learned screen reads a memory a person did not write as an instruction to
    # the assistant or as a credential (detectors/instruction_classifier.py,
    # secret_classifier.py), or by a person.
    held_for_review: Mapped[bool] = mapped_column(
        server_default=text("false"), info=policy(OUTPUT | PATCHED)
    )
    # Why it is held: 'instruction' or 'credential' (the screen that held it) or
    # 'requested' (a caller held it); NULL when it is not held, or when it was held
    # before reasons were kept. Set with the hold, never by a write's field.
    hold_reason: Mapped[str | None] = mapped_column(Text, info=policy(OUTPUT))
    # Recall by meaning, as for archival lines.
    embedding: Mapped[list[float] | None] = mapped_column(
        ARRAY(REAL), nullable=True, info=policy(INTERNAL)
    )
    embedding_model: Mapped[str | None] = mapped_column(Text, info=policy(INTERNAL))
    embedded_hash: Mapped[int | None] = mapped_column(BigInteger, info=policy(INTERNAL))
    index_lease_until: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(INTERNAL))
    # The hash of the text (as memory_hash) the learned screens last read, or a person
    # let go from a hold: a memory is judged while its text is another, whatever its
    # source, unless a person wrote it. NULL for one never read, as one embedded before
    # the screens existed (the worker judges it from the vector it has; see
    # ix_memories_unscreened).
    screened_hash: Mapped[int | None] = mapped_column(BigInteger, info=policy(INTERNAL))
    # The person who wrote the present text (a key of the editor role: Principal.person),
    # NULL when no person did: their own words, which the screens take as read and a
    # prompt marks as theirs (a pin or a note by someone else leaves it). Kept in the
    # audit events, for a render as of a past instant.
    text_by: Mapped[str | None] = mapped_column(String(255), info=policy(KEPT))

    __table_args__ = (
        *index_queue("memories", memory_hash()),
        # Current memories with a vector of their text the screens have not read
        # (vectors.unscreened): those embedded before the screens existed, and any
        # whose judgement a change overtook, until the worker judges them.
        Index(
            "ix_memories_unscreened",
            "embedding_model",
            "tenant_id",
            postgresql_where=text(unscreened()),
        ),
        UniqueConstraint("tenant_id", "scope", "owner_id", "key"),
        CheckConstraint("scope IN ('agent', 'workspace')", name="scope"),
        one_of("source", MemorySource),
        CheckConstraint("importance BETWEEN 0 AND 100", name="importance"),
        CheckConstraint("char_length(key) BETWEEN 1 AND 255", name="key_length"),
        CheckConstraint("char_length(value) BETWEEN 1 AND 2000", name="value_length"),
        CheckConstraint("valid_end_time > valid_start_time", name="valid_period"),
        CheckConstraint("char_length(note) <= 2000", name="note_length"),
        one_of("hold_reason", HoldReason),
        CheckConstraint("held_for_review OR hold_reason IS NULL", name="hold_reason_held"),
        Index(
            "ix_memories_listing",
            "tenant_id",
            "scope",
            "owner_id",
            text("pinned DESC"),
            text("importance DESC"),
            "key",
        ),
        # Director learnings only: a smaller index, kept only by the rows it serves.
        Index(
            "ix_memories_learnings",
            "tenant_id",
            "owner_id",
            "created_at",
            postgresql_where=text("source = 'director'"),
        ),
        # The sweeper's: only rows that expire.
        Index(
            "ix_memories_expiry", "expire_time", postgresql_where=text("expire_time IS NOT NULL")
        ),
        # Recall's way to an owner's memories that hold a term (see store/search.py).
        Index(
            "ix_memories_search",
            text(memory_owner()),
            text(memory_lexemes()),
            postgresql_using="gin",
            postgresql_where=text("superseded_by IS NULL"),
        ),
    )


class MemoryGroundingRow(Base):
    """A span of a conversation that supports a memory, in the order it was given."""

    __tablename__ = "memory_groundings"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    memory_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, info=policy(WRITTEN)
    )
    ordinal: Mapped[int] = mapped_column(
        SmallInteger, primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    message_position: Mapped[int] = mapped_column(info=policy(OUTPUT | WRITTEN))
    provider_message_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    start_character: Mapped[int] = mapped_column(info=policy(OUTPUT | WRITTEN))
    end_character: Mapped[int] = mapped_column(info=policy(OUTPUT | WRITTEN))
    quote: Mapped[str] = mapped_column(Text, info=policy(OUTPUT | WRITTEN))
    raw_event_index: Mapped[int | None] = mapped_column(info=policy(OUTPUT | WRITTEN))
    raw_start_character: Mapped[int | None] = mapped_column(info=policy(OUTPUT | WRITTEN))
    raw_end_character: Mapped[int | None] = mapped_column(info=policy(OUTPUT | WRITTEN))
    metadata_: Mapped[dict[str, Any]] = mapped_column(
        "metadata", JSONB, server_default=text("'{}'::jsonb"), info=policy(OUTPUT | WRITTEN)
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

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    provider: Mapped[str] = mapped_column(
        String(64), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    conversation_id: Mapped[str] = mapped_column(
        String(255), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSONB, info=policy(FULL | WRITTEN))
    message_count: Mapped[int] = mapped_column(info=policy(OUTPUT | WRITTEN))
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    # The raw provider events, oldest first, each a string as the provider sent it.
    raw_events: Mapped[list[str]] = mapped_column(
        JSONB, server_default=text("'[]'::jsonb"), info=policy(FULL | WRITTEN)
    )
    raw_event_count: Mapped[int] = mapped_column(
        server_default=text("0"), info=policy(OUTPUT | WRITTEN)
    )

    __table_args__ = (
        # ListConversations: most recently updated first.
        Index("ix_conversations_updated", "tenant_id", "updated_at", "provider", "conversation_id"),
    )


class MemoryEventRow(Base):
    """The audit trail: who changed a memory, when, from what to what. Outlives the memory."""

    __tablename__ = "memory_events"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(INTERNAL))
    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, info=policy(OUTPUT))
    memory_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), info=policy(OUTPUT))
    event_type: Mapped[str] = mapped_column(String(16), info=policy(OUTPUT))
    actor_user_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT))
    occurred_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    old_memory: Mapped[dict[str, Any] | None] = mapped_column(JSONB, info=policy(OUTPUT))
    new_memory: Mapped[dict[str, Any] | None] = mapped_column(JSONB, info=policy(OUTPUT))

    __table_args__ = (
        Index("ix_memory_events_memory", "tenant_id", "memory_id", "occurred_at", "id"),
        # The sweeper reads the events that crossed the horizon of the history kept, in
        # the order they did, after the point its last sweep reached.
        Index("ix_memory_events_at", "occurred_at", "id"),
        # Forgetting finds a subject's events by the owner their snapshots name.
        Index(
            "ix_memory_events_owner",
            "tenant_id",
            text("(coalesce(new_memory, old_memory) ->> 'owner_id')"),
        ),
        CheckConstraint(
            "event_type IN ('created', 'updated', 'pinned', 'unpinned', 'deleted', 'superseded')",
            name="type",
        ),
    )


class UsageRecordRow(Base):
    """The usage ledger: one row per model call, under its synthetic session id."""

    __tablename__ = "usage_records"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True),
        primary_key=True,
        info=policy(OUTPUT | WRITTEN, value="gen_random_uuid()"),
    )
    synthetic_session_id: Mapped[str] = mapped_column(String(300), info=policy(OUTPUT | WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    model: Mapped[str] = mapped_column(String(128), info=policy(OUTPUT | WRITTEN))
    input_tokens: Mapped[int] = mapped_column(BigInteger, info=policy(OUTPUT | WRITTEN))
    output_tokens: Mapped[int] = mapped_column(BigInteger, info=policy(OUTPUT | WRITTEN))
    cost_usd: Mapped[Decimal] = mapped_column(Numeric(14, 8), info=policy(OUTPUT | WRITTEN))
    outcome: Mapped[str] = mapped_column(String(32), info=policy(OUTPUT | WRITTEN))
    recorded_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )

    __table_args__ = (
        Index("ix_usage_records_session", "tenant_id", "synthetic_session_id", "recorded_at"),
        Index("ix_usage_records_time", "tenant_id", "recorded_at"),
    )


class ExtractionJobRow(Base):
    """A queued extraction pass, run by the server's workers once the run settles."""

    __tablename__ = "extraction_jobs"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    synthetic_session_id: Mapped[str] = mapped_column(String(300), info=policy(OUTPUT | WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    workspace_id: Mapped[str | None] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    session_id: Mapped[str | None] = mapped_column(String(255), info=policy(WRITTEN))
    chain_id: Mapped[str | None] = mapped_column(String(255), info=policy(WRITTEN))
    actor_user_id: Mapped[str] = mapped_column(String(255), info=policy(WRITTEN, value="%(actor)s"))
    transcript: Mapped[str] = mapped_column(Text, info=policy(WRITTEN))
    status: Mapped[str] = mapped_column(String(16), server_default="queued", info=policy(OUTPUT))
    attempts: Mapped[int] = mapped_column(server_default=text("0"), info=policy(OUTPUT))
    run_after: Mapped[datetime] = mapped_column(
        Timestamp,
        server_default=func.now(),
        info=policy(OUTPUT | WRITTEN, value="now() + %(settle)s"),
    )
    lease_until: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(INTERNAL))
    outcome: Mapped[str | None] = mapped_column(String(32), info=policy(OUTPUT))
    detail: Mapped[str] = mapped_column(Text, server_default="", info=policy(OUTPUT))
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    # What the pass did once done (written ids, dropped facts, usage); NULL before.
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB, info=policy(OUTPUT))

    __table_args__ = (
        CheckConstraint("status IN ('queued', 'running', 'done')", name="status"),
        # One pending pass per run: a re-queue before it starts replaces it (the run
        # has not settled yet).
        Index(
            "uq_extraction_jobs_pending",
            "tenant_id",
            "synthetic_session_id",
            unique=True,
            postgresql_where=text("status = 'queued'"),
        ),
        Index("ix_extraction_jobs_due", "status", "run_after"),
    )


class AgentSettingsRow(Base):
    """Per-agent switches; an agent without a row reads as the defaults."""

    __tablename__ = "agent_settings"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(
        String(255), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    memory_enabled: Mapped[bool] = mapped_column(
        server_default=text("false"), info=policy(OUTPUT | WRITTEN)
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    updated_by: Mapped[str] = mapped_column(String(255), info=policy(WRITTEN, value="%(actor)s"))
    active_memory_enabled: Mapped[bool] = mapped_column(
        server_default=text("false"), info=policy(OUTPUT | WRITTEN)
    )
    review_decisions: Mapped[bool] = mapped_column(
        server_default=text("false"), info=policy(OUTPUT | WRITTEN)
    )
    # How far a use (a render, a recall) moves the expiry of the agent's memories
    # ahead of it; zero is off. See mark_used.
    expiry_slide: Mapped[timedelta] = mapped_column(
        Interval, server_default=text("'0'"), info=policy(OUTPUT | WRITTEN)
    )


class WorkspaceSettingsRow(Base):
    """Per-workspace settings; a workspace without a row reads as the defaults."""

    __tablename__ = "workspace_settings"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    workspace_id: Mapped[str] = mapped_column(
        String(255), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    # As agent_settings.expiry_slide, for the workspace's memories.
    expiry_slide: Mapped[timedelta] = mapped_column(
        Interval, server_default=text("'0'"), info=policy(OUTPUT | WRITTEN)
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    updated_by: Mapped[str] = mapped_column(String(255), info=policy(WRITTEN, value="%(actor)s"))


class BlockRow(Base):
    """A full-replacement block of one user, of that user plus one agent, or of a
    workspace of the tenant.

    ``agent_id`` holds the block's owner: the agent's id for the agent scope, the
    workspace's for the workspace scope, empty for the user scope, so the key has no
    NULLs. A workspace block is the tenant's, shared by its users: its ``user_id`` is
    empty. ``updated_at`` is the compare-and-set token: every write makes it strictly
    later.
    """

    __tablename__ = "blocks"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    scope: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(OUTPUT | WRITTEN))
    agent_id: Mapped[str] = mapped_column(
        String(255), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    label: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(OUTPUT | WRITTEN))
    content: Mapped[str] = mapped_column(Text, info=policy(OUTPUT | WRITTEN))
    version: Mapped[int] = mapped_column(BigInteger, info=policy(OUTPUT | WRITTEN, value="1"))
    created_at: Mapped[datetime] = mapped_column(
        Timestamp,
        server_default=func.now(),
        info=policy(OUTPUT | WRITTEN, value="statement_timestamp()"),
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp, info=policy(OUTPUT | WRITTEN, value="statement_timestamp()")
    )

    __table_args__ = (
        one_of("scope", BlockScope),
        one_of("label", BlockLabel),
        CheckConstraint("(scope = 'user') = (agent_id = '')", name="agent_id"),
        CheckConstraint("(scope = 'workspace') = (user_id = '')", name="user_id"),
        CheckConstraint("version >= 1", name="version"),
    )


class BlockVersionRow(Base):
    """One accepted write of a block; the newest few are kept, and go with the block."""

    __tablename__ = "block_versions"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    scope: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    label: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(WRITTEN))
    version: Mapped[int] = mapped_column(
        BigInteger, primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    content: Mapped[str] = mapped_column(Text, info=policy(OUTPUT | WRITTEN))
    char_count: Mapped[int] = mapped_column(info=policy(OUTPUT | WRITTEN))
    writer_user_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    written_at: Mapped[datetime] = mapped_column(Timestamp, info=policy(OUTPUT | WRITTEN))

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

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    scope: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    line_number: Mapped[int] = mapped_column(primary_key=True, info=policy(OUTPUT | WRITTEN))
    # The line's place among the block's non-empty lines (1, 2, ...): neighbours are
    # one ordinal apart, whatever blank lines lie between them.
    ordinal: Mapped[int] = mapped_column(info=policy(OUTPUT | WRITTEN))
    content: Mapped[str] = mapped_column(Text, info=policy(OUTPUT | WRITTEN))
    # Stemmed lexemes for recall, computed by PostgreSQL from the content.
    lexemes: Mapped[str] = mapped_column(
        TSVECTOR,
        Computed("to_tsvector('english'::regconfig, content)", persisted=True),
        info=policy(INTERNAL),
    )
    # Recall by meaning: the line's vector, the model that made it and a hash of the
    # text it was made from (see IndexedColumns).
    embedding: Mapped[list[float] | None] = mapped_column(
        ARRAY(REAL), nullable=True, info=policy(INTERNAL)
    )
    embedding_model: Mapped[str | None] = mapped_column(Text, info=policy(INTERNAL))
    embedded_hash: Mapped[int | None] = mapped_column(BigInteger, info=policy(INTERNAL))
    index_lease_until: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(INTERNAL))

    __table_args__ = (
        Index("ix_archival_lines_ordinal", "tenant_id", "user_id", "scope", "agent_id", "ordinal"),
        *index_queue("archival_lines", line_hash()),
    )


class ArchivalTermRow(Base):
    """One distinct lexeme of an archival block, how many of its lines hold it and their
    ordinals (its postings), rewritten with the block: recall weighs a query term by its
    count and reads the lines of the rarest terms first, by their ordinals; and matches
    a misspelt term against the block's lexemes (in byte order, so that those sharing a
    term's first letters are one range of the key)."""

    __tablename__ = "archival_terms"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    scope: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    lexeme: Mapped[str] = mapped_column(Text(collation="C"), primary_key=True, info=policy(WRITTEN))
    lines: Mapped[int] = mapped_column(info=policy(WRITTEN))
    ordinals: Mapped[list[int]] = mapped_column(ARRAY(Integer), info=policy(WRITTEN))


class ArchivalVocabularyRow(Base):
    """What recall needs of one archival block as a whole, rewritten with it: how many
    non-empty lines it has, their lexemes counted together (for the lines' average
    length), and who speaks in it. Its distinct lexemes are its terms."""

    __tablename__ = "archival_vocabulary"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    user_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    scope: Mapped[str] = mapped_column(String(16), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    line_count: Mapped[int] = mapped_column(server_default=text("0"), info=policy(WRITTEN))
    lexeme_total: Mapped[int] = mapped_column(
        BigInteger, server_default=text("0"), info=policy(WRITTEN)
    )
    # Who speaks in the block: names that open two lines or more as "Name: text".
    speakers: Mapped[list[str]] = mapped_column(
        ARRAY(Text), server_default=text("'{}'"), info=policy(WRITTEN)
    )


class IndexWorkerRow(Base):
    """An index worker heard from lately: the service's own process, no tenant's row.
    Each worker rewrites its row every few seconds and deletes it when it stops; rows
    not rewritten for an hour are deleted by the others."""

    __tablename__ = "index_workers"

    worker: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    model: Mapped[str] = mapped_column(Text, info=policy(WRITTEN))
    embedded: Mapped[int] = mapped_column(BigInteger, info=policy(WRITTEN))
    per_second: Mapped[float] = mapped_column(Double, info=policy(WRITTEN))
    started_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    seen_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )


class HistorySweepRow(Base):
    """How far the history sweep has gone: the service's own, no tenant's row, and only
    one. Events at or before (``swept_at``, ``swept_id``) have crossed the horizon of the
    history kept and been pruned against; events are written at the time they record,
    so none arrives behind this point later."""

    __tablename__ = "history_sweep"

    one: Mapped[bool] = mapped_column(
        primary_key=True, server_default=text("true"), info=policy(WRITTEN)
    )
    swept_at: Mapped[datetime] = mapped_column(Timestamp, info=policy(WRITTEN))
    swept_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), info=policy(WRITTEN))

    __table_args__ = (CheckConstraint("one", name="one"),)


class PageTokenKeyRow(Base):
    """A key that seals page tokens: the service's own, no tenant's row; every server
    of the database seals and opens with the same keys. The newest seals; an older one
    still opens the tokens it sealed until ``expires_at``, set when a rotation made a
    newer one. Keys past their expiry are deleted by the next rotation."""

    __tablename__ = "page_token_keys"

    id: Mapped[int] = mapped_column(
        Integer, primary_key=True, autoincrement=False, info=policy(OUTPUT | WRITTEN)
    )
    secret: Mapped[bytes] = mapped_column(LargeBinary, info=policy(OUTPUT | WRITTEN))
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, server_default=func.now(), info=policy(OUTPUT)
    )
    expires_at: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(OUTPUT))

    __table_args__ = (
        CheckConstraint("id > 0", name="id_positive"),
        CheckConstraint("octet_length(secret) = 32", name="secret_length"),
    )


class ActiveSessionRow(Base):
    """The model session an agent's chat and scheduled runs share, one row per agent.

    ``last_reset_at`` anchors the runs-since-reset count; enabling active memory and
    resetting it both clear ``session_id`` and move the anchor. The row is the lock that
    serialises runs finishing at once.
    """

    __tablename__ = "active_sessions"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    session_id: Mapped[str | None] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    session_updated_at: Mapped[datetime | None] = mapped_column(
        Timestamp, info=policy(OUTPUT | WRITTEN)
    )
    last_reset_at: Mapped[datetime] = mapped_column(Timestamp, info=policy(OUTPUT | WRITTEN))
    updated_at: Mapped[datetime] = mapped_column(Timestamp, info=policy(WRITTEN))

    __table_args__ = (
        CheckConstraint("(session_id IS NULL) = (session_updated_at IS NULL)", name="session"),
    )


class AgentRunRow(Base):
    """One finished run of an agent: the session it resumed and the one it left behind.

    ``carried`` says the run's session id became the agent's shared session (active
    memory was on and the run reported one); only carried runs count since a reset.
    """

    __tablename__ = "agent_runs"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    run_id: Mapped[str] = mapped_column(
        String(255), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    session_id_before: Mapped[str | None] = mapped_column(
        String(255), info=policy(OUTPUT | WRITTEN)
    )
    session_id_after: Mapped[str | None] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    carried: Mapped[bool] = mapped_column(info=policy(OUTPUT | WRITTEN))
    recorded_at: Mapped[datetime] = mapped_column(Timestamp, info=policy(OUTPUT | WRITTEN))
    kind: Mapped[str] = mapped_column(
        String(16), server_default=text("'scheduled'"), info=policy(OUTPUT | WRITTEN)
    )
    # When its prompt was rendered, as the orchestrator said: unset when it did not.
    render_time: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(OUTPUT | WRITTEN))

    __table_args__ = (
        Index("ix_agent_runs_recorded", "tenant_id", "agent_id", "recorded_at"),
        CheckConstraint("char_length(run_id) BETWEEN 1 AND 255", name="run_id_length"),
        CheckConstraint("NOT carried OR session_id_after IS NOT NULL", name="carried"),
        CheckConstraint("kind IN ('scheduled', 'chat')", name="kind"),
    )


class CardTypeRow(Base):
    """A kind of decision card: whether it may be re-examined, and its action words."""

    __tablename__ = "card_types"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    name: Mapped[str] = mapped_column(String(64), primary_key=True, info=policy(OUTPUT | WRITTEN))
    re_examinable: Mapped[str] = mapped_column(String(16), info=policy(OUTPUT | WRITTEN))
    actions: Mapped[list[str]] = mapped_column(
        ARRAY(Text), server_default=text("'{}'"), info=policy(OUTPUT | WRITTEN)
    )
    decision_actions: Mapped[list[str]] = mapped_column(
        ARRAY(Text), server_default=text("'{}'"), info=policy(OUTPUT | WRITTEN)
    )
    created_at: Mapped[datetime] = mapped_column(
        Timestamp,
        server_default=func.now(),
        info=policy(OUTPUT | WRITTEN, value="statement_timestamp()"),
    )
    updated_at: Mapped[datetime] = mapped_column(
        Timestamp,
        server_default=func.now(),
        info=policy(OUTPUT | WRITTEN, value="statement_timestamp()"),
    )

    __table_args__ = (
        CheckConstraint(
            "re_examinable IN ('never', 'always', 'until_resolved')", name="re_examinable"
        ),
    )


class DecisionRow(Base):
    """One run's structured result. ``result`` is written once and never changed."""

    __tablename__ = "decisions"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    run_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    agent_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    card_type: Mapped[str] = mapped_column(String(64), info=policy(OUTPUT | WRITTEN))
    action: Mapped[str] = mapped_column(String(32), info=policy(OUTPUT | WRITTEN))
    summary: Mapped[str] = mapped_column(String(200), info=policy(OUTPUT | WRITTEN))
    result: Mapped[dict[str, Any]] = mapped_column(JSONB, info=policy(FULL | WRITTEN))
    resolution_status: Mapped[str] = mapped_column(
        String(16), info=policy(OUTPUT | WRITTEN, value="'open'")
    )
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, info=policy(OUTPUT | WRITTEN, value="clock_timestamp()")
    )
    resolved_at: Mapped[datetime | None] = mapped_column(Timestamp, info=policy(OUTPUT))

    __table_args__ = (
        UniqueConstraint("tenant_id", "run_id"),
        ForeignKeyConstraint(
            ["tenant_id", "card_type"],
            ["card_types.tenant_id", "card_types.name"],
            name="fk_decisions_card_type",
        ),
        Index("ix_decisions_recent", "tenant_id", "agent_id", "created_at", "id"),
        CheckConstraint(
            "resolution_status IN ('open', 'resolved', 'expired')", name="resolution_status"
        ),
        CheckConstraint("(resolution_status = 'open') = (resolved_at IS NULL)", name="resolved_at"),
    )


class ReexaminationRow(Base):
    """A later run's conviction on a decision; an annotation beside it, never a change to it."""

    __tablename__ = "reexaminations"

    tenant_id: Mapped[str] = mapped_column(String(255), primary_key=True, info=policy(WRITTEN))
    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, info=policy(OUTPUT | WRITTEN)
    )
    parent_decision_id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), info=policy(OUTPUT | WRITTEN)
    )
    run_id: Mapped[str] = mapped_column(String(255), info=policy(OUTPUT | WRITTEN))
    conviction_score: Mapped[int] = mapped_column(SmallInteger, info=policy(OUTPUT | WRITTEN))
    notes: Mapped[str] = mapped_column(String(500), info=policy(OUTPUT | WRITTEN))
    suggested_action: Mapped[str] = mapped_column(String(32), info=policy(OUTPUT | WRITTEN))
    created_at: Mapped[datetime] = mapped_column(
        Timestamp, info=policy(OUTPUT | WRITTEN, value="clock_timestamp()")
    )

    __table_args__ = (
        UniqueConstraint("tenant_id", "run_id"),
        ForeignKeyConstraint(
            ["tenant_id", "parent_decision_id"],
            ["decisions.tenant_id", "decisions.id"],
            ondelete="CASCADE",
            name="fk_reexaminations_parent",
        ),
        Index("ix_reexaminations_history", "tenant_id", "parent_decision_id", "created_at", "id"),
        CheckConstraint("conviction_score BETWEEN 0 AND 100", name="conviction_score"),
    )


__all__ = [
    "ActiveSessionRow",
    "AgentRunRow",
    "AgentSettingsRow",
    "ApiKeyRow",
    "ArchivalLineRow",
    "ArchivalTermRow",
    "ArchivalVocabularyRow",
    "Base",
    "BlockRow",
    "BlockVersionRow",
    "CardTypeRow",
    "ConversationRow",
    "DecisionRow",
    "ExtractionJobRow",
    "IndexWorkerRow",
    "MemoryEventRow",
    "MemoryGroundingRow",
    "MemoryRow",
    "ReexaminationRow",
    "UsageRecordRow",
    "WorkspaceSettingsRow",
]
