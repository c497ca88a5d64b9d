"""Memory use cases: upsert, read, list, update, pin, delete, memorize, learnings, audit."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.errors import (
    AlreadyExists,
    Conflict,
    FailedPrecondition,
    FieldViolation,
    NotFound,
    check,
)
from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import MemorizeInput, memory_key, prepare
from agent_memory.domain.memory import (
    VALUE_MAX_CHARS,
    Memory,
    MemoryPatch,
    MemorySource,
    Owner,
    Scope,
    owner_violations,
    text_violations,
    validate_new_memory,
    validate_patch,
    version_from_etag,
)
from agent_memory.domain.paging import (
    Page,
    decode_page_token,
    encode_page_token,
    listing_fingerprint,
    page_size,
    refuse_page_token,
)
from agent_memory.domain.secrets import refuse_secrets
from agent_memory.store import conversations
from agent_memory.store import events as event_store
from agent_memory.store import memories as store
from agent_memory.store.database import Database

UPSERT_SOURCES = (MemorySource.MANUAL, MemorySource.AUTO, MemorySource.DIRECTOR)
LEARNINGS_DEFAULT = 20
LEARNINGS_MAX = 100
MAX_CHAIN = 100
_WRITE_ATTEMPTS = 5


def validate_owner(owner: Owner | None, path: str = "owner") -> Owner:
    if owner is None:
        check(
            [
                FieldViolation(
                    path, "exactly one of agent_id or workspace_id is required", "REQUIRED"
                )
            ]
        )
        raise AssertionError  # unreachable
    field = f"{path}.agent_id" if owner.scope is Scope.AGENT else f"{path}.workspace_id"
    check(owner_violations(field, owner.id))
    return owner


class Memories:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def upsert(
        self,
        principal: Principal,
        *,
        owner: Owner | None,
        key: str,
        value: str,
        pinned: bool | None = None,
        importance: int | None = None,
        source: MemorySource = MemorySource.MANUAL,
    ) -> tuple[Memory, bool]:
        """Create or update the memory at (owner, key).

        Raises:
            InvalidArgument: a field breaks its limit, or the value carries a secret.
            FailedPrecondition: the key is held by a read-only memory
                (reason ``READ_ONLY_MEMORY``) or by one of another source.
        """
        owner = validate_owner(owner)
        validate_new_memory(key=key, value=value, importance=importance)
        if source not in UPSERT_SOURCES:
            check(
                [
                    FieldViolation(
                        "source",
                        "memorize-sourced memories are written by Memorize",
                        "INVALID_SOURCE",
                    )
                ]
            )
        refuse_secrets("key", key)
        refuse_secrets("value", value)
        fields: dict[str, Any] = {"value": value}
        if pinned is not None:
            fields["pinned"] = pinned
        if importance is not None:
            fields["importance"] = importance
        async with self._db.transaction() as session:
            memory, created = await write_by_key(session, principal, owner, key, source, fields)
            return memory, created

    async def memorize(
        self, principal: Principal, *, owner: Owner | None, item: MemorizeInput
    ) -> tuple[Memory, bool]:
        """Idempotently write one memory keyed by ``memory_key`` or a content hash.

        Raises:
            InvalidArgument: malformed input, or a secret in the content, a quote,
                the metadata or the conversation.
            FailedPrecondition: the key is held by a memory of another source.
        """
        owner = validate_owner(owner)
        item = prepare(item)
        refuse_secrets("content", item.content)
        if item.memory_key:
            refuse_secrets("memory_key", item.memory_key)
        for i, g in enumerate(item.groundings):
            refuse_secrets(f"groundings[{i}].quote", g.quote)
            if g.metadata:
                refuse_secrets(
                    f"groundings[{i}].metadata", json.dumps(g.metadata, ensure_ascii=False)
                )
        if item.metadata:
            refuse_secrets("metadata", json.dumps(item.metadata, ensure_ascii=False))
        if item.conversation is not None:
            for i, m in enumerate(item.conversation.messages):
                refuse_secrets(f"conversation.messages[{i}].content", m.content)
        key = memory_key(item)
        fields: dict[str, Any] = {
            "value": item.content,
            "tags": list(item.tags),
            "confidence": item.confidence,
            "metadata": dict(item.metadata),
            "conversation_provider": item.conversation.provider if item.conversation else None,
            "conversation_id": item.conversation.conversation_id if item.conversation else None,
        }
        async with self._db.transaction() as session:
            if item.conversation is not None:
                await conversations.upsert(
                    session, tenant_id=principal.tenant_id, conversation=item.conversation
                )
            memory, created = await write_by_key(
                session, principal, owner, key, MemorySource.MEMORIZE, fields
            )
            await store.replace_groundings(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory.id,
                groundings=item.groundings,
            )
        return replace(memory, groundings=item.groundings), created

    async def record_learning(
        self, principal: Principal, *, chain_agent_ids: list[str], content: str
    ) -> Memory:
        """Store a DIRECTOR learning on the first agent of the chain, under a fresh
        ``director:learning:<UTC timestamp>`` key (distinct even within one instant).

        Raises:
            InvalidArgument: an empty chain, a bad agent id, or bad or secret content.
        """
        _validate_chain(chain_agent_ids)
        check(text_violations("content", content, max_chars=VALUE_MAX_CHARS))
        refuse_secrets("content", content)
        owner = Owner(Scope.AGENT, chain_agent_ids[0])
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        async with self._db.transaction() as session:
            for attempt in range(1, 1000):
                key = f"{store.LEARNING_KEY_PREFIX}{stamp}" + (f"#{attempt}" if attempt > 1 else "")
                created = await store.insert_new(
                    session,
                    tenant_id=principal.tenant_id,
                    owner=owner,
                    key=key,
                    source=MemorySource.DIRECTOR,
                    actor=principal.user_id,
                    fields={"value": content},
                )
                if created is not None:
                    await audit(session, principal, created, MemoryEventType.CREATED, None)
                    return created
        raise Conflict("could not find a free learning key", reason="LEARNING_KEY_TAKEN")

    async def learnings(
        self, principal: Principal, *, chain_agent_ids: list[str], limit: int
    ) -> list[Memory]:
        """The newest learnings across every agent of the chain, newest first."""
        _validate_chain(chain_agent_ids)
        if limit < 0:
            check([FieldViolation("limit", "must not be negative", "OUT_OF_RANGE")])
        count = min(limit or LEARNINGS_DEFAULT, LEARNINGS_MAX)
        async with self._db.transaction() as session:
            return await store.list_learnings(
                session, tenant_id=principal.tenant_id, agent_ids=chain_agent_ids, limit=count
            )

    async def get(self, principal: Principal, memory_id: uuid.UUID) -> Memory:
        """Raises: NotFound — no such memory in the caller's tenant."""
        async with self._db.transaction() as session:
            memory = await store.get(session, tenant_id=principal.tenant_id, memory_id=memory_id)
            if memory is None:
                raise _not_found(memory_id)
            return (
                await store.with_groundings(
                    session, tenant_id=principal.tenant_id, memories=[memory]
                )
            )[0]

    async def list(
        self, principal: Principal, *, owner: Owner | None, size: int, token: str
    ) -> Page[Memory]:
        """Raises: InvalidArgument — bad owner, page size or page token."""
        owner = validate_owner(owner)
        limit = page_size(size)
        listing = listing_fingerprint("memories", owner.scope.value, owner.id)
        raw = decode_page_token(token, listing, arity=3 if owner.scope is Scope.AGENT else 4)
        after: list[Any] | None = None
        if raw is not None:
            try:
                after = store.parse_position(owner.scope, raw)
            except ValueError:
                refuse_page_token()
        async with self._db.transaction() as session:
            rows = await store.list_page(
                session, tenant_id=principal.tenant_id, owner=owner, after=after, limit=limit + 1
            )
            items = await store.with_groundings(
                session, tenant_id=principal.tenant_id, memories=rows[:limit]
            )
        next_token = ""
        if len(rows) > limit:
            next_token = encode_page_token(listing, store.sort_position(items[-1]))
        return Page(items=items, next_page_token=next_token)

    async def update(
        self,
        principal: Principal,
        memory_id: uuid.UUID,
        patch: MemoryPatch,
        *,
        etag: str | None = None,
    ) -> Memory:
        """Apply a partial update.

        Raises:
            NotFound: no such memory in the caller's tenant.
            Conflict: ``etag`` is given and stale (reason ``ETAG_MISMATCH``).
            FailedPrecondition: key, value or importance of a read-only memory.
            AlreadyExists: the new key is taken under the same owner.
            InvalidArgument: a field breaks its limit or carries a secret.
        """
        validate_patch(patch)
        if patch.key is not None:
            refuse_secrets("memory.key", patch.key)
        if patch.value is not None:
            refuse_secrets("memory.value", patch.value)
        expected = _expected_version(etag)
        async with self._db.transaction() as session:
            current = await self._locked(session, principal, memory_id)
            _check_etag(current, expected)
            if patch.touches_content and current.read_only:
                raise _read_only(current)
            changes = _changes(current, patch)
            if not changes:
                return current
            if "key" in changes:
                taken = await store.find_by_key(
                    session, tenant_id=principal.tenant_id, owner=current.owner, key=changes["key"]
                )
                if taken is not None:
                    raise AlreadyExists(
                        f"key {changes['key']!r} is already used by memory {taken.id}",
                        reason="KEY_TAKEN",
                        metadata={"memory_id": str(taken.id)},
                    )
            updated = await store.apply(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory_id,
                changes=changes,
                actor=principal.user_id,
            )
            kind = MemoryEventType.UPDATED
            if set(changes) == {"pinned"}:
                kind = MemoryEventType.PINNED if updated.pinned else MemoryEventType.UNPINNED
            await audit(session, principal, updated, kind, current)
            return updated

    async def pin(self, principal: Principal, memory_id: uuid.UUID, pinned: bool) -> Memory:
        """Pin or unpin a memory of any source. Raises: NotFound."""
        async with self._db.transaction() as session:
            current = await self._locked(session, principal, memory_id)
            if current.pinned == pinned:
                return current
            updated = await store.apply(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory_id,
                changes={"pinned": pinned},
                actor=principal.user_id,
            )
            kind = MemoryEventType.PINNED if pinned else MemoryEventType.UNPINNED
            await audit(session, principal, updated, kind, current)
            return updated

    async def delete(
        self, principal: Principal, memory_id: uuid.UUID, *, etag: str | None = None
    ) -> None:
        """Delete a memory of any source. Raises: NotFound, Conflict (stale etag)."""
        expected = _expected_version(etag)
        async with self._db.transaction() as session:
            current = await self._locked(session, principal, memory_id)
            _check_etag(current, expected)
            await store.delete_row(session, tenant_id=principal.tenant_id, memory_id=memory_id)
            await event_store.record(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory_id,
                event_type=MemoryEventType.DELETED,
                actor=principal.user_id,
                old=current,
                new=None,
            )

    async def events(
        self, principal: Principal, memory_id: uuid.UUID, *, size: int, token: str
    ) -> Page[MemoryEvent]:
        """A memory's audit trail, oldest first; readable after the memory is deleted.

        Raises:
            NotFound: the caller's tenant has no memory and no events with this id.
            InvalidArgument: a bad page size or token.
        """
        limit = page_size(size)
        listing = listing_fingerprint("memory-events", str(memory_id))
        raw = decode_page_token(token, listing, arity=2)
        after: tuple[datetime, uuid.UUID] | None = None
        if raw is not None:
            try:
                after = _event_position(raw)
            except ValueError:
                refuse_page_token()
        async with self._db.transaction() as session:
            rows = await event_store.list_page(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory_id,
                after=after,
                limit=limit + 1,
            )
            if not rows and after is None:
                exists = await store.get(
                    session, tenant_id=principal.tenant_id, memory_id=memory_id
                )
                if exists is None:
                    raise _not_found(memory_id)
        items = rows[:limit]
        next_token = ""
        if len(rows) > limit:
            last = items[-1]
            next_token = encode_page_token(listing, [last.occurred_at.isoformat(), str(last.id)])
        return Page(items=items, next_page_token=next_token)

    async def _locked(
        self, session: AsyncSession, principal: Principal, memory_id: uuid.UUID
    ) -> Memory:
        current = await store.get(
            session, tenant_id=principal.tenant_id, memory_id=memory_id, for_update=True
        )
        if current is None:
            raise _not_found(memory_id)
        return current


