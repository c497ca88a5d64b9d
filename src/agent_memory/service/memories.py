"""Memory use cases: upsert, read, list, partial update, pin and delete."""

from __future__ import annotations

import uuid
from typing import Any

from agent_memory.domain.errors import (
    AlreadyExists,
    Conflict,
    FailedPrecondition,
    FieldViolation,
    NotFound,
    check,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import (
    Memory,
    MemoryPatch,
    MemorySource,
    Owner,
    Scope,
    owner_violations,
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
)
from agent_memory.store import memories as store
from agent_memory.store.database import Database

UPSERT_SOURCES = (MemorySource.MANUAL, MemorySource.AUTO, MemorySource.DIRECTOR)


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
            InvalidArgument: a field breaks its limit.
            FailedPrecondition: the key is held by a read-only memory
                (reason ``READ_ONLY_MEMORY``) or one of another source.
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
        async with self._db.transaction() as session:
            result = await store.upsert(
                session,
                tenant_id=principal.tenant_id,
                owner=owner,
                key=key,
                value=value,
                pinned=pinned,
                importance=importance,
                source=source,
                actor=principal.user_id,
            )
            if result is not None:
                return result
            holder = await store.find_by_key(
                session, tenant_id=principal.tenant_id, owner=owner, key=key
            )
        held_by = holder.source.value if holder else "unknown"
        if holder is not None and holder.read_only:
            raise FailedPrecondition(
                f"key {key!r} is held by a read-only {held_by} memory",
                reason="READ_ONLY_MEMORY",
                metadata={"memory_id": str(holder.id), "source": held_by},
            )
        raise FailedPrecondition(
            f"key {key!r} is held by a {held_by} memory; a {source.value} write cannot replace it",
            reason="SOURCE_MISMATCH",
            metadata={"memory_id": str(holder.id) if holder else "", "source": held_by},
        )

    async def get(self, principal: Principal, memory_id: uuid.UUID) -> Memory:
        """Raises: NotFound — no such memory in the caller's tenant."""
        async with self._db.transaction() as session:
            memory = await store.get(session, tenant_id=principal.tenant_id, memory_id=memory_id)
        if memory is None:
            raise _not_found(memory_id)
        return memory

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
                check(
                    [
                        FieldViolation(
                            "page_token",
                            "is not a page token of this listing",
                            "INVALID_PAGE_TOKEN",
                        )
                    ]
                )
        async with self._db.transaction() as session:
            rows = await store.list_page(
                session, tenant_id=principal.tenant_id, owner=owner, after=after, limit=limit + 1
            )
        items = rows[:limit]
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
        """
        validate_patch(patch)
        expected = _expected_version(etag)
        async with self._db.transaction() as session:
            current = await store.get(
                session, tenant_id=principal.tenant_id, memory_id=memory_id, for_update=True
            )
            if current is None:
                raise _not_found(memory_id)
            _check_etag(current, expected)
            if patch.touches_content and current.read_only:
                raise FailedPrecondition(
                    f"memory {memory_id} is read-only ({current.source.value}): "
                    "only pinned can change",
                    reason="READ_ONLY_MEMORY",
                    metadata={"memory_id": str(memory_id), "source": current.source.value},
                )
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
            return await store.apply(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory_id,
                changes=changes,
                actor=principal.user_id,
            )

    async def pin(self, principal: Principal, memory_id: uuid.UUID, pinned: bool) -> Memory:
        """Pin or unpin a memory of any source. Raises: NotFound."""
        async with self._db.transaction() as session:
            current = await store.get(
                session, tenant_id=principal.tenant_id, memory_id=memory_id, for_update=True
            )
            if current is None:
                raise _not_found(memory_id)
            if current.pinned == pinned:
                return current
            return await store.apply(
                session,
                tenant_id=principal.tenant_id,
                memory_id=memory_id,
                changes={"pinned": pinned},
                actor=principal.user_id,
            )

    async def delete(
        self, principal: Principal, memory_id: uuid.UUID, *, etag: str | None = None
    ) -> None:
        """Delete a memory of any source. Raises: NotFound, Conflict (stale etag)."""
        expected = _expected_version(etag)
        async with self._db.transaction() as session:
            current = await store.get(
                session, tenant_id=principal.tenant_id, memory_id=memory_id, for_update=True
            )
            if current is None:
                raise _not_found(memory_id)
            _check_etag(current, expected)
            await store.delete(session, tenant_id=principal.tenant_id, memory_id=memory_id)


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
