"""The store's contract: repositories on a unit of work, in domain types only.

A unit of work (:class:`Tx`) is bound to one caller: every repository on it reads
and writes that caller's tenant and nothing else, and records that caller as the
actor of what it writes. Services get units of work from a :class:`Store`:

- ``transaction(principal)``: one PostgreSQL transaction, committed when the block
  ends and rolled back when it raises;
- ``connection(principal)``: no transaction around the block; each call is its own
  (for use cases that are one statement, and for independent reads).

Every method may also raise :class:`~agent_memory.domain.errors.Unavailable` (the
database cannot be reached) and :class:`~agent_memory.domain.errors.Timeout` (a
statement ran past the server's statement timeout); the docstrings name only the
failures particular to the method.

``Database`` (``store/database.py``) implements the contract over PostgreSQL; the
test suite has an in-memory one for service logic, and ``tests/integration`` checks
both against the same cases.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from agent_memory.domain.active_sessions import RecordedRun, RunSession, StoredSession
from agent_memory.domain.agents import AgentSettings, WorkspaceSettings
from agent_memory.domain.blocks import Block, BlockKey, BlockVersion, BlockWrite, ScopeFilter
from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    Reexamination,
    ResolutionStatus,
)
from agent_memory.domain.errors import FailedPrecondition
from agent_memory.domain.events import MemoryEvent, MemoryEventType
from agent_memory.domain.extraction import (
    ClaimedJob,
    ExtractionJob,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    Usage,
    UsageReport,
)
from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.identity import ApiKeyInfo, Principal, Role, StoredApiKey
from agent_memory.domain.indexing import (
    Claimed,
    IndexingStatus,
    LineToIndex,
    MemoryToIndex,
    Vector,
    WorkerBeat,
)
from agent_memory.domain.memorize import Conversation, StoredConversation
from agent_memory.domain.memory import (
    Grounding,
    HoldReason,
    KeyHeld,
    ListingPosition,
    Memory,
    MemoryPatch,
    MemoryWrite,
    Owner,
    OwnerSummary,
    Scope,
    Written,
)
from agent_memory.domain.memory_query import (
    CURRENT,
    NATURAL,
    MemoryOrder,
    MemoryQuery,
    OrderPosition,
)
from agent_memory.domain.paging import PageKeyring
from agent_memory.domain.recall import (
    LexicalPart,
    Meaning,
    PromptRead,
    PromptState,
    RankQuery,
    RecallMatch,
)
from agent_memory.domain.transfer import DecisionRecord, MemoryRecord, UserBlock

Lock = Literal["share", "update"]


class MemoryRepository(ABC):
    """Memories of the caller's tenant. Every change writes its audit event with it.

    A memory past its ``expire_time`` is not there for any method but
    ``list_page(show_expired=True)`` and ``delete_expired``, until the expiry
    sweeper deletes it. A superseded memory is there for ``get``, ``find_by_key``,
    ``write`` (which makes it current again) and ``list_page(show_superseded=True)``;
    ``count``, ``recent`` and ``learnings`` leave it out.

    A memory read says whether it is ``embedded``: whether it has a vector of the
    model recall runs, made from its text as it is; the unit of work knows that
    model, and without one (recall by words only) says nothing (None)."""

    @abstractmethod
    async def write(self, write: MemoryWrite) -> Written | KeyHeld | None:
        """Create the memory at (owner, key), or update the one there if it has the
        write's source (a CREATED or UPDATED event with it). A memory that has expired
        is not there: its key answers ``None`` until it is deleted.

        Returns ``KeyHeld`` (nothing written) when the key belongs to a memory of
        another source, and ``None`` when a concurrent writer created or changed
        the memory at the key first: nothing was written, and the same write, tried
        again, goes on from what that writer left.

        Raises:
            PeriodInverted: the write gives one end of the fact's period and the
                other, as stored, would leave it ending before it starts; nothing
                was written.
        """

    @abstractmethod
    async def create(self, write: MemoryWrite) -> Memory | None:
        """Create the memory at (owner, key) with a CREATED event; ``None`` (nothing
        written) when the key is taken."""

    @abstractmethod
    async def get(self, memory_id: uuid.UUID, *, lock: bool = False) -> Memory | None:
        """The memory with its groundings. With ``lock`` the row stays locked until the
        transaction ends."""

    @abstractmethod
    async def find_by_key(
        self, owner: Owner, key: str, *, groundings: bool = False
    ) -> Memory | None:
        """The memory at (owner, key), with its groundings only when asked."""

    @abstractmethod
    async def update(
        self, memory_id: uuid.UUID, patch: MemoryPatch, event: MemoryEventType
    ) -> Memory:
        """Apply ``patch`` to an existing memory (a new version, updated now) and record
        ``event`` with the memory before and after.

        Raises:
            AlreadyExists: the patch's key is taken under the same owner
                (reason ``KEY_TAKEN``).
            PeriodInverted: the fact's period would end before it starts.
            LookupError: no such memory (the caller checks existence first).
        """

    @abstractmethod
    async def pin(self, memory_id: uuid.UUID, pinned: bool) -> Memory | None:
        """Set ``pinned``; a PINNED or UNPINNED event when it changes. ``None`` when there
        is no such memory."""

    @abstractmethod
    async def supersede(self, memory_id: uuid.UUID, by: Memory) -> Memory | None:
        """Mark the memory superseded by ``by`` (a SUPERSEDED event when that changes
        it), when it is another memory of ``by``'s owner; otherwise it is left as it is.
        Its fact's period then ends at ``by.updated_at`` when it was open or ended
        later, unless it had not started by then. Returns the memory as it stands
        after, ``None`` when there is no such memory."""

    @abstractmethod
    async def delete(
        self, memory_id: uuid.UUID, *, version: int | None = None
    ) -> tuple[Memory | None, bool]:
        """Delete the memory (with a DELETED event), only if it is at ``version`` when
        one is given. Returns the memory as it was (``None``: no such memory) and
        whether it was deleted."""

    @abstractmethod
    async def replace_groundings(
        self, memory_id: uuid.UUID, groundings: Sequence[Grounding]
    ) -> None:
        """Make ``groundings`` the memory's groundings, in order."""

    @abstractmethod
    async def list_page(
        self,
        owner: Owner,
        *,
        after: ListingPosition | OrderPosition | None,
        limit: int,
        query: MemoryQuery = CURRENT,
        order: MemoryOrder = NATURAL,
    ) -> list[Memory]:
        """Up to ``limit`` of the owner's memories that meet ``query`` (by default the
        current ones), with their groundings, after the position ``after``: in the
        owner's listing order (agent: pinned, importance desc, key; workspace: pinned,
        importance desc, most recently updated; a ``ListingPosition``), or in the
        named ``order`` (an ``OrderPosition``)."""

    @abstractmethod
    async def mark_used(self, ids: Sequence[uuid.UUID]) -> None:
        """Record that the memories ``ids`` reached a model now (a hint: rows marked
        within the last minute, or held by a writer, are passed by), and move the
        expiry of each that has one to no sooner than now plus its owner's
        ``expiry_slide`` (an agent's or a workspace's settings)."""

    @abstractmethod
    async def count_matching(self, owner: Owner, query: MemoryQuery) -> int:
        """How many of the owner's memories meet ``query``."""

    @abstractmethod
    async def delete_expired(self, owner: Owner, key: str) -> bool:
        """Delete the memory at (owner, key) if it has expired (a DELETED event by the
        expiry); whether one was."""

    @abstractmethod
    async def count(self, owner: Owner) -> int:
        """How many current memories the owner has: not expired, not superseded."""

    @abstractmethod
    async def recent(self, owners: Sequence[Owner], limit: int) -> list[Memory]:
        """The most recently updated memories of any of ``owners``, newest first."""

    @abstractmethod
    async def learnings(self, agent_ids: Sequence[str], limit: int) -> list[Memory]:
        """Director learnings of any of ``agent_ids``, newest first."""

    @abstractmethod
    async def owners(self, scope: Scope, *, after: str, limit: int) -> list[OwnerSummary]:
        """The tenant's agents (those holding a memory or settings) or workspaces
        (those holding a memory), by id, the first ``limit`` past ``after``."""


