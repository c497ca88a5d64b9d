"""An in-memory store for unit tests of service logic: memories, their audit trail,
conversations, agent settings, blocks, decisions, active sessions, the usage ledger, the
extraction queue, forgetting and a tenant's export records, under the same contract as
PostgreSQL's (blocks, decisions, sessions, usage, jobs and forgetting are in
``tests/fake_repositories.py``).

``tests/integration/test_store_contract*.py`` run the same cases against this store
and the real one, so the service tests below it test against a faithful stand-in.
A transaction that raises leaves the state as it was.

Times follow PostgreSQL's two clocks: a row created takes the time its transaction
began (``now()``: one instant for every row of a transaction, the statement's own
start outside one), and a change or an audit event takes the wall clock at that
moment (``clock_timestamp()``). What a statement returns carries groundings only
where PostgreSQL's statement reads them.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import secrets
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.domain.active_sessions import RecordedRun, StoredSession
from agent_memory.domain.agents import AgentSettings, WorkspaceSettings
from agent_memory.domain.blocks import BlockKey
from agent_memory.domain.decisions import CardType, Decision, Reexamination
from agent_memory.domain.errors import AlreadyExists, FailedPrecondition
from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, StoredConversation, points_into_message
from agent_memory.domain.memory import (
    LEARNING_KEY_PREFIX,
    Grounding,
    KeyHeld,
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
    listing_position,
)
from agent_memory.domain.memory_query import (
    CURRENT,
    NATURAL,
    MemoryOrder,
    MemoryQuery,
    OrderPosition,
    order_position,
)
from agent_memory.domain.paging import KEY_BYTES, PageKey, PageKeyring
from agent_memory.domain.transfer import DecisionRecord, MemoryRecord, UserBlock
from agent_memory.store.columns import EVIDENCE, MERGED, WRITTEN, named
from agent_memory.store.conversations import keep_grounded
from agent_memory.store.memories import EXPIRY_ACTOR
from agent_memory.store.models import MemoryRow
from agent_memory.store.repositories import (
    AdminTx,
    AgentRepository,
    ConversationRepository,
    EventRepository,
    MemoryRepository,
    Store,
    TransferRepository,
    Tx,
    WorkspaceRepository,
)
from agent_memory.store.repositories import (
    Clock as ClockRepository,
)
from tests.fake_repositories import (
    FakeBlocks,
    FakeDecisions,
    FakeForget,
    FakeJobQueue,
    FakeJobs,
    FakeSessions,
    FakeUsage,
    StoredBlock,
    StoredJob,
    StoredUsage,
    reexamined,
)

# A use is written at most once a minute per memory (store.memories.STALE_USE).
_USE_WRITTEN = timedelta(minutes=1)


@dataclass
class State:
    memories: dict[tuple[str, uuid.UUID], Memory] = field(default_factory=dict)
    # The text (key, value) of each memory the learned screens read, as an import says.
    screened: dict[tuple[str, uuid.UUID], tuple[str, str]] = field(default_factory=dict)
    events: list[tuple[str, MemoryEvent]] = field(default_factory=list)
    conversations: dict[tuple[str, str, str], Conversation] = field(default_factory=dict)
    # When each conversation was first stored and last replaced.
    conversation_times: dict[tuple[str, str, str], tuple[datetime, datetime]] = field(
        default_factory=dict
    )
    agents: dict[tuple[str, str], AgentSettings] = field(default_factory=dict)
    workspaces: dict[tuple[str, str], WorkspaceSettings] = field(default_factory=dict)
    card_types: dict[tuple[str, str], CardType] = field(default_factory=dict)
    # Blocks by (tenant, user, key), with their kept versions.
    blocks: dict[tuple[str, str, BlockKey], StoredBlock] = field(default_factory=dict)
    # Decisions as stored: without their re-examinations' score and count.
    decisions: dict[tuple[str, uuid.UUID], Decision] = field(default_factory=dict)
    reexaminations: dict[tuple[str, uuid.UUID], Reexamination] = field(default_factory=dict)
    # Active sessions by (tenant, agent); finished runs by (tenant, agent, run id).
    sessions: dict[tuple[str, str], StoredSession] = field(default_factory=dict)
    runs: dict[tuple[str, str, str], RecordedRun] = field(default_factory=dict)
    # The usage ledger, by tenant.
    usage: list[tuple[str, StoredUsage]] = field(default_factory=list)
    # Extraction jobs by (tenant, id).
    jobs: dict[tuple[str, uuid.UUID], StoredJob] = field(default_factory=dict)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


class Clock:
    """The wall clock (``clock_timestamp()``): strictly later at every reading, a
    microsecond a tick."""

    def __init__(self) -> None:
        self._now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self._now += MICROSECOND
        return self._now

    def advance(self, by: timedelta) -> None:
        """Time passes (for expiries)."""
        self._now += by


def _emptied(event: MemoryEvent) -> MemoryEvent:
    """An audit event as a content-free tombstone."""
    return dataclasses.replace(event, old=None, new=None)


class FakeStore(Store):
    def __init__(self) -> None:
        self.state = State()
        self.clock = Clock()
        # When the transaction the current task is in began, if it is in one.
        self._began: ContextVar[datetime | None] = ContextVar(
            f"fake-store-{id(self)}-began", default=None
        )
        # Called before each memory write: a test makes a concurrent writer act here.
        self.before_write: Callable[[MemoryWrite], None] | None = None
        self.page_keys = PageKeyring((PageKey(1, secrets.token_bytes(KEY_BYTES)),))

    def now(self) -> datetime:
        """``now()``: when the current transaction began; outside one, every call is a
        statement of its own and starts now."""
        began = self._began.get()
        return began if began is not None else self.clock()

    @asynccontextmanager
    async def transaction(self, principal: Principal) -> AsyncIterator[Tx]:
        saved = copy.deepcopy(self.state)
        began = self._began.set(self.clock())
        try:
            yield self.tx(principal)
        except BaseException:
            self.state = saved
            raise
        finally:
            self._began.reset(began)

    @asynccontextmanager
    async def connection(self, principal: Principal) -> AsyncIterator[Tx]:
        yield self.tx(principal)

    @asynccontextmanager
    async def admin(self) -> AsyncIterator[AdminTx]:
        """Across tenants: the extraction queue; no API keys, expiry sweep, indexer or
        keys of page tokens."""
        missing: Any = _Missing()
        yield AdminTx(
            keys=missing,
            job_queue=FakeJobQueue(self),
            expiry=missing,
            index=missing,
            page_keys=missing,
        )

    async def page_keyring(self, *, knowing: int = 0) -> PageKeyring:
        return self.page_keys

    def tombstone(self, tenant: str, memory_id: uuid.UUID) -> None:
        """Empty the snapshots of a memory's audit events."""
        self.state.events = [
            (
                t,
                dataclasses.replace(e, old=None, new=None)
                if t == tenant and e.memory_id == memory_id
                else e,
            )
            for t, e in self.state.events
        ]

    def add(self, principal: Principal, write: MemoryWrite) -> Memory:
        """Create a memory (with its event) outside any unit of work: a concurrent writer."""
        return FakeMemories(self, principal, now=self.clock).new(write)

    def tx(self, principal: Principal) -> Tx:
        missing: Any = _Missing()
        return Tx(
            memories=FakeMemories(self, principal),
            events=FakeEvents(self, principal),
            conversations=FakeConversations(self, principal),
            agents=FakeAgents(self, principal),
            workspaces=FakeWorkspaces(self, principal),
            blocks=FakeBlocks(self, principal),
            sessions=FakeSessions(self, principal),
            decisions=FakeDecisions(self, principal),
            usage=FakeUsage(self, principal),
            jobs=FakeJobs(self, principal),
            recall=missing,
            prompts=missing,
            clock=FakeClock(self),
            forget=FakeForget(self, principal),
            transfer=FakeTransfer(self, principal),
        )


