"""Block queries. Every statement is confined to one tenant and one user; none commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Table, case, delete, func, insert, literal_column, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.blocks import (
    Block,
    BlockKey,
    BlockLabel,
    BlockScope,
    BlockVersion,
    ScopeFilter,
    entries,
)
from agent_memory.store.models import ArchivalLineRow, BlockRow, BlockVersionRow

# Core statements on the tables: plain rows, no identity map, less work per call.
BLOCKS: Table = BlockRow.__table__  # type: ignore[assignment]
VERSIONS: Table = BlockVersionRow.__table__  # type: ignore[assignment]

# Strictly later than the previous write even when the clock stands still or steps back,
# so a writer holding the old updated_at can never match the new one.
_NEXT_UPDATED_AT = func.greatest(
    func.clock_timestamp(), BLOCKS.c.updated_at + literal_column("interval '1 microsecond'")
)


def to_domain(row: Any) -> Block:
    return Block(
        key=BlockKey(BlockLabel(row.label), BlockScope(row.scope), row.agent_id),
        content=row.content,
        version=row.version,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _is_block(tenant_id: str, user_id: str, key: BlockKey) -> list[Any]:
    return [
        BLOCKS.c.tenant_id == tenant_id,
        BLOCKS.c.user_id == user_id,
        BLOCKS.c.scope == key.scope.value,
        BLOCKS.c.agent_id == key.agent_id,
        BLOCKS.c.label == key.label.value,
    ]


async def get(
    session: AsyncSession, *, tenant_id: str, user_id: str, key: BlockKey
) -> Block | None:
    row = (await session.execute(select(BLOCKS).where(*_is_block(tenant_id, user_id, key)))).first()
    return to_domain(row) if row else None


async def list_blocks(
    session: AsyncSession,
    *,
    tenant_id: str,
    user_id: str,
    scope_filter: ScopeFilter,
    agent_id: str,
) -> list[Block]:
    """The user's blocks, then agent blocks by agent id; core before archival."""
    agent_blocks = BLOCKS.c.scope == BlockScope.AGENT.value
    if agent_id:
        agent_blocks = agent_blocks & (BLOCKS.c.agent_id == agent_id)
    user_blocks = BLOCKS.c.scope == BlockScope.USER.value
    wanted = {
        ScopeFilter.USER: user_blocks,
        ScopeFilter.AGENT: agent_blocks,
        ScopeFilter.ALL: or_(user_blocks, agent_blocks),
    }[scope_filter]
    stmt = (
        select(BLOCKS)
        .where(BLOCKS.c.tenant_id == tenant_id, BLOCKS.c.user_id == user_id, wanted)
        .order_by(
            case((user_blocks, 0), else_=1),
            BLOCKS.c.agent_id,
            case((BLOCKS.c.label == BlockLabel.CORE.value, 0), else_=1),
        )
    )
    rows = (await session.execute(stmt)).all()
    return [to_domain(r) for r in rows]


async def create(
    session: AsyncSession, *, tenant_id: str, user_id: str, key: BlockKey, content: str
) -> Block | None:
    """Insert the block at version 1; ``None`` when it already exists (nothing changes)."""
    stmt = (
        pg_insert(BLOCKS)
        .values(
            tenant_id=tenant_id,
            user_id=user_id,
            scope=key.scope.value,
            agent_id=key.agent_id,
            label=key.label.value,
            content=content,
            version=1,
            created_at=func.statement_timestamp(),
            updated_at=func.statement_timestamp(),
        )
        .on_conflict_do_nothing(
            index_elements=[
                BLOCKS.c.tenant_id,
                BLOCKS.c.user_id,
                BLOCKS.c.scope,
                BLOCKS.c.agent_id,
                BLOCKS.c.label,
            ]
        )
        .returning(*BLOCKS.c)
    )
    row = (await session.execute(stmt)).first()
    return to_domain(row) if row else None


async def replace(
    session: AsyncSession,
    *,
    tenant_id: str,
    user_id: str,
    key: BlockKey,
    content: str,
    expected_updated_at: datetime,
) -> Block | None:
    """Replace the content when the stored ``updated_at`` is exactly ``expected_updated_at``.

    One conditional UPDATE: of concurrent callers holding the same value, the first
    to lock the row wins and the others re-check the condition against its write.
    ``None`` when the block is absent or was written since.
    """
    stmt = (
        update(BLOCKS)
        .where(*_is_block(tenant_id, user_id, key), BLOCKS.c.updated_at == expected_updated_at)
        .values(content=content, version=BLOCKS.c.version + 1, updated_at=_NEXT_UPDATED_AT)
        .returning(*BLOCKS.c)
    )
    row = (await session.execute(stmt)).first()
    return to_domain(row) if row else None