class EventRepository(ABC):
    """The audit trail of the tenant's memories; it outlives the memories."""

    @abstractmethod
    async def list_page(
        self, memory_id: uuid.UUID, *, after: tuple[datetime, uuid.UUID] | None, limit: int
    ) -> list[MemoryEvent]:
        """A memory's events, oldest first, after the ``(occurred_at, id)`` position."""


class ConversationRepository(ABC):
    @abstractmethod
    async def put(
        self, conversation: Conversation, *, writer: uuid.UUID | None = None
    ) -> Conversation:
        """Store the snapshot in place of an earlier one of the same (provider, id),
        never losing a message or raw event that a grounding of a memory other than
        ``writer`` points into: stored messages (raw events) past the new snapshot's
        end are kept up to the last grounded one. Returns the snapshot as stored.

        Raises:
            FailedPrecondition: the snapshot changes the content of a grounded
                message (reason ``GROUNDED_MESSAGE_CHANGED``) or raw event (reason
                ``GROUNDED_RAW_EVENT_CHANGED``).
        """

    @abstractmethod
    async def get(self, provider: str, conversation_id: str) -> StoredConversation | None:
        """The tenant's snapshot with its messages and raw events, or None."""

    @abstractmethod
    async def list_page(
        self, *, after: tuple[datetime, str, str] | None, limit: int, full: bool
    ) -> list[StoredConversation]:
        """The tenant's snapshots, most recently updated first (then by provider and
        id, descending), after the ``(updated_at, provider, id)`` position; with their
        messages and raw events only when ``full``."""