class FakeClock(ClockRepository):
    """The database's clock: the store's wall clock."""

    def __init__(self, store: FakeStore) -> None:
        self._store = store

    async def now(self) -> datetime:
        return self._store.clock()


class _Missing:
    def __getattr__(self, name: str) -> Any:
        raise NotImplementedError(f"the fake store does not implement {name}")


def _bare(memory: Memory) -> Memory:
    """The memory as a statement that does not read its groundings returns it."""
    return replace(memory, groundings=())


def _listing_key(position: ListingPosition) -> tuple[Any, ...]:
    """A sort key of the listing order: pinned first, then importance, then the key
    (agent) or the most recently updated and the id (workspace)."""
    pinned, importance, *rest = position
    last = [-((v - EPOCH) // MICROSECOND) if isinstance(v, datetime) else v for v in rest]
    return (not pinned, -importance, *last)


class FakeMemories(MemoryRepository):
    def __init__(
        self,
        store: FakeStore,
        principal: Principal,
        *,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self._store = store
        self._tenant = principal.tenant_id
        self._actor = principal.user_id
        self._now = now or store.now

    @property
    def _rows(self) -> dict[tuple[str, uuid.UUID], Memory]:
        return self._store.state.memories

    def _expired(self, memory: Memory) -> bool:
        """Past its expiry at ``now()``, as the statements see it."""
        return memory.expire_time is not None and memory.expire_time <= self._store.now()

    def _expiry(self, write: MemoryWrite) -> datetime | None:
        """The write's expiry: its instant, or its time to live from the clock."""
        if isinstance(write.expiration, timedelta):
            return self._store.clock() + write.expiration
        return write.expiration

    def _mine(self, *, expired: bool = False) -> list[Memory]:
        """The tenant's memories; those past their expiry only with ``expired``."""
        return [
            m
            for (tenant, _), m in self._rows.items()
            if tenant == self._tenant and (expired or not self._expired(m))
        ]

    def _current(self) -> list[Memory]:
        """The tenant's memories that are neither expired nor superseded."""
        return [m for m in self._mine() if m.superseded_by is None]

    def _at(self, owner: Owner, key: str, *, expired: bool = False) -> Memory | None:
        found = self._mine(expired=expired)
        return next((m for m in found if m.owner == owner and m.key == key), None)

    def _live(self, memory_id: uuid.UUID) -> Memory | None:
        found = self._rows.get((self._tenant, memory_id))
        return None if found is None or self._expired(found) else found

    def _record(
        self,
        kind: MemoryEventType,
        old: Memory | None,
        new: Memory | None,
        *,
        actor: str | None = None,
        memory_id: uuid.UUID | None = None,
    ) -> None:
        subject = new or old
        about = subject.id if subject is not None else memory_id
        assert about is not None
        event = MemoryEvent(
            id=uuid.uuid4(),
            memory_id=about,
            type=kind,
            actor_user_id=actor or self._actor,
            # As the database stamps it: when the row says it was made, a deletion now.
            occurred_at=new.updated_at if new is not None else self._store.clock(),
            old=_bare(old) if old else None,
            new=_bare(new) if new else None,
        )
        self._store.state.events.append((self._tenant, event))

    def new(self, write: MemoryWrite) -> Memory:
        now = self._now()
        # What the write does not give takes the column's default.
        given = {
            "pinned": False,
            "importance": 0,
            **{n: v for n, v in _fields(write, _WRITTEN).items() if v is not None},
        }
        memory = Memory(
            id=uuid.uuid4(),
            owner=write.owner,
            created_at=now,
            updated_at=now,
            version=1,
            expire_time=self._expiry(write),
            **given,
            **(_fields(write.evidence, _EVIDENCE) if write.evidence else {}),
        )
        self._rows[(self._tenant, memory.id)] = memory
        self._record(MemoryEventType.CREATED, None, memory)
        return memory

    def _bump(self, current: Memory, **changes: Any) -> Memory:
        updated = replace(
            current, **changes, version=current.version + 1, updated_at=self._store.clock()
        )
        self._rows[(self._tenant, current.id)] = updated
        return updated

    async def write(self, write: MemoryWrite) -> Written | KeyHeld | None:
        current = self._at(write.owner, write.key)
        if self._store.before_write is not None:
            self._store.before_write(write)
            if self._at(write.owner, write.key) != current:
                return None  # a concurrent writer got there first
        if current is None:
            if self._at(write.owner, write.key, expired=True) is not None:
                return None  # an expired memory not yet swept holds the key
            return Written(_bare(self.new(write)), created=True)
        if current.source is not write.source:
            return KeyHeld(_bare(current))
        # The columns an upsert merges keep their value unless the write gives one.
        changes = {n: v for n, v in _fields(write, _MERGED).items() if v is not None}
        if write.expiration is not None:
            changes["expire_time"] = self._expiry(write)
        _check_period(
            changes.get("valid_start_time", current.valid_start_time),
            changes.get("valid_end_time", current.valid_end_time),
        )
        if write.evidence is not None:
            changes.update(_fields(write.evidence, _EVIDENCE))
        updated = self._bump(current, **changes, superseded_by=None)
        self._record(MemoryEventType.UPDATED, current, updated)
        return Written(_bare(updated), created=False)

    async def create(self, write: MemoryWrite) -> Memory | None:
        if self._at(write.owner, write.key, expired=True) is not None:
            return None
        return _bare(self.new(write))

    async def get(self, memory_id: uuid.UUID, *, lock: bool = False) -> Memory | None:
        return self._live(memory_id)

    async def find_by_key(
        self, owner: Owner, key: str, *, groundings: bool = False
    ) -> Memory | None:
        found = self._at(owner, key)
        if found is None:
            return None
        return found if groundings else _bare(found)

    async def update(
        self, memory_id: uuid.UUID, patch: MemoryPatch, event: MemoryEventType
    ) -> Memory:
        current = self._live(memory_id)
        if current is None:
            raise LookupError(f"memory {memory_id} does not exist")
        taken = patch.key is not None and self._at(current.owner, patch.key) is not None
        if taken and patch.key != current.key:
            raise AlreadyExists(f"key {patch.key!r} is already used", reason="KEY_TAKEN")
        changes = patch.applied()
        _check_period(*patch.period_of(current))
        updated = self._bump(current, **changes)
        self._record(event, current, updated)
        return updated

    async def pin(self, memory_id: uuid.UUID, pinned: bool) -> Memory | None:
        current = self._live(memory_id)
        if current is None or current.pinned == pinned:
            return current
        updated = self._bump(current, pinned=pinned)
        kind = MemoryEventType.PINNED if pinned else MemoryEventType.UNPINNED
        self._record(kind, current, updated)
        return updated

    async def supersede(self, memory_id: uuid.UUID, by: Memory) -> Memory | None:
        current = self._live(memory_id)
        if current is None or current.owner != by.owner or current.id == by.id:
            return current
        if current.superseded_by == by.id:
            return current
        end, at = current.valid_end_time, by.updated_at
        if current.valid_start_time is None or current.valid_start_time < at:
            end = at if end is None else min(end, at)
        updated = self._bump(current, superseded_by=by.id, valid_end_time=end)
        self._record(MemoryEventType.SUPERSEDED, current, updated)
        return updated

    async def delete(
        self, memory_id: uuid.UUID, *, version: int | None = None
    ) -> tuple[Memory | None, bool]:
        current = self._live(memory_id)
        if current is None:
            return None, False
        if version is not None and current.version != version:
            return _bare(current), False
        del self._rows[(self._tenant, memory_id)]
        self._record(MemoryEventType.DELETED, current, None)
        return _bare(current), True

    async def replace_groundings(
        self, memory_id: uuid.UUID, groundings: Sequence[Grounding]
    ) -> None:
        current = self._rows[(self._tenant, memory_id)]
        self._rows[(self._tenant, memory_id)] = replace(current, groundings=tuple(groundings))

    def _meets(self, memory: Memory, query: MemoryQuery) -> bool:
        """Whether ``memory`` meets ``query``: the parsed filter the SQL is made from,
        evaluated as it is."""
        return query.admits(memory, self._store.now())

    async def list_page(
        self,
        owner: Owner,
        *,
        after: ListingPosition | OrderPosition | None,
        limit: int,
        query: MemoryQuery = CURRENT,
        order: MemoryOrder = NATURAL,
    ) -> list[Memory]:
        rows = [m for m in self._mine(expired=True) if m.owner == owner and self._meets(m, query)]
        if order.natural:
            if after is not None:
                # A position, not a row: the page goes on even when that row is gone.
                start = _listing_key(after)  # type: ignore[arg-type]
                rows = [m for m in rows if _listing_key(listing_position(m)) > start]
            return sorted(rows, key=lambda m: _listing_key(listing_position(m)))[:limit]
        named = order

        def beyond(m: Memory) -> bool:
            for value, last, (_, descending) in zip(
                order_position(m, named),
                after,  # type: ignore[arg-type]
                named.fields,
                strict=True,
            ):
                if value != last:
                    return value < last if descending else value > last  # type: ignore[operator]
            return False

        if after is not None:
            rows = [m for m in rows if beyond(m)]
        # A stable sort by each field, the last first, orders by all of them.
        for n, (_, descending) in reversed(list(enumerate(named.fields))):
            rows.sort(key=functools.partial(_order_value, named, n), reverse=descending)
        return rows[:limit]

    async def mark_used(self, ids: Sequence[uuid.UUID]) -> None:
        now = self._store.clock()
        for memory_id in ids:
            found = self._rows.get((self._tenant, memory_id))
            if found is None:
                continue
            if found.last_used_time is not None and found.last_used_time > now - _USE_WRITTEN:
                continue
            expire_time = found.expire_time
            if expire_time is not None and expire_time > now:
                expire_time = max(expire_time, now + self._slide(found.owner))
            self._rows[(self._tenant, memory_id)] = replace(
                found, last_used_time=now, expire_time=expire_time
            )

    def _slide(self, owner: Owner) -> timedelta:
        """How far a use moves the expiry of the owner's memories (its settings')."""
        state = self._store.state
        if owner.scope is Scope.AGENT and (self._tenant, owner.id) in state.agents:
            return state.agents[(self._tenant, owner.id)].expiry_slide
        if owner.scope is Scope.WORKSPACE and (self._tenant, owner.id) in state.workspaces:
            return state.workspaces[(self._tenant, owner.id)].expiry_slide
        return timedelta(0)

    async def count_matching(self, owner: Owner, query: MemoryQuery) -> int:
        return len(
            [m for m in self._mine(expired=True) if m.owner == owner and self._meets(m, query)]
        )

    async def count(self, owner: Owner) -> int:
        return len([m for m in self._current() if m.owner == owner])

    async def delete_expired(self, owner: Owner, key: str) -> bool:
        found = self._at(owner, key, expired=True)
        if found is None or not self._expired(found):
            return False
        del self._rows[(self._tenant, found.id)]
        self._store.tombstone(self._tenant, found.id)
        self._record(MemoryEventType.DELETED, None, None, actor=EXPIRY_ACTOR, memory_id=found.id)
        return True

    async def recent(self, owners: Sequence[Owner], limit: int) -> list[Memory]:
        rows = sorted((_bare(m) for m in self._current() if m.owner in owners), key=lambda m: m.id)
        # Newest first; of rows updated in the same instant, the lowest id first.
        return sorted(rows, key=lambda m: m.updated_at, reverse=True)[:limit]

    async def learnings(self, agent_ids: Sequence[str], limit: int) -> list[Memory]:
        rows = [
            _bare(m)
            for m in self._current()
            if m.source is MemorySource.DIRECTOR
            and m.owner.scope is Scope.AGENT
            and m.owner.id in agent_ids
            and m.key.startswith(LEARNING_KEY_PREFIX)
        ]
        return sorted(rows, key=lambda m: (m.created_at, m.key), reverse=True)[:limit]

    async def owners(self, scope: Scope, *, after: str, limit: int) -> list[OwnerSummary]:
        current = {m.id for m in self._current()}
        found: dict[str, tuple[int, datetime | None]] = {}
        for m in self._mine(expired=True):
            if m.owner.scope is scope and m.owner.id > after:
                count, at = found.get(m.owner.id, (0, None))
                at = m.updated_at if at is None else max(at, m.updated_at)
                found[m.owner.id] = (count + (m.id in current), at)
        settings = {
            agent: s
            for (tenant, agent), s in self._store.state.agents.items()
            if tenant == self._tenant and scope is Scope.AGENT and agent > after
        }
        for agent, s in settings.items():
            count, at = found.get(agent, (0, None))
            changed = s.updated_at
            found[agent] = (count, changed if at is None or changed is None else max(at, changed))
        return [
            OwnerSummary(
                Owner(scope, owner_id),
                count,
                at,
                bool(settings[owner_id].memory_enabled) if owner_id in settings else False,
            )
            for owner_id, (count, at) in sorted(found.items())
        ][:limit]


# What statements do with each column, as PostgreSQL's statements do it (store/columns.py).
_WRITTEN = named(MemoryRow, WRITTEN)
_MERGED = named(MemoryRow, MERGED)
_EVIDENCE = named(MemoryRow, EVIDENCE)


def _fields(record: Any, names: Sequence[str]) -> dict[str, Any]:
    """The fields of ``record`` named as the columns ``names``."""
    have = {f.name for f in dataclasses.fields(record)}
    return {n: getattr(record, n) for n in names if n in have}


def _check_period(start: datetime | None, end: datetime | None) -> None:
    """The database's constraint: a period ends after it starts."""
    if start is not None and end is not None and end <= start:
        raise PeriodInverted("the period would end before it starts")


class FakeEvents(EventRepository):
    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    async def list_page(
        self, memory_id: uuid.UUID, *, after: tuple[datetime, uuid.UUID] | None, limit: int
    ) -> list[MemoryEvent]:
        events = [
            e
            for tenant, e in self._store.state.events
            if tenant == self._tenant and e.memory_id == memory_id
        ]
        stored = self._store.state.memories.get((self._tenant, memory_id))
        expiry = stored.expire_time if stored is not None else None
        if expiry is not None and expiry <= self._store.now():
            events = [_emptied(e) for e in events]
        events.sort(key=lambda e: (e.occurred_at, str(e.id)))
        if after is not None:
            events = [e for e in events if (e.occurred_at, str(e.id)) > (after[0], str(after[1]))]
        return events[:limit]


class FakeConversations(ConversationRepository):
    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    async def put(
        self, conversation: Conversation, *, writer: uuid.UUID | None = None
    ) -> Conversation:
        key = (self._tenant, conversation.provider, conversation.conversation_id)
        stored = self._store.state.conversations.get(key)
        if stored is not None:
            new, new_raw = conversation.messages, conversation.raw_events
            lost = {
                p: m
                for p, m in enumerate(stored.messages)
                if p >= len(new) or new[p].content != m.content
            }
            lost_raw = {
                p: e
                for p, e in enumerate(stored.raw_events)
                if p >= len(new_raw) or new_raw[p] != e
            }
            groundings = [
                g
                for (tenant, memory_id), memory in self._store.state.memories.items()
                if tenant == self._tenant
                and memory_id != writer
                and (memory.conversation_provider, memory.conversation_id) == key[1:]
                for g in memory.groundings
            ]
            grounded = {g.message_position for g in groundings if points_into_message(g)}
            grounded_raw = {g.raw_event_index for g in groundings if g.raw_event_index is not None}
            conversation = keep_grounded(conversation, lost, grounded, lost_raw, grounded_raw)
        times = self._store.state.conversation_times
        created = times[key][0] if key in times else self._store.now()
        times[key] = (created, self._store.clock() if key in times else created)
        self._store.state.conversations[key] = conversation
        return conversation

    async def get(self, provider: str, conversation_id: str) -> StoredConversation | None:
        key = (self._tenant, provider, conversation_id)
        found = self._store.state.conversations.get(key)
        if found is None:
            return None
        created, updated = self._store.state.conversation_times[key]
        return StoredConversation(
            found, len(found.messages), len(found.raw_events), created, updated
        )

    async def list_page(
        self, *, after: tuple[datetime, str, str] | None, limit: int, full: bool
    ) -> list[StoredConversation]:
        keys = [k for k in self._store.state.conversations if k[0] == self._tenant]
        found = [c for _, p, cid in keys if (c := await self.get(p, cid)) is not None]

        def position(c: StoredConversation) -> tuple[datetime, str, str]:
            return (c.updated_at, c.conversation.provider, c.conversation.conversation_id)

        later = [c for c in found if after is None or position(c) < after]
        page = sorted(later, key=position, reverse=True)[:limit]
        if full:
            return page
        # The basic view reads no message and no raw event, only how many there are.
        return [
            replace(c, conversation=replace(c.conversation, messages=(), raw_events=()))
            for c in page
        ]


class FakeAgents(AgentRepository):
    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    async def get(self, agent_id: str, *, lock: bool = False) -> AgentSettings:
        return self._store.state.agents.get(
            (self._tenant, agent_id), AgentSettings(agent_id=agent_id)
        )

    async def put(self, settings: AgentSettings) -> AgentSettings:
        # A new row takes now(); a change of one the wall clock.
        exists = (self._tenant, settings.agent_id) in self._store.state.agents
        stored = replace(settings, updated_at=self._store.clock() if exists else self._store.now())
        self._store.state.agents[(self._tenant, settings.agent_id)] = stored
        return stored


class FakeWorkspaces(WorkspaceRepository):
    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    async def get(self, workspace_id: str, *, lock: bool = False) -> WorkspaceSettings:
        return self._store.state.workspaces.get(
            (self._tenant, workspace_id), WorkspaceSettings(workspace_id)
        )

    async def put(self, settings: WorkspaceSettings) -> WorkspaceSettings:
        # A new row takes now(); a change of one the wall clock.
        key = (self._tenant, settings.workspace_id)
        exists = key in self._store.state.workspaces
        stored = replace(settings, updated_at=self._store.clock() if exists else self._store.now())
        self._store.state.workspaces[key] = stored
        return stored


class FakeTransfer(TransferRepository):
    """A tenant's records as an export reads them and an import writes them, each put
    only where nothing holds the record's key."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id
        self._principal = principal

    @property
    def _state(self) -> State:
        return self._store.state

    async def card_types(self) -> list[CardType]:
        found = [c for (t, _), c in self._state.card_types.items() if t == self._tenant]
        return sorted(found, key=lambda c: c.name)

    async def conversations(self) -> list[StoredConversation]:
        keys = sorted(k for k in self._state.conversations if k[0] == self._tenant)
        conversations = FakeConversations(self._store, self._principal)
        found = [await conversations.get(provider, cid) for _, provider, cid in keys]
        return [c for c in found if c is not None]

    async def memories(self) -> list[MemoryRecord]:
        # No index worker here: only a text an import said was read counts as read.
        memories = FakeMemories(self._store, self._principal)
        found = sorted(memories._mine(), key=lambda m: (m.owner.scope.value, m.owner.id, m.key))
        read = self._state.screened
        return [
            MemoryRecord(
                m, not m.held_for_review and read.get((self._tenant, m.id)) == (m.key, m.value)
            )
            for m in found
        ]

    async def blocks(self) -> list[UserBlock]:
        found = [
            UserBlock(user, key, stored.block.content)
            for (tenant, user, key), stored in self._state.blocks.items()
            if tenant == self._tenant
        ]
        return sorted(
            found, key=lambda b: (b.user_id, b.key.scope.value, b.key.agent_id, b.key.label.value)
        )

    async def decisions(self) -> list[DecisionRecord]:
        mine = [d for (t, _), d in self._state.decisions.items() if t == self._tenant]
        held = [r for (t, _), r in self._state.reexaminations.items() if t == self._tenant]
        records = []
        for d in sorted(mine, key=lambda d: (d.created_at, str(d.id))):
            history = sorted(
                (r for r in held if r.parent_decision_id == d.id),
                key=lambda r: (r.created_at, str(r.id)),
            )
            records.append(DecisionRecord(reexamined(self._state, self._tenant, d), tuple(history)))
        return records

    async def put_card_type(self, card_type: CardType) -> bool:
        key = (self._tenant, card_type.name)
        if key in self._state.card_types:
            return False
        self._state.card_types[key] = card_type
        return True

    async def put_conversation(self, conversation: StoredConversation) -> bool:
        c = conversation.conversation
        key = (self._tenant, c.provider, c.conversation_id)
        if key in self._state.conversations:
            return False
        self._state.conversations[key] = c
        self._state.conversation_times[key] = (conversation.created_at, conversation.updated_at)
        return True

    async def put_memory(self, record: MemoryRecord) -> bool:
        memory = record.memory
        taken = any(
            (m.id == memory.id or (m.owner, m.key) == (memory.owner, memory.key))
            for (t, _), m in self._state.memories.items()
            if t == self._tenant
        )
        if taken:
            return False
        stored = replace(memory, version=1)
        self._state.memories[(self._tenant, memory.id)] = stored
        if record.screened:
            self._state.screened[(self._tenant, memory.id)] = (memory.key, memory.value)
        FakeMemories(self._store, self._principal)._record(MemoryEventType.CREATED, None, stored)
        return True

    async def put_block(self, block: UserBlock, *, keep: int) -> bool:
        blocks = FakeBlocks(self._store, Principal(self._tenant, block.user_id))
        outcome = await blocks.write(block.key, block.content, expected=None, keep=keep)
        return outcome.written is not None

    async def put_decision(self, record: DecisionRecord) -> bool:
        d = record.decision
        if (self._tenant, d.card_type) not in self._state.card_types:
            raise FailedPrecondition(
                f"card type {d.card_type!r} is not registered",
                reason="CARD_TYPE_NOT_REGISTERED",
                metadata={"card_type": d.card_type},
            )
        mine = [x for (t, _), x in self._state.decisions.items() if t == self._tenant]
        if any(x.id == d.id or x.run_id == d.run_id for x in mine):
            return False
        self._state.decisions[(self._tenant, d.id)] = replace(
            d, latest_conviction_score=None, reexamination_count=0, compact=""
        )
        for i, item in enumerate(record.reexaminations):
            held = [r for (t, _), r in self._state.reexaminations.items() if t == self._tenant]
            if any(r.id == item.id or r.run_id == item.run_id for r in held):
                raise AlreadyExists(
                    f"reexaminations[{i}]: the tenant holds a re-examination of run "
                    f"{item.run_id!r} or with id {item.id} already, of another decision",
                    reason="REEXAMINATION_ALREADY_RECORDED",
                    metadata={"run_id": item.run_id},
                )
            self._state.reexaminations[(self._tenant, item.id)] = replace(
                item, parent_decision_id=d.id
            )
        return True

    async def superseded_across_owners(self, ids: list[uuid.UUID]) -> list[uuid.UUID]:
        stored = {m.id: m for (t, _), m in self._state.memories.items() if t == self._tenant}
        return [
            i
            for i in ids
            if i in stored
            and (by := stored.get(stored[i].superseded_by or uuid.UUID(int=0))) is not None
            and by.owner != stored[i].owner
        ]


def _order_value(order: MemoryOrder, n: int, memory: Memory) -> Any:
    """The value of ``memory`` in the ``n``th field of ``order``."""
    return order_position(memory, order)[n]
