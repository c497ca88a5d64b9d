"""Memory use cases: upsert, read, list, update, pin, delete, memorize, learnings, audit.

Secrets never get this far: every string of a write's request is scanned before the
use case runs (:mod:`agent_memory.api.stored_text`). Memorize and RecordLearning also
refuse content that reads as an instruction to the assistant rather than a fact
(:mod:`agent_memory.detectors.instructions`).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from agent_memory.domain.errors import (
    AlreadyExists,
    Conflict,
    FailedPrecondition,
    FieldViolation,
    NotFound,
    check,
)
from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.identity import Principal, Role, require_role
from agent_memory.domain.memorize import (
    MemorizeInput,
    dangling_grounding_violations,
    memory_key,
    normalise_tags,
    prepare,
    superseded_ids,
    tag_violations,
)
from agent_memory.domain.memory import (
    CONTENT_FIELDS,
    KEY_MAX_CHARS,
    LEARNING_KEY_PREFIX,
    VALUE_MAX_CHARS,
    Evidence,
    Expiration,
    ListingPosition,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    OwnerSummary,
    PeriodInverted,
    Scope,
    Written,
    checked_expiration,
    listing_position,
    optional_text_violations,
    owner_violations,
    period_violations,
    position_from_token,
    position_to_token,
    reserved_key_violations,
    validate_new_memory,
    validate_patch,
    version_from_etag,
)
from agent_memory.domain.memory_query import (
    OrderPosition,
    order_position,
    order_position_from_token,
    parse_filter,
    parse_order,
)
from agent_memory.domain.paging import Page, page_size, paged, refuse_page_token
from agent_memory.domain.screening import refuse_instructions
from agent_memory.domain.text_rules import text_violations
from agent_memory.service.page_tokens import page_tokens
from agent_memory.store.repositories import MemoryRepository, Store, Tx

UPSERT_SOURCES = (MemorySource.MANUAL, MemorySource.AUTO, MemorySource.DIRECTOR)
LEARNINGS_DEFAULT = 20
LEARNINGS_MAX = 100
MAX_CHAIN = 100
WRITE_ATTEMPTS = 5
LEARNING_KEY_ATTEMPTS = 1000


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


# A total a listing answers (``total_size`` is an int32): more reads as this many.
TOTAL_MAX = 2**31 - 1


class Memories:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def upsert(
        self, principal: Principal, write: MemoryWrite, *, create_only: bool = False
    ) -> tuple[Memory, bool]:
        """Create or update the memory at the write's owner and key, as
        :class:`MemoryWrite` says: its expiration (an instant or a time to live) sets
        when it expires, its period when the fact holds, and each of its fields None
        keeps the stored one.

        Raises:
            InvalidArgument: a field breaks its limit.
            FailedPrecondition: the key is held by a read-only memory
                (reason ``READ_ONLY_MEMORY``) or by one of another source.
            PermissionDenied: a source other than MANUAL from a caller whose role is
                not orchestrator (reason ``ROLE_FORBIDS``).
            AlreadyExists: with ``create_only``, the key holds a memory (reason
                ``KEY_TAKEN``); nothing changed.
        """
        if write.source is not MemorySource.MANUAL:
            require_role(principal, Role.ORCHESTRATOR, f"UpsertMemory with source {write.source}")
        validate_owner(write.owner)
        validate_new_memory(
            key=write.key, value=write.value, importance=write.importance, source=write.source
        )
        check(period_violations(write.valid_start_time, write.valid_end_time))
        check(optional_text_violations(vars(write)))
        if write.source not in UPSERT_SOURCES:
            check(
                [
                    FieldViolation(
                        "source",
                        "memorize-sourced memories are written by Memorize",
                        "INVALID_SOURCE",
                    )
                ]
            )
        write = replace(write, expiration=checked_expiration(write.expiration, datetime.now(UTC)))
        async with self._store.connection(principal) as tx:
            await _not_past(tx, write.expiration)
            if create_only:
                return await create_by_key(tx.memories, write), True
            written = await write_by_key(tx.memories, write)
        return written.memory, written.created

    async def memorize(
        self, principal: Principal, *, owner: Owner | None, item: MemorizeInput
    ) -> tuple[Memory, bool, list[Memory]]:
        """Idempotently write one memory keyed by ``memory_key`` or a content hash, and
        mark the memories it supersedes; returns it, whether it was created, and the
        superseded memories as stored.

        Raises:
            InvalidArgument: malformed input, groundings without a conversation, a
                grounding pointing past the snapshot as stored, or a superseded id that
                is the memory itself or belongs to another owner (nothing is written);
                reason ``INSTRUCTION_NOT_FACT`` for content that reads as an
                instruction to the assistant rather than a fact.
            NotFound: a superseded id names no memory.
            FailedPrecondition: the key is held by a memory of another source, or
                the conversation changes a message or raw event another memory is
                grounded on (reason ``GROUNDED_MESSAGE_CHANGED`` or
                ``GROUNDED_RAW_EVENT_CHANGED``).
        """
        owner = validate_owner(owner)
        item = prepare(item)
        replaced = superseded_ids(item.supersedes)
        expiration = checked_expiration(item.expiration, datetime.now(UTC))
        conversation = item.conversation
        write = MemoryWrite(
            owner,
            memory_key(item),
            MemorySource.MEMORIZE,
            item.content,
            evidence=Evidence(
                tags=item.tags,
                confidence=item.confidence,
                metadata=item.metadata,
                conversation_provider=conversation.provider if conversation else None,
                conversation_id=conversation.conversation_id if conversation else None,
            ),
            expiration=expiration,
            valid_start_time=item.valid_start_time,
            valid_end_time=item.valid_end_time,
        )
        async with self._store.transaction(principal) as tx:
            await _not_past(tx, write.expiration)
            written = await write_by_key(tx.memories, write)
            await tx.memories.replace_groundings(written.memory.id, item.groundings)
            if conversation is not None and conversation.is_reference:
                # No message and no raw event: the snapshot stored already, unchanged.
                found = await tx.conversations.get(
                    conversation.provider, conversation.conversation_id
                )
                stored = found.conversation if found else conversation
                check(dangling_grounding_violations(item.groundings, stored))
            elif conversation is not None:
                # After the memory's own groundings changed: only others' hold messages.
                stored = await tx.conversations.put(conversation, writer=written.memory.id)
                # Against the snapshot as stored, merge included; refused, all rolls back.
                check(dangling_grounding_violations(item.groundings, stored))
            superseded = [
                await supersede(tx.memories, memory_id, written.memory, f"supersedes[{i}]")
                for i, memory_id in enumerate(replaced)
            ]
        return replace(written.memory, groundings=item.groundings), written.created, superseded

    async def record_learning(
        self, principal: Principal, *, chain_agent_ids: list[str], content: str
    ) -> Memory:
        """Store a DIRECTOR learning on the first agent of the chain, under a fresh
        ``director:learning:<UTC timestamp>`` key (distinct even within one instant).

        Raises:
            InvalidArgument: an empty chain, a bad agent id, or bad content; reason
                ``INSTRUCTION_NOT_FACT`` when the content would override the agent's
                instructions rather than teach it something.
        """
        _validate_chain(chain_agent_ids)
        check(text_violations("content", content, max_chars=VALUE_MAX_CHARS))
        refuse_instructions("content", content)
        owner = Owner(Scope.AGENT, chain_agent_ids[0])
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        async with self._store.connection(principal) as tx:
            for attempt in range(1, LEARNING_KEY_ATTEMPTS + 1):
                key = f"{LEARNING_KEY_PREFIX}{stamp}" + (f"#{attempt}" if attempt > 1 else "")
                write = MemoryWrite(owner, key, MemorySource.DIRECTOR, content)
                created = await tx.memories.create(write)
                if created is not None:
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
        async with self._store.reading(principal) as tx:
            return await tx.memories.learnings(chain_agent_ids, count)

    async def get(
        self, principal: Principal, memory_id: uuid.UUID, *, as_of: datetime | None = None
    ) -> Memory:
        """The memory, or with ``as_of`` the memory as it was then.

        Raises: NotFound — no such memory in the caller's tenant (none then);
            InvalidArgument, FailedPrecondition — ``as_of`` is in the future, or before
            the history kept."""
        async with self._store.read_at(principal, as_of) as tx:
            memory = await tx.memories.get(memory_id)
        if memory is None:
            raise _not_found(memory_id)
        return memory

    async def get_by_key(
        self,
        principal: Principal,
        owner: Owner | None,
        key: str,
        *,
        as_of: datetime | None = None,
    ) -> Memory:
        """The memory of ``owner`` at ``key`` (exactly as stored), as :meth:`get` reads
        one.

        Raises: InvalidArgument — bad owner or key; NotFound — the owner has no memory
            at the key in the caller's tenant."""
        owner = validate_owner(owner)
        check(text_violations("key", key, max_chars=KEY_MAX_CHARS))
        async with self._store.read_at(principal, as_of) as tx:
            memory = await tx.memories.find_by_key(owner, key, groundings=True)
        if memory is None:
            raise NotFound(
                f"{owner.scope.value} {owner.id!r} has no memory with key {key!r}",
                reason="MEMORY_NOT_FOUND",
                metadata={"scope": owner.scope.value, "owner_id": owner.id, "key": key},
            )
        return memory

    async def list(
        self,
        principal: Principal,
        *,
        owner: Owner | None,
        size: int,
        token: str,
        show_expired: bool = False,
        show_superseded: bool = False,
        filter: str = "",
        order_by: str = "",
        as_of: datetime | None = None,
    ) -> Page[Memory]:
        """The owner's memories that meet ``filter`` (AIP-160, see
        :mod:`agent_memory.domain.memory_query`), in the owner's listing order or in
        ``order_by``, with how many match in all. Those that expired (and are not
        deleted yet) only with ``show_expired``, those superseded only with
        ``show_superseded``, unless the filter says otherwise.

        Raises: InvalidArgument — bad owner, page size, page token, filter or order."""
        owner = validate_owner(owner)
        limit = page_size(size)
        query = parse_filter(filter).shown(expired=show_expired, superseded=show_superseded)
        order = parse_order(order_by)
        shown = {"show_expired": show_expired, "show_superseded": show_superseded}
        listing = ["memories"] + [name for name, on in shown.items() if on]
        said = {"filter": filter, "order_by": order_by}
        listing += [f"{name}={text}" for name, text in said.items() if text]
        if as_of is not None:
            listing.append(f"as_of_time={as_of.isoformat()}")
        tokens = await page_tokens(
            self._store, principal, token, owner=[owner.scope.value, owner.id], listing=listing
        )
        natural = order.natural
        # A token holds where the page stopped, then the total the first page counted:
        # the listing is counted once, not again for every page.
        arity = (len(order.fields) if not natural else 3 if owner.scope is Scope.AGENT else 4) + 1
        raw = tokens.open(token, arity=arity)
        after: ListingPosition | OrderPosition | None = None
        counted: int | None = None
        if raw is not None:
            *stopped, last = raw
            if type(last) is not int or not 0 <= last <= TOTAL_MAX:
                refuse_page_token()
            counted = last
            try:
                after = (
                    position_from_token(owner.scope, stopped)
                    if natural
                    else order_position_from_token(order, stopped)
                )
            except ValueError:
                refuse_page_token()
        async with self._store.reading(principal, as_of=as_of) as tx:
            rows = await tx.memories.list_page(
                owner, after=after, limit=limit + 1, query=query, order=order
            )
            if counted is not None:
                total = counted
            elif len(rows) <= limit:
                total = len(rows)
            else:
                total = min(await tx.memories.count_matching(owner, query), TOTAL_MAX)

        def position(memory: Memory) -> list[str | int | bool]:
            stopped = listing_position(memory) if natural else order_position(memory, order)
            return [*position_to_token(stopped), total]

        return replace(paged(rows, limit, tokens, position), total_size=total)

    async def owners(
        self, principal: Principal, scope: Scope, *, size: int, token: str
    ) -> Page[OwnerSummary]:
        """The tenant's agents or workspaces by id, with their memory counts.

        Raises: InvalidArgument — bad page size or page token."""
        limit = page_size(size)
        tokens = await page_tokens(
            self._store, principal, token, owner=[], listing=["owners", scope.value]
        )
        raw = tokens.open(token, arity=1)
        after = ""
        if raw is not None:
            if not isinstance(raw[0], str):
                refuse_page_token()
            after = raw[0]
        async with self._store.reading(principal) as tx:
            rows = await tx.memories.owners(scope, after=after, limit=limit + 1)
        return paged(rows, limit, tokens, lambda o: [o.owner.id])

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
            InvalidArgument: a field breaks its limit.
        """
        validate_patch(patch)
        if patch.tags is not None:
            check(tag_violations("memory.tags", patch.tags))
            patch = replace(patch, tags=normalise_tags(patch.tags))
        checked_expiration(patch.expire_time, datetime.now(UTC), prefix="memory.")
        expected = _expected_version(etag)
        async with self._store.transaction(principal) as tx:
            await _not_past(tx, patch.expire_time, prefix="memory.")
            current = await tx.memories.get(memory_id, lock=True)
            if current is None:
                raise _not_found(memory_id)
            _check_etag(current, expected)
            if patch.touches_content and current.read_only:
                raise _read_only(current)
            start, end = patch.period_of(current)
            stored = not (patch.valid_start_time and patch.valid_end_time)
            check(period_violations(start, end, prefix="memory.", stored=stored))
            changes = patch.changes(current)
            if changes.empty:
                return current
            if changes.key is not None:
                check(reserved_key_violations("memory.key", changes.key, current.source))
                # An expired memory not yet swept must not hold the key it is renamed to.
                await tx.memories.delete_expired(current.owner, changes.key)
                taken = await tx.memories.find_by_key(current.owner, changes.key)
                if taken is not None:
                    raise AlreadyExists(
                        f"key {changes.key!r} is already used by memory {taken.id}",
                        reason="KEY_TAKEN",
                        metadata={"memory_id": str(taken.id)},
                    )
            kind = MemoryEventType.UPDATED
            if changes.only_pin:
                kind = MemoryEventType.PINNED if changes.pinned else MemoryEventType.UNPINNED
            return await tx.memories.update(memory_id, changes, kind)

    async def pin(self, principal: Principal, memory_id: uuid.UUID, pinned: bool) -> Memory:
        """Pin or unpin a memory of any source. Raises: NotFound."""
        async with self._store.connection(principal) as tx:
            memory = await tx.memories.pin(memory_id, pinned)
        if memory is None:
            raise _not_found(memory_id)
        return memory

    async def delete(
        self, principal: Principal, memory_id: uuid.UUID, *, etag: str | None = None
    ) -> None:
        """Delete a memory of any source. Raises: NotFound, Conflict (stale etag)."""
        expected = _expected_version(etag)
        async with self._store.connection(principal) as tx:
            current, deleted = await tx.memories.delete(memory_id, version=expected)
        if current is None:
            raise _not_found(memory_id)
        if not deleted:
            _check_etag(current, expected)
            raise AssertionError("a memory at its expected version is deleted")

    async def events(
        self, principal: Principal, memory_id: uuid.UUID, *, size: int, token: str
    ) -> Page[MemoryEvent]:
        """A memory's audit trail, oldest first; readable after the memory is deleted.

        Raises:
            NotFound: the caller's tenant has no memory and no events with this id.
            InvalidArgument: a bad page size or token.
        """
        limit = page_size(size)
        tokens = await page_tokens(
            self._store, principal, token, owner=["memory", str(memory_id)], listing=["events"]
        )
        raw = tokens.open(token, arity=2)
        after: tuple[datetime, uuid.UUID] | None = None
        if raw is not None:
            try:
                after = _event_position(raw)
            except ValueError:
                refuse_page_token()
        async with self._store.connection(principal) as tx:
            rows = await tx.events.list_page(memory_id, after=after, limit=limit + 1)
            if not rows and after is None and await tx.memories.get(memory_id) is None:
                raise _not_found(memory_id)
        return paged(rows, limit, tokens, lambda e: [e.occurred_at.isoformat(), str(e.id)])


async def create_by_key(memories: MemoryRepository, write: MemoryWrite) -> Memory:
    """Insert at (owner, key) only when no memory is there (an expired one not yet
    swept is cleared away first).

    Raises:
        AlreadyExists: the key holds a memory (reason ``KEY_TAKEN``, its id in the
            metadata); nothing changed.
    """
    for _ in range(WRITE_ATTEMPTS):
        made = await memories.create(write)
        if made is not None:
            return made
        if not await memories.delete_expired(write.owner, write.key):
            break
    held = await memories.find_by_key(write.owner, write.key)
    raise AlreadyExists(
        f"key {write.key!r} already holds a memory; change that one instead",
        reason="KEY_TAKEN",
        metadata={"memory_id": str(held.id)} if held is not None else {},
    )


async def write_by_key(memories: MemoryRepository, write: MemoryWrite) -> Written:
    """Insert at (owner, key), or update the row there when it has the same source.

    Safe under concurrency: of two writers of a new key one inserts and the
    other, told it lost the race, writes again and updates; neither sees a
    unique violation.

    Raises:
        InvalidArgument: one end of the period the write gives, with the other as
            stored, would end the period before it starts (reason
            ``INVALID_PERIOD``); nothing was written.
        FailedPrecondition: the key is held by a memory of another source
            (reason ``READ_ONLY_MEMORY`` when that memory is read-only, else
            ``SOURCE_MISMATCH``).
        Conflict: the key kept changing under concurrent writers
            (reason ``CONCURRENT_WRITE``).
    """
    for _ in range(WRITE_ATTEMPTS):
        try:
            outcome = await memories.write(write)
        except PeriodInverted:
            check(_inverted_with_stored(write))
            raise
        if outcome is None:
            # A concurrent writer created the key first, or an expired memory not yet
            # swept holds it: clear that one away, then write again.
            await memories.delete_expired(write.owner, write.key)
            continue
        if isinstance(outcome, Written):
            return outcome
        current = outcome.current
        if current.read_only:
            raise _read_only(current)
        raise FailedPrecondition(
            f"key {write.key!r} is held by a {current.source.value} memory; "
            f"a {write.source.value} write cannot replace it",
            reason="SOURCE_MISMATCH",
            metadata={"memory_id": str(current.id), "source": current.source.value},
        )
    raise Conflict(f"key {write.key!r} kept changing; retry", reason="CONCURRENT_WRITE")


def _inverted_with_stored(write: MemoryWrite) -> list[FieldViolation]:
    """The violation of a write whose one end of the period, with the other as stored,
    would end the period before it starts."""
    if write.valid_end_time is None:
        given, order, other = "valid_start_time", "before", "valid_end_time"
    else:
        given, order, other = "valid_end_time", "after", "valid_start_time"
    return [FieldViolation(given, f"must be {order} the memory's stored {other}", "INVALID_PERIOD")]


async def _not_past(tx: Tx, expiration: Expiration | None, *, prefix: str = "") -> None:
    """Refuse an expiry instant the database's clock has passed: expiry is judged by that
    clock, which a replica's own may lag.

    Raises:
        InvalidArgument: the instant is not after the database's now.
    """
    if isinstance(expiration, datetime) and expiration <= await tx.clock.now():
        check(
            [
                FieldViolation(
                    f"{prefix}expire_time",
                    "must be in the future (by the database's clock)",
                    "OUT_OF_RANGE",
                )
            ]
        )


async def supersede(
    memories: MemoryRepository, memory_id: uuid.UUID, by: Memory, path: str
) -> Memory:
    """Mark ``memory_id`` superseded by ``by``, a memory of the same owner.

    Raises:
        NotFound: no such memory (expired ones included).
        InvalidArgument: it is ``by`` itself, or belongs to another owner (``path``
            names the field).
    """
    if memory_id == by.id:
        check([FieldViolation(path, "a memory cannot supersede itself", "SELF_REFERENCE")])
    target = await memories.supersede(memory_id, by)
    if target is None:
        raise _not_found(memory_id)
    if target.owner != by.owner:
        check(
            [
                FieldViolation(
                    path,
                    f"memory {memory_id} belongs to another owner; a memory supersedes only "
                    "memories of its own owner",
                    "OTHER_OWNER",
                )
            ]
        )
    return target


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
        f"memory {memory.id} is read-only ({memory.source.value}): its "
        f"{', '.join(CONTENT_FIELDS[:-1])} and {CONTENT_FIELDS[-1]} cannot change; its other "
        "fields can, and it can be deleted",
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
    if etag is None or etag.strip() == "*":  # "*": the memory as it is now
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