class AgentRepository(ABC):
    @abstractmethod
    async def get(self, agent_id: str, *, lock: bool = False) -> AgentSettings:
        """The agent's settings; an agent never written reads as the defaults. With
        ``lock`` a stored row stays locked until the transaction ends."""

    @abstractmethod
    async def put(self, settings: AgentSettings) -> AgentSettings:
        """Store the settings, updated now."""


class WorkspaceRepository(ABC):
    @abstractmethod
    async def get(self, workspace_id: str, *, lock: bool = False) -> WorkspaceSettings:
        """The workspace's settings; a workspace never written reads as the defaults.
        With ``lock`` a stored row stays locked until the transaction ends."""

    @abstractmethod
    async def put(self, settings: WorkspaceSettings) -> WorkspaceSettings:
        """Store the settings, updated now."""


class BlockRepository(ABC):
    """Blocks of the caller (tenant and user) and of the workspaces of its tenant, their
    versions and archival lines: a workspace block (``BlockKey.shared``) is the
    tenant's, the same whichever user of it names the workspace.

    A block read says how many of its lines have a vector of the model recall runs
    (``indexed_line_count``); the unit of work knows that model."""

    @abstractmethod
    async def get(self, key: BlockKey) -> Block | None: ...

    @abstractmethod
    async def select(
        self, scope_filter: ScopeFilter, agent_id: str, workspace_id: str = ""
    ) -> list[Block]:
        """The user's blocks, then agent blocks by agent id, then the workspace's blocks;
        core before archival. ``agent_id`` narrows the agent blocks; workspace blocks
        are listed only of ``workspace_id``, and only when it is given."""

    @abstractmethod
    async def write(
        self,
        key: BlockKey,
        content: str,
        *,
        expected: datetime | None,
        keep: int,
    ) -> BlockWrite:
        """Compare-and-set: with ``expected`` absent create the block at version 1 if
        there is none; present, replace it if its ``updated_at`` is exactly that, with
        the next version and a strictly later ``updated_at``. A write keeps a version
        row (the newest ``keep`` are kept) and, for archival blocks, makes the stored
        lines those of ``content``: a line whose text the block held before keeps that
        line's vector; the others wait for the indexer.

        Of concurrent writers holding the same ``expected`` exactly one writes; the
        others get the block as that writer left it.
        """

    @abstractmethod
    async def delete(
        self, key: BlockKey, *, expected: datetime | None
    ) -> tuple[bool, Block | None]:
        """Delete the block with its versions and lines, only if last written at exactly
        ``expected`` when that is given. Returns whether it was deleted and, when
        not, the block as it is."""

    @abstractmethod
    async def versions(
        self, key: BlockKey, *, before: int | None, limit: int
    ) -> list[BlockVersion] | None:
        """Up to ``limit`` kept versions, newest first, older than ``before`` when given;
        ``None`` when the block does not exist."""