async def write_by_key(
    session: AsyncSession,
    principal: Principal,
    owner: Owner,
    key: str,
    source: MemorySource,
    fields: dict[str, Any],
) -> tuple[Memory, bool]:
    """Insert at (owner, key), or update the row there when it has the same source.

    Safe under concurrency: of two writers of a new key one inserts and the
    other, after waiting for it, updates; neither sees a unique violation.
    """
    for _ in range(_WRITE_ATTEMPTS):
        current = await store.find_by_key(
            session, tenant_id=principal.tenant_id, owner=owner, key=key, for_update=True
        )
        if current is None:
            created = await store.insert_new(
                session,
                tenant_id=principal.tenant_id,
                owner=owner,
                key=key,
                source=source,
                actor=principal.user_id,
                fields=fields,
            )
            if created is None:
                continue  # a concurrent writer inserted it first: read and update it
            await audit(session, principal, created, MemoryEventType.CREATED, None)
            return created, True
        if current.source is not source:
            if current.read_only:
                raise _read_only(current)
            raise FailedPrecondition(
                f"key {key!r} is held by a {current.source.value} memory; "
                f"a {source.value} write cannot replace it",
                reason="SOURCE_MISMATCH",
                metadata={"memory_id": str(current.id), "source": current.source.value},
            )
        updated = await store.apply(
            session,
            tenant_id=principal.tenant_id,
            memory_id=current.id,
            changes=fields,
            actor=principal.user_id,
        )
        await audit(session, principal, updated, MemoryEventType.UPDATED, current)
        return updated, False
    raise Conflict(f"key {key!r} kept changing; retry", reason="CONCURRENT_WRITE")