async def record_version(
    session: AsyncSession, *, tenant_id: str, user_id: str, block: Block, writer: str, keep: int
) -> None:
    """Keep ``block`` as written by ``writer``, and only the newest ``keep`` versions."""
    owner = {
        "tenant_id": tenant_id,
        "user_id": user_id,
        "scope": block.key.scope.value,
        "agent_id": block.key.agent_id,
        "label": block.key.label.value,
    }
    await session.execute(
        insert(VERSIONS).values(
            **owner,
            version=block.version,
            content=block.content,
            char_count=block.char_count,
            writer_user_id=writer,
            written_at=block.updated_at,
        )
    )
    # Versions of one block are numbered without gaps, so the oldest kept is version - keep + 1.
    await session.execute(
        delete(VERSIONS).where(
            *(VERSIONS.c[name] == value for name, value in owner.items()),
            VERSIONS.c.version <= block.version - keep,
        )
    )


async def replace_archival_lines(
    session: AsyncSession,
    *,
    tenant_id: str,
    user_id: str,
    key: BlockKey,
    content: str,
    embeddings: list[list[float]] | None = None,
) -> None:
    """Make the stored lines those of ``content``: its non-empty lines, numbered as in it.

    ``embeddings``, when given, holds one vector per non-empty line, in order.
    """
    await _delete_archival_lines(session, tenant_id=tenant_id, user_id=user_id, key=key)
    lines = entries(content)
    if embeddings is not None and len(embeddings) != len(lines):
        raise ValueError(f"{len(embeddings)} embeddings for {len(lines)} lines")
    rows = [
        {
            "tenant_id": tenant_id,
            "user_id": user_id,
            "scope": key.scope.value,
            "agent_id": key.agent_id,
            "line_number": number,
            "content": line,
            "embedding": embeddings[i] if embeddings is not None else None,
        }
        for i, (number, line) in enumerate(lines)
    ]
    if rows:
        await session.execute(insert(ArchivalLineRow), rows)


async def _delete_archival_lines(
    session: AsyncSession, *, tenant_id: str, user_id: str, key: BlockKey
) -> None:
    await session.execute(
        delete(ArchivalLineRow).where(
            ArchivalLineRow.tenant_id == tenant_id,
            ArchivalLineRow.user_id == user_id,
            ArchivalLineRow.scope == key.scope.value,
            ArchivalLineRow.agent_id == key.agent_id,
        )
    )


async def delete_block(
    session: AsyncSession,
    *,
    tenant_id: str,
    user_id: str,
    key: BlockKey,
    expected_updated_at: datetime | None,
) -> bool:
    """Delete the block, its versions and (for archival) its lines.

    With ``expected_updated_at`` only a block last written at exactly that time is
    deleted. False when nothing was deleted.
    """
    stmt = delete(BlockRow).where(*_is_block(tenant_id, user_id, key))
    if expected_updated_at is not None:
        stmt = stmt.where(BlockRow.updated_at == expected_updated_at)
    deleted = (await session.execute(stmt.returning(BlockRow.version))).first()
    if deleted is None:
        return False
    if key.label is BlockLabel.ARCHIVAL:
        await _delete_archival_lines(session, tenant_id=tenant_id, user_id=user_id, key=key)
    return True


async def list_versions(
    session: AsyncSession,
    *,
    tenant_id: str,
    user_id: str,
    key: BlockKey,
    before: int | None,
    limit: int,
) -> list[BlockVersion]:
    """Up to ``limit`` versions, newest first, older than version ``before`` when given."""
    stmt = select(BlockVersionRow).where(
        BlockVersionRow.tenant_id == tenant_id,
        BlockVersionRow.user_id == user_id,
        BlockVersionRow.scope == key.scope.value,
        BlockVersionRow.agent_id == key.agent_id,
        BlockVersionRow.label == key.label.value,
    )
    if before is not None:
        stmt = stmt.where(BlockVersionRow.version < before)
    stmt = stmt.order_by(BlockVersionRow.version.desc()).limit(limit)
    rows = (await session.scalars(stmt)).all()
    return [
        BlockVersion(
            version=r.version,
            content=r.content,
            char_count=r.char_count,
            writer_user_id=r.writer_user_id,
            written_at=r.written_at,
        )
        for r in rows
    ]