class SessionRepository(ABC):
    """Active sessions and finished runs. The agent's session row is the lock that
    serialises runs finishing at once, resets and enables."""

    @abstractmethod
    async def get(self, agent_id: str, *, lock: bool = False) -> StoredSession | None: ...

    @abstractmethod
    async def ensure(self, agent_id: str) -> None:
        """Create the agent's session row, fresh and anchored now, unless it exists."""

    @abstractmethod
    async def reset(self, agent_id: str) -> StoredSession:
        """Forget the session id and move the anchor to now, strictly after every run
        already counted."""

    @abstractmethod
    async def find_run(self, agent_id: str, run_id: str) -> RunSession | None: ...

    @abstractmethod
    async def insert_run(
        self, agent_id: str, run: RunSession, *, carried: bool, after: datetime | None
    ) -> datetime | None:
        """Record a run, strictly later than ``after``; returns when, or ``None`` when
        the run id is taken (nothing written)."""

    @abstractmethod
    async def carry(self, agent_id: str, session_id: str, at: datetime) -> StoredSession:
        """Make ``session_id`` the one the agent's next run resumes."""

    @abstractmethod
    async def list_runs(
        self, agent_id: str, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RecordedRun]:
        """Up to ``limit`` of the agent's runs, newest first (then by run id, highest
        first), after the position (recorded_at, run_id) ``after``."""

    @abstractmethod
    async def runs_since(self, agent_id: str, anchor: datetime) -> int:
        """Carried scheduled runs recorded after ``anchor`` (chat turns are not counted)."""


class DecisionRepository(ABC):
    """Card types, decisions and re-examinations. No method changes a decision's result."""

    @abstractmethod
    async def put_card_type(self, card_type: CardType) -> tuple[CardType, bool]:
        """Insert or replace the card type of that name; says whether it was new."""

    @abstractmethod
    async def get_card_type(self, name: str) -> CardType | None: ...

    @abstractmethod
    async def insert(self, decision: NewDecision) -> Decision | None:
        """Record an OPEN decision; ``None`` when its run id already has one."""

    @abstractmethod
    async def get(self, decision_id: uuid.UUID, *, lock: Lock | None = None) -> Decision | None:
        """One decision with its result. ``lock``: ``"share"`` holds its status still
        while letting re-examinations in; ``"update"`` is for changing the status."""

    @abstractmethod
    async def find_by_run(self, run_id: str) -> Decision | None: ...

    @abstractmethod
    async def recent(
        self, agent_id: str, *, limit: int, with_result: bool, card_type: str | None = None
    ) -> list[Decision]:
        """The agent's newest decisions first; results are not read unless wanted."""

    @abstractmethod
    async def set_resolution(self, decision_id: uuid.UUID, status: ResolutionStatus) -> None:
        """Set the status, and when the decision closed; nothing else changes."""

    @abstractmethod
    async def insert_reexamination(self, item: NewReexamination) -> Reexamination | None:
        """Record a re-examination; ``None`` when its run id already has one."""

    @abstractmethod
    async def find_reexamination_by_run(self, run_id: str) -> Reexamination | None: ...

    @abstractmethod
    async def reexaminations(self, decision_id: uuid.UUID) -> list[Reexamination]:
        """A decision's conviction history, oldest first."""