async def audit(
    session: AsyncSession,
    principal: Principal,
    memory: Memory,
    kind: MemoryEventType,
    old: Memory | None,
) -> None:
    await event_store.record(
        session,
        tenant_id=principal.tenant_id,
        memory_id=memory.id,
        event_type=kind,
        actor=principal.user_id,
        old=old,
        new=memory,
    )


def _validate_chain(chain: list[str]) -> None:
    if not chain:
        check([FieldViolation("chain_agent_ids", "must name at least one agent", "REQUIRED")])
    if len(chain) > MAX_CHAIN:
        check([FieldViolation("chain_agent_ids", f"at most {MAX_CHAIN} agents", "TOO_MANY")])
    violations: list[FieldViolation] = []
    for i, agent_id in enumerate(chain):
        violations += owner_violations(f"chain_agent_ids[{i}]", agent_id)
    check(violations)


def _event_position(raw: list[Any]) -> tuple[datetime, uuid.UUID]:
    if not isinstance(raw[0], str) or not isinstance(raw[1], str):
        raise ValueError("not an event position")
    at = datetime.fromisoformat(raw[0])
    if at.tzinfo is None:
        raise ValueError("not an event position")
    return at, uuid.UUID(raw[1])


def _read_only(memory: Memory) -> FailedPrecondition:
    return FailedPrecondition(
        f"memory {memory.id} is read-only ({memory.source.value}): "
        "only pinned can change, and it can be deleted",
        reason="READ_ONLY_MEMORY",
        metadata={"memory_id": str(memory.id), "source": memory.source.value},
    )


def _not_found(memory_id: uuid.UUID) -> NotFound:
    return NotFound(
        f"memory {memory_id} not found",
        reason="MEMORY_NOT_FOUND",
        metadata={"memory_id": str(memory_id)},
    )


def _expected_version(etag: str | None) -> int | None:
    if etag is None:
        return None
    version = version_from_etag(etag)
    if version is None:
        check([FieldViolation("etag", "is not an etag this service issued", "INVALID_ETAG")])
    return version


def _check_etag(current: Memory, expected: int | None) -> None:
    if expected is not None and expected != current.version:
        raise Conflict(
            f"memory {current.id} changed since it was read",
            reason="ETAG_MISMATCH",
            metadata={"memory_id": str(current.id), "current_etag": current.etag},
        )


def _changes(current: Memory, patch: MemoryPatch) -> dict[str, Any]:
    wanted = {
        "key": patch.key,
        "value": patch.value,
        "pinned": patch.pinned,
        "importance": patch.importance,
    }
    return {
        name: value
        for name, value in wanted.items()
        if value is not None and getattr(current, name) != value
    }