class UsageRepository(ABC):
    @abstractmethod
    async def record(
        self,
        synthetic_session_id: str,
        *,
        agent_id: str,
        model: str,
        usage: Usage,
        outcome: ExtractionOutcome,
    ) -> None:
        """Add one model call to the ledger, recorded now."""

    @abstractmethod
    async def report(
        self, prefix: str, *, start: datetime | None, end: datetime | None
    ) -> UsageReport:
        """Records whose id starts with ``prefix`` in [start, end), oldest first, with
        totals over every match (the record list itself is capped)."""


class JobRepository(ABC):
    """The tenant's queued extraction passes."""

    @abstractmethod
    async def enqueue(self, request: ExtractionRequest, *, settle: timedelta) -> uuid.UUID:
        """Queue a pass to run after ``settle``, run by the caller. A pass of the same
        run still waiting is replaced and its clock restarted."""

    @abstractmethod
    async def finish(self, job_id: uuid.UUID, *, attempt: int, result: ExtractionResult) -> bool:
        """Close a running job with the pass's result (outcome, detail, the ids it
        wrote, what it dropped, its usage); ``False`` when it is no longer
        ``attempt``'s (its lease ran out and another worker claimed it)."""

    @abstractmethod
    async def get(self, job_id: uuid.UUID) -> ExtractionJob | None:
        """The tenant's job, without its transcript, or None."""

    @abstractmethod
    async def retry_later(
        self,
        job_id: uuid.UUID,
        *,
        attempt: int,
        delay: timedelta,
        outcome: ExtractionOutcome,
        detail: str,
    ) -> bool:
        """Queue the job again after ``delay``; ``False`` (and the job is closed) when a
        newer pass of the same run is already waiting. A runner whose lease was
        taken over changes nothing."""


class RecallRepository(ABC):
    @abstractmethod
    async def rank(self, query: RankQuery) -> list[RecallMatch]:
        """Matches by words, best first (at most ``query.limit``), each with a score in
        [0, 1]."""

    @abstractmethod
    async def lexical(self, query: RankQuery) -> LexicalPart:
        """The lexical half of a ranking by meaning: the best candidates by words, and
        the searched blocks' speakers."""

    @abstractmethod
    async def fuse(
        self, query: RankQuery, lexical: LexicalPart, meaning: Meaning
    ) -> list[RecallMatch]:
        """Matches by words and meaning, best first (at most ``query.limit``), each with
        a score in [0, 1]: the ``lexical`` candidates and the best by meaning, scored
        together. Lines and memories without a vector of ``meaning.model`` rank by
        their words."""

    @abstractmethod
    async def vectors_available(self) -> bool:
        """Whether the database can compare embeddings (pgvector is installed)."""

    @abstractmethod
    async def has_archival(self, agent_id: str, workspace_id: str = "") -> bool:
        """Whether the caller's archival block, the agent's or (when one is named) the
        workspace's holds a line."""

    @abstractmethod
    async def indexing(self, model: str) -> IndexingStatus:
        """How indexing stands for the caller's tenant: its lines and memories waiting
        for a vector (counted up to a bound), and the workers of ``model`` running."""


class PromptRepository(ABC):
    @abstractmethod
    async def read(self, request: PromptRead) -> PromptState:
        """Every part of a render at once. Raises what any part's read raises."""


class TransferRepository(ABC):
    """Every record of the caller's tenant, out and in, with the ids and times it has:
    what ``agent-memory export`` reads and ``import`` writes (``domain/transfer.py``).

    A put writes its record only where nothing holds the record's key, and says
    whether it did, so putting the same records twice changes nothing the second time.
    Puts take records as they are: the use case has checked them. Every put may also
    raise :class:`~agent_memory.domain.errors.FailedPrecondition` (reason
    ``RECORD_REFUSED``) when the database refuses the record all the same."""

    @abstractmethod
    async def card_types(self) -> list[CardType]:
        """By name."""

    @abstractmethod
    async def conversations(self) -> list[StoredConversation]:
        """With their messages and raw events, by provider and id."""

    @abstractmethod
    async def memories(self) -> list[MemoryRecord]:
        """Those that have not expired (superseded ones included), with their
        groundings, by scope, owner and key; each with whether its text needs no
        judging by the learned screens (they read it, a person wrote it or let it go;
        never one held)."""

    @abstractmethod
    async def blocks(self) -> list[UserBlock]:
        """Every user's blocks as they are now, by user, scope, agent id and label."""

    @abstractmethod
    async def decisions(self) -> list[DecisionRecord]:
        """With their results and re-examinations (oldest first), oldest first."""

    @abstractmethod
    async def put_card_type(self, card_type: CardType) -> bool:
        """Insert the card type with its times, unless its name is taken."""

    @abstractmethod
    async def put_conversation(self, conversation: StoredConversation) -> bool:
        """Insert the snapshot with its times, unless its (provider, id) is taken."""

    @abstractmethod
    async def superseded_across_owners(self, ids: list[uuid.UUID]) -> list[uuid.UUID]:
        """Of the memories ``ids``, those superseded by a memory of another owner."""

    @abstractmethod
    async def put_memory(self, record: MemoryRecord) -> bool:
        """Insert the memory with its groundings, ids and times at version 1, and a
        CREATED event by the caller, unless its id or its (owner, key) is taken; its text
        read by the learned screens when ``record.screened`` (trusted by the caller)."""

    @abstractmethod
    async def put_block(self, block: UserBlock, *, keep: int) -> bool:
        """Create the block of ``block.user_id`` as a block write creates one (version 1,
        written now, its version kept, archival lines waiting for the indexer),
        unless it exists."""

    @abstractmethod
    async def put_decision(self, record: DecisionRecord) -> bool:
        """Insert the decision with its ids and times, unless its id or run id is taken,
        and then its re-examinations, each unless its id or run id is taken.

        Raises:
            FailedPrecondition: the decision's card type is not registered (reason
                ``CARD_TYPE_NOT_REGISTERED``).
        """


@dataclass(frozen=True)
class Tx:
    """A unit of work bound to one caller: the repositories, and the database clock."""

    memories: MemoryRepository
    events: EventRepository
    conversations: ConversationRepository
    agents: AgentRepository
    workspaces: WorkspaceRepository
    blocks: BlockRepository
    sessions: SessionRepository
    decisions: DecisionRepository
    usage: UsageRepository
    jobs: JobRepository
    recall: RecallRepository
    prompts: PromptRepository
    clock: Clock
    forget: ForgetRepository
    transfer: TransferRepository
    # On a hot standby: read-only, and a little behind the primary. Reads that would
    # mark what they show as used leave the marking to the caller, on the primary.
    standby: bool = False
    # Reading the state as it was at this instant: reads only, nothing marked as used.
    as_of: datetime | None = None


class ForgetRepository(ABC):
    """Removes every stored text of one subject of the caller's tenant. Meant for one
    transaction: each method is several statements."""

    @abstractmethod
    async def agent(self, agent_id: str) -> ForgetCounts:
        """Forget an agent (see MemoryService/ForgetAgent)."""

    @abstractmethod
    async def workspace(self, workspace_id: str) -> ForgetCounts:
        """Forget a workspace (see MemoryService/ForgetWorkspace)."""

    @abstractmethod
    async def user(self) -> ForgetCounts:
        """Forget the caller's own user (see MemoryService/ForgetUser)."""


class Clock(ABC):
    @abstractmethod
    async def now(self) -> datetime:
        """The database's current time, read now: one clock for every replica."""


class KeyRepository(ABC):
    """API keys of every tenant (operators' and authentication's view)."""

    @abstractmethod
    async def add(
        self,
        *,
        tenant_id: str,
        key_id: str,
        user_id: str,
        name: str,
        secret_hash: bytes,
        role: Role = Role.ORCHESTRATOR,
    ) -> ApiKeyInfo:
        """Store a new key with its role."""

    @abstractmethod
    async def find(self, key_id: str) -> StoredApiKey | None: ...

    @abstractmethod
    async def select(self, tenant_id: str | None = None) -> list[ApiKeyInfo]:
        """Keys by tenant, then creation time."""

    @abstractmethod
    async def revoke(self, key_id: str) -> ApiKeyInfo | None:
        """Mark the key revoked (once); ``None`` when there is no such key."""


class PageKeyRepository(ABC):
    """The keys that seal page tokens, one set for every server of the database."""

    @abstractmethod
    async def load(self) -> PageKeyring:
        """The keys that have not expired, the newest last; a first key is made when
        none seals yet."""

    @abstractmethod
    async def rotate(self, keep: timedelta) -> int:
        """Make a new key, the one that seals from now on: each older key still opens
        its tokens for ``keep`` (a key already expiring sooner keeps its expiry), and
        keys expired by now are deleted. The new key's id.

        Raises:
            Conflict: other rotations kept getting in the way (reason
                ``CONCURRENT_ROTATION``).
        """


class JobQueue(ABC):
    """The extraction queue across tenants, as the workers see it."""

    @abstractmethod
    async def claim(self, *, lease: timedelta) -> ClaimedJob | None:
        """Take one due job, or one whose runner's lease ran out, under a new lease."""


class IndexQueue(ABC):
    """Lines and memories across tenants, as the background indexer embeds them."""

    @abstractmethod
    async def vectors_available(self) -> bool:
        """Whether the database can compare vectors (pgvector is installed): without
        it nothing is worth embedding."""

    @abstractmethod
    async def claim(
        self, *, model: str, limit: int, lease: timedelta, after_tenant: str = ""
    ) -> Claimed:
        """Take up to ``limit`` lines and memories (a share of the claim is kept for
        memories) that have no vector of ``model`` made from their text as it is,
        under a lease: until it runs out, no other claim takes them. Current memories
        only. Rows of the tenants after ``after_tenant`` come first, then the others:
        claims that pass on the last tenant they took go round the tenants."""

    @abstractmethod
    async def claim_unscreened(
        self, *, model: str, limit: int, lease: timedelta, after_tenant: str = ""
    ) -> tuple[list[tuple[MemoryToIndex, Vector]], str]:
        """Take up to ``limit`` current memories whose vector of their text,
        made by ``model``, the learned screens have not read (embedded before they
        existed), each with that vector, under a lease: those of the next tenant that
        has some after ``after_tenant`` (round again past the last), and that tenant.
        Stored again with :meth:`store` (``fresh_vectors=False``), they count as read."""

    @abstractmethod
    async def store(
        self,
        *,
        model: str,
        lines: Sequence[tuple[LineToIndex, Vector]],
        memories: Sequence[tuple[MemoryToIndex, Vector]],
        holds: Mapping[uuid.UUID, HoldReason] | None = None,
        screened: bool = False,
        fresh_vectors: bool = True,
    ) -> int:
        """Keep each vector where the text is still the one claimed, and end the
        leases; how many were kept. ``holds``: the memories held for review with their
        vector, each with why (each hold audited); ``screened``: the learned screens read
        these vectors (a memory they judge counts as read, unless its text was read or
        let go by a person meanwhile, which stands);
        ``fresh_vectors`` False: the vectors are the ones stored, kept as they are."""

    @abstractmethod
    async def release(
        self, *, lines: Sequence[LineToIndex], memories: Sequence[MemoryToIndex]
    ) -> None:
        """End the leases of what could not be embedded now, for the next claim."""

    @abstractmethod
    async def beat(self, beat: WorkerBeat) -> None:
        """Say how an index worker goes (its row is rewritten), and let go of the rows
        of workers not heard from for an hour."""

    @abstractmethod
    async def leave(self, worker: str) -> None:
        """A worker stops: its row goes."""


class ExpirySweep(ABC):
    """Expired memories across tenants, as the sweeper deletes them."""

    @abstractmethod
    async def sweep(self, limit: int) -> int:
        """Delete up to ``limit`` expired memories, the longest expired first, each with
        a DELETED event; how many. Memories another sweeper holds are skipped."""

    @abstractmethod
    async def prune_history(self, kept: timedelta, limit: int) -> int:
        """Take up to ``limit`` memory events that have grown older than ``kept`` since
        the last sweep, in the order they did: each becomes its memory's state at that
        horizon (which as-of reads start from), and its memory's older events are
        deleted, the event too where it left no memory. How many events were taken: each
        is taken once, whatever other sweeps run beside this one."""


@dataclass(frozen=True)
class AdminTx:
    """Work across tenants: API keys, the extraction queue, the expiry sweep, the
    indexer and the keys of page tokens."""

    keys: KeyRepository
    job_queue: JobQueue
    expiry: ExpirySweep
    index: IndexQueue
    page_keys: PageKeyRepository


class Store(ABC):
    """Where units of work come from."""

    @abstractmethod
    def transaction(self, principal: Principal) -> AbstractAsyncContextManager[Tx]:
        """One transaction: committed when the block ends, rolled back when it raises."""

    @abstractmethod
    def connection(self, principal: Principal) -> AbstractAsyncContextManager[Tx]:
        """No transaction around the block: each repository call commits on its own."""

    @abstractmethod
    def admin(self) -> AbstractAsyncContextManager[AdminTx]:
        """Across tenants, no transaction around the block: each call commits on its own."""

    @abstractmethod
    async def page_keyring(self, *, knowing: int = 0) -> PageKeyring:
        """The keys of page tokens, as loaded at most a minute ago (made on first use);
        loaded again now when ``knowing`` (a key id a token names) is newer than the
        newest held, at most once a second."""

    def reading(
        self, principal: Principal, *, as_of: datetime | None = None
    ) -> AbstractAsyncContextManager[Tx]:
        """For reads that may be a little behind (Recall, RenderPrompt, listings): a
        standby's connection when there is a usable one and the caller wrote nothing
        lately, else :meth:`connection`. Its ``Tx.standby`` says which. With ``as_of``,
        memories, blocks, renders and recall read the state as it was then (on the
        primary); a store that keeps no history raises ``FailedPrecondition``."""
        if as_of is not None:
            raise FailedPrecondition(
                "this store keeps no history to read the past from", reason="NO_HISTORY"
            )
        return self.connection(principal)

    def read_at(
        self, principal: Principal, as_of: datetime | None
    ) -> AbstractAsyncContextManager[Tx]:
        """For a read of one record: the state now, on the primary (which has every
        write: :meth:`connection`), or as it was at ``as_of`` (:meth:`reading`)."""
        if as_of is None:
            return self.connection(principal)
        return self.reading(principal, as_of=as_of)

    def wrote(self, principal: Principal) -> None:
        """The caller wrote (or is writing) now: its reads go to the primary for a
        while, so it reads what it wrote. Without a standby there is nothing to do."""
        return None

    async def vector_indexes(self, model: str, dimensions: int) -> list[str]:
        """Make the approximate indexes over ``model``'s vectors (of ``dimensions``) where
        they are missing, however long that takes; the names of those usable now. A
        store without such indexes makes none.

        Raises:
            Exception: the store could not make them (recall reads without them).
        """
        return []
