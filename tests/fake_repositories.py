"""In-memory blocks, decisions, active sessions, the usage ledger, the extraction
queue and forgetting for the store of ``tests/fakes.py``, under the same contract as
PostgreSQL's (``store/blocks.py``, ``store/decisions.py``, ``store/active_sessions.py``,
``store/usage.py``, ``store/jobs.py``, ``store/forget.py``);
``tests/integration/test_store_contract_blocks.py``, ``_decisions.py``,
``_sessions.py``, ``_usage.py``, ``_jobs.py`` and ``_forget.py`` run the same cases
against both.

Every call runs to its end without yielding, so what PostgreSQL gets from row locks
(a compare-and-set of concurrent writers, ``lock=`` on reads) holds here without them.
Times follow the store's clocks: ``statement_timestamp()`` and ``clock_timestamp()``
are both a reading of its wall clock.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from agent_memory.domain.active_sessions import RecordedRun, RunKind, RunSession, StoredSession
from agent_memory.domain.blocks import (
    Block,
    BlockKey,
    BlockLabel,
    BlockScope,
    BlockVersion,
    BlockWrite,
    ScopeFilter,
    entries,
)
from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    Reexamination,
    ResolutionStatus,
    result_json,
)
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.extraction import (
    ClaimedJob,
    ExtractionJob,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    JobState,
    Usage,
    UsageRecord,
    UsageReport,
)
from agent_memory.domain.forgetting import ForgetCounts
from agent_memory.domain.history import DEFAULT_HISTORY
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Memory, Owner, Scope
from agent_memory.store.jobs import _dropped as dropped_from_json
from agent_memory.store.jobs import _result_json as result_as_stored
from agent_memory.store.repositories import (
    BlockRepository,
    DecisionRepository,
    ForgetRepository,
    JobQueue,
    JobRepository,
    Lock,
    SessionRepository,
    UsageRepository,
)
from agent_memory.store.usage import MAX_RECORDS

if TYPE_CHECKING:
    from tests.fakes import FakeStore, State


def _later(now: datetime, floor: datetime | None) -> datetime:
    """``greatest(clock_timestamp(), floor + interval '1 microsecond')``: strictly later
    than ``floor`` even when the clock lags it; a NULL floor is skipped."""
    if floor is None:
        return now
    return max(now, floor + timedelta(microseconds=1))


# --- blocks ------------------------------------------------------------------------------


@dataclass
class StoredBlock:
    """A block row with the version rows that go with it, oldest first."""

    block: Block
    versions: list[BlockVersion]


class FakeBlocks(BlockRepository):
    """The caller's blocks and their kept versions.

    Not here: archival lines. PostgreSQL rewrites them (with their lexemes and the
    vectors of unchanged lines) in the write's statement, for recall and the indexer;
    this store has neither, so no line ever has a vector and ``indexed_line_count`` is
    always 0, as it is in PostgreSQL until the indexer has run. What lines a write keeps
    is left to the PostgreSQL tests (``tests/e2e/test_blocks.py``)."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id
        self._user = principal.user_id

    @property
    def _rows(self) -> dict[tuple[str, str, BlockKey], StoredBlock]:
        return self._store.state.blocks

    def _at(self, key: BlockKey) -> tuple[str, str, BlockKey]:
        # A workspace's block is the tenant's: no user in its key, as in PostgreSQL.
        return (self._tenant, "" if key.shared else self._user, key)

    async def get(self, key: BlockKey) -> Block | None:
        found = self._rows.get(self._at(key))
        return found.block if found is not None else None

    async def select(
        self, scope_filter: ScopeFilter, agent_id: str, workspace_id: str = ""
    ) -> list[Block]:
        users = scope_filter in (ScopeFilter.USER, ScopeFilter.ALL)
        agents = scope_filter in (ScopeFilter.AGENT, ScopeFilter.ALL)
        workspaces = scope_filter in (ScopeFilter.WORKSPACE, ScopeFilter.ALL)
        found = [
            stored.block
            for (tenant, user, key), stored in self._rows.items()
            if tenant == self._tenant
            and (
                (key.scope is BlockScope.USER and users and user == self._user)
                or (
                    key.scope is BlockScope.AGENT
                    and agents
                    and user == self._user
                    and (not agent_id or key.agent_id == agent_id)
                )
                or (
                    key.scope is BlockScope.WORKSPACE
                    and workspaces
                    and bool(workspace_id)
                    and key.workspace_id == workspace_id
                )
            )
        ]
        # User blocks first, then agent blocks by agent id, then the workspace's; core
        # before archival.
        order = {BlockScope.USER: 0, BlockScope.AGENT: 1, BlockScope.WORKSPACE: 2}
        return sorted(
            found,
            key=lambda b: (
                order[b.key.scope],
                b.key.owner_id,
                b.key.label is BlockLabel.ARCHIVAL,
            ),
        )

    async def write(
        self,
        key: BlockKey,
        content: str,
        *,
        expected: datetime | None,
        keep: int,
    ) -> BlockWrite:
        at = self._at(key)
        stored = self._rows.get(at)
        if expected is None:
            if stored is not None:
                return BlockWrite(written=None, current=stored.block)
            now = self._store.clock()  # statement_timestamp()
            block = Block(key, content, 1, now, now)
            self._rows[at] = StoredBlock(block, [self._version(block)])
            return BlockWrite(written=block, current=block)
        if stored is None or stored.block.updated_at != expected:
            return BlockWrite(written=None, current=stored.block if stored else None)
        current = stored.block
        block = replace(
            current,
            content=content,
            version=current.version + 1,
            updated_at=_later(self._store.clock(), current.updated_at),
        )
        # Past the newest ``keep``, versions younger than the history stay, and of the
        # older ones the newest: the block's state at the horizon.
        horizon = block.updated_at - DEFAULT_HISTORY
        old = [v.version for v in stored.versions if v.written_at < horizon]
        kept = [
            v
            for v in stored.versions
            if v.version > block.version - keep
            or v.written_at >= horizon
            or v.version == max(old, default=None)
        ]
        self._rows[at] = StoredBlock(block, [*kept, self._version(block)])
        return BlockWrite(written=block, current=block)

    def _version(self, block: Block) -> BlockVersion:
        return BlockVersion(
            version=block.version,
            content=block.content,
            char_count=block.char_count,
            writer_user_id=self._user,
            written_at=block.updated_at,
        )

    async def delete(
        self, key: BlockKey, *, expected: datetime | None
    ) -> tuple[bool, Block | None]:
        at = self._at(key)
        stored = self._rows.get(at)
        if stored is None:
            return False, None
        if expected is not None and stored.block.updated_at != expected:
            return False, stored.block
        del self._rows[at]  # its versions go with it
        return True, stored.block

    async def versions(
        self, key: BlockKey, *, before: int | None, limit: int
    ) -> list[BlockVersion] | None:
        stored = self._rows.get(self._at(key))
        if stored is None:
            return None
        older = [v for v in stored.versions if before is None or v.version < before]
        return sorted(older, key=lambda v: v.version, reverse=True)[:limit]


# --- decisions ---------------------------------------------------------------------------


def reexamined(state: State, tenant: str, decision: Decision) -> Decision:
    """The decision with its newest conviction score and how many re-examinations it has,
    as PostgreSQL's select adds them (the newest: by time, then id)."""
    history = [
        r
        for (t, _), r in state.reexaminations.items()
        if t == tenant and r.parent_decision_id == decision.id
    ]
    newest = max(history, key=lambda r: (r.created_at, r.id), default=None)
    return replace(
        decision,
        latest_conviction_score=newest.conviction_score if newest else None,
        reexamination_count=len(history),
    )


class FakeDecisions(DecisionRepository):
    """The tenant's card types, decisions and re-examinations. A result is stored as the
    JSON PostgreSQL keeps (:func:`result_json`), so what is read back is a copy.

    A decision of a card type that is not registered, or a re-examination of a decision
    that does not exist, is refused with ``LookupError`` where PostgreSQL's foreign keys
    refuse it with an integrity error: the use cases check both first."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    @property
    def _state(self) -> State:
        return self._store.state

    def _mine(self) -> list[Decision]:
        return [d for (t, _), d in self._state.decisions.items() if t == self._tenant]

    def _read(self, decision: Decision, *, with_result: bool = True) -> Decision:
        found = reexamined(self._state, self._tenant, decision)
        if not with_result:
            return replace(found, result=None)
        return replace(found, result=json.loads(result_json(decision.result or {})))

    async def put_card_type(self, card_type: CardType) -> tuple[CardType, bool]:
        key = (self._tenant, card_type.name)
        held = self._state.card_types.get(key)
        now = self._store.clock()
        stored = replace(
            card_type,
            actions=tuple(card_type.actions),
            decision_actions=tuple(card_type.decision_actions),
            created_at=held.created_at if held is not None else now,
            updated_at=now,
        )
        self._state.card_types[key] = stored
        return stored, held is None

    async def get_card_type(self, name: str) -> CardType | None:
        return self._state.card_types.get((self._tenant, name))

    async def insert(self, decision: NewDecision) -> Decision | None:
        if (self._tenant, decision.card_type) not in self._state.card_types:
            raise LookupError(f"card type {decision.card_type!r} is not registered")
        if any(d.run_id == decision.run_id for d in self._mine()):
            return None
        stored = Decision(
            id=uuid.uuid4(),
            run_id=decision.run_id,
            agent_id=decision.agent_id,
            card_type=decision.card_type,
            action=decision.action,
            summary=decision.summary,
            result=json.loads(result_json(decision.result)),
            resolution_status=ResolutionStatus.OPEN,
            created_at=self._store.clock(),
        )
        self._state.decisions[(self._tenant, stored.id)] = stored
        return self._read(stored)

    async def get(self, decision_id: uuid.UUID, *, lock: Lock | None = None) -> Decision | None:
        found = self._state.decisions.get((self._tenant, decision_id))
        return self._read(found) if found is not None else None

    async def find_by_run(self, run_id: str) -> Decision | None:
        found = next((d for d in self._mine() if d.run_id == run_id), None)
        return self._read(found) if found is not None else None

    async def recent(
        self, agent_id: str, *, limit: int, with_result: bool, card_type: str | None = None
    ) -> list[Decision]:
        found = [
            d
            for d in self._mine()
            if d.agent_id == agent_id and (card_type is None or d.card_type == card_type)
        ]
        found.sort(key=lambda d: (d.created_at, d.id), reverse=True)
        return [self._read(d, with_result=with_result) for d in found[:limit]]

    async def set_resolution(self, decision_id: uuid.UUID, status: ResolutionStatus) -> None:
        key = (self._tenant, decision_id)
        found = self._state.decisions.get(key)
        if found is None:
            return
        resolved_at = None if status is ResolutionStatus.OPEN else self._store.clock()
        self._state.decisions[key] = replace(
            found, resolution_status=status, resolved_at=resolved_at
        )

    async def insert_reexamination(self, item: NewReexamination) -> Reexamination | None:
        if (self._tenant, item.parent_decision_id) not in self._state.decisions:
            raise LookupError(f"decision {item.parent_decision_id} does not exist")
        if await self.find_reexamination_by_run(item.run_id) is not None:
            return None
        stored = Reexamination(
            id=uuid.uuid4(),
            parent_decision_id=item.parent_decision_id,
            run_id=item.run_id,
            conviction_score=item.conviction_score,
            notes=item.notes,
            suggested_action=item.suggested_action,
            created_at=self._store.clock(),
        )
        self._state.reexaminations[(self._tenant, stored.id)] = stored
        return stored

    async def find_reexamination_by_run(self, run_id: str) -> Reexamination | None:
        return next(
            (
                r
                for (t, _), r in self._state.reexaminations.items()
                if t == self._tenant and r.run_id == run_id
            ),
            None,
        )

    async def reexaminations(self, decision_id: uuid.UUID) -> list[Reexamination]:
        history = [
            r
            for (t, _), r in self._state.reexaminations.items()
            if t == self._tenant and r.parent_decision_id == decision_id
        ]
        return sorted(history, key=lambda r: (r.created_at, r.id))


# --- active sessions ---------------------------------------------------------------------


class FakeSessions(SessionRepository):
    """The tenant's active sessions and finished runs."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    @property
    def _sessions(self) -> dict[tuple[str, str], StoredSession]:
        return self._store.state.sessions

    def _runs(self, agent_id: str) -> list[RecordedRun]:
        return [
            r
            for (t, a, _), r in self._store.state.runs.items()
            if (t, a) == (self._tenant, agent_id)
        ]

    async def get(self, agent_id: str, *, lock: bool = False) -> StoredSession | None:
        return self._sessions.get((self._tenant, agent_id))

    async def ensure(self, agent_id: str) -> None:
        key = (self._tenant, agent_id)
        if key not in self._sessions:
            self._sessions[key] = StoredSession(None, None, self._store.clock())

    async def reset(self, agent_id: str) -> StoredSession:
        key = (self._tenant, agent_id)
        held = self._sessions.get(key)
        anchor = _later(self._store.clock(), held.session_updated_at if held else None)
        stored = StoredSession(session_id=None, session_updated_at=None, last_reset_at=anchor)
        self._sessions[key] = stored
        return stored

    async def find_run(self, agent_id: str, run_id: str) -> RunSession | None:
        found = self._store.state.runs.get((self._tenant, agent_id, run_id))
        return found.run if found is not None else None

    async def insert_run(
        self, agent_id: str, run: RunSession, *, carried: bool, after: datetime | None
    ) -> datetime | None:
        key = (self._tenant, agent_id, run.run_id)
        if key in self._store.state.runs:
            return None
        if carried and run.session_id_after is None:
            raise ValueError("a carried run has the session id it ended with")  # a CHECK
        at = _later(self._store.clock(), after)
        self._store.state.runs[key] = RecordedRun(
            RunSession(
                run.run_id,
                run.session_id_before,
                run.session_id_after,
                RunKind(run.kind),
                run.render_time,
            ),
            carried=carried,
            recorded_at=at,
        )
        return at

    async def carry(self, agent_id: str, session_id: str, at: datetime) -> StoredSession:
        key = (self._tenant, agent_id)
        held = self._sessions[key]  # the caller holds the row's lock: it exists
        stored = replace(held, session_id=session_id, session_updated_at=at)
        self._sessions[key] = stored
        return stored

    async def list_runs(
        self, agent_id: str, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RecordedRun]:
        runs = [
            r
            for r in self._runs(agent_id)
            if after is None or (r.recorded_at, r.run.run_id) < after
        ]
        # Newest first; of runs recorded in the same instant, the highest run id first.
        runs.sort(key=lambda r: (r.recorded_at, r.run.run_id), reverse=True)
        return runs[:limit]

    async def runs_since(self, agent_id: str, anchor: datetime) -> int:
        return sum(
            1
            for r in self._runs(agent_id)
            if r.carried and r.run.kind is RunKind.SCHEDULED and r.recorded_at > anchor
        )


# --- usage -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredUsage:
    """A ledger row: its cost as the ``numeric(14, 8)`` column keeps it."""

    record: UsageRecord
    cost: Decimal


class FakeUsage(UsageRepository):
    """The tenant's usage ledger. A record takes ``now()``: every record of one
    transaction shares its time, and the id (random, as ``gen_random_uuid()``) orders
    them."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._tenant = principal.tenant_id

    async def record(
        self,
        synthetic_session_id: str,
        *,
        agent_id: str,
        model: str,
        usage: Usage,
        outcome: ExtractionOutcome,
    ) -> None:
        cost = Decimal(str(round(usage.cost_usd, 8)))
        record = UsageRecord(
            id=uuid.uuid4(),
            synthetic_session_id=synthetic_session_id,
            agent_id=agent_id,
            model=model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cost_usd=float(cost),
            outcome=outcome,
            recorded_at=self._store.now(),
        )
        self._store.state.usage.append((self._tenant, StoredUsage(record, cost)))

    async def report(
        self, prefix: str, *, start: datetime | None, end: datetime | None
    ) -> UsageReport:
        matched = sorted(
            (
                u
                for tenant, u in self._store.state.usage
                if tenant == self._tenant
                and u.record.synthetic_session_id.startswith(prefix)
                and (start is None or u.record.recorded_at >= start)
                and (end is None or u.record.recorded_at < end)
            ),
            key=lambda u: (u.record.recorded_at, u.record.id),
        )
        return UsageReport(
            records=[u.record for u in matched[:MAX_RECORDS]],
            total_input_tokens=sum(u.record.input_tokens for u in matched),
            total_output_tokens=sum(u.record.output_tokens for u in matched),
            total_cost_usd=float(sum((u.cost for u in matched), Decimal(0))),
        )


# --- the extraction queue ------------------------------------------------------------------


@dataclass(frozen=True)
class StoredJob:
    """An ``extraction_jobs`` row."""

    tenant_id: str
    id: uuid.UUID
    request: ExtractionRequest
    actor_user_id: str
    state: JobState
    attempts: int
    run_after: datetime
    lease_until: datetime | None
    outcome: ExtractionOutcome | None
    detail: str
    created_at: datetime
    updated_at: datetime
    result: dict[str, object] | None = None

    def ours(self, tenant: str, job_id: uuid.UUID, attempt: int) -> bool:
        """Whether ``attempt``'s runner still holds the job."""
        return (self.tenant_id, self.id, self.state, self.attempts) == (
            tenant,
            job_id,
            JobState.RUNNING,
            attempt,
        )


class FakeJobs(JobRepository):
    """The tenant's queued extraction passes. Times are ``now()``, as in PostgreSQL; a
    test moves the clock (``store.clock.advance``) for a pass to settle or a lease to run
    out. What a finished pass did is stored as PostgreSQL stores it (the store's own
    conversion, which hides what must not be kept)."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._principal = principal

    @property
    def _rows(self) -> dict[tuple[str, uuid.UUID], StoredJob]:
        return self._store.state.jobs

    async def enqueue(self, request: ExtractionRequest, *, settle: timedelta) -> uuid.UUID:
        tenant = self._principal.tenant_id
        now = self._store.now()
        waiting = next(
            (
                j
                for j in self._rows.values()
                if j.tenant_id == tenant
                and j.state is JobState.QUEUED
                and j.request.synthetic_session_id == request.synthetic_session_id
            ),
            None,
        )
        if waiting is not None:
            self._rows[(tenant, waiting.id)] = replace(
                waiting,
                request=replace(
                    waiting.request,
                    agent_id=request.agent_id,
                    workspace_id=request.workspace_id,
                    transcript=request.transcript,
                ),
                actor_user_id=self._principal.user_id,
                run_after=now + settle,
                updated_at=now,
            )
            return waiting.id
        job = StoredJob(
            tenant_id=tenant,
            id=uuid.uuid4(),
            request=request,
            actor_user_id=self._principal.user_id,
            state=JobState.QUEUED,
            attempts=0,
            run_after=now + settle,
            lease_until=None,
            outcome=None,
            detail="",
            created_at=now,
            updated_at=now,
        )
        self._rows[(tenant, job.id)] = job
        return job.id

    def _ours(self, job_id: uuid.UUID, attempt: int) -> StoredJob | None:
        found = self._rows.get((self._principal.tenant_id, job_id))
        if found is None or not found.ours(self._principal.tenant_id, job_id, attempt):
            return None
        return found

    async def finish(self, job_id: uuid.UUID, *, attempt: int, result: ExtractionResult) -> bool:
        job = self._ours(job_id, attempt)
        if job is None:
            return False
        self._rows[(job.tenant_id, job.id)] = replace(
            job,
            state=JobState.DONE,
            outcome=result.outcome,
            detail=result.detail,
            lease_until=None,
            request=replace(job.request, transcript=""),
            result=json.loads(json.dumps(result_as_stored(result))),
            updated_at=self._store.now(),
        )
        return True

    async def get(self, job_id: uuid.UUID) -> ExtractionJob | None:
        job = self._rows.get((self._principal.tenant_id, job_id))
        if job is None:
            return None
        done = job.state is JobState.DONE
        result: dict[str, Any] = dict(job.result or {})
        usage = result.get("usage")
        return ExtractionJob(
            id=job.id,
            state=job.state,
            attempts=job.attempts,
            outcome=job.outcome if done else None,
            detail=job.detail,
            synthetic_session_id=job.request.synthetic_session_id,
            agent_id=job.request.agent_id,
            workspace_id=job.request.workspace_id,
            created_at=job.created_at,
            updated_at=job.updated_at,
            run_after=job.run_after,
            written_memory_ids=tuple(uuid.UUID(i) for i in result.get("written_memory_ids", ())),
            dropped=tuple(dropped_from_json(d) for d in result.get("dropped", ())),
            superseded_memory_ids=tuple(
                uuid.UUID(i) for i in result.get("superseded_memory_ids", ())
            ),
            usage=Usage(usage["input_tokens"], usage["output_tokens"], usage["cost_usd"])
            if done and usage
            else None,
        )

    async def retry_later(
        self,
        job_id: uuid.UUID,
        *,
        attempt: int,
        delay: timedelta,
        outcome: ExtractionOutcome,
        detail: str,
    ) -> bool:
        job = self._ours(job_id, attempt)
        if job is None:
            return False
        newer = any(
            j.tenant_id == job.tenant_id
            and j.state is JobState.QUEUED
            and j.request.synthetic_session_id == job.request.synthetic_session_id
            for j in self._rows.values()
        )
        now = self._store.now()
        if newer:
            changed = replace(
                job,
                state=JobState.DONE,
                detail=f"{detail}; superseded by a newer pass of the same run",
                request=replace(job.request, transcript=""),
            )
        else:
            changed = replace(job, state=JobState.QUEUED, run_after=now + delay, detail=detail)
        self._rows[(job.tenant_id, job.id)] = replace(
            changed, lease_until=None, outcome=outcome, updated_at=now
        )
        return not newer


class FakeJobQueue(JobQueue):
    """The queue across tenants: the tenant whose due job has waited longest first, and
    in it the job due first. A job is due once its ``run_after`` has come, or when its
    runner's lease has run out."""

    def __init__(self, store: FakeStore) -> None:
        self._store = store

    async def claim(self, *, lease: timedelta) -> ClaimedJob | None:
        now = self._store.now()

        def due(j: StoredJob) -> bool:
            if j.state is JobState.QUEUED:
                return j.run_after <= now
            return j.state is JobState.RUNNING and j.lease_until is not None and j.lease_until < now

        waiting = [j for j in self._store.state.jobs.values() if due(j)]
        if not waiting:
            return None
        tenant = min(waiting, key=lambda j: j.run_after).tenant_id
        job = min((j for j in waiting if j.tenant_id == tenant), key=lambda j: j.run_after)
        claimed = replace(
            job,
            state=JobState.RUNNING,
            attempts=job.attempts + 1,
            lease_until=now + lease,
            updated_at=now,
        )
        self._store.state.jobs[(job.tenant_id, job.id)] = claimed
        return ClaimedJob(
            tenant_id=claimed.tenant_id,
            id=claimed.id,
            actor_user_id=claimed.actor_user_id,
            attempts=claimed.attempts,
            request=claimed.request,
        )


# --- forgetting ----------------------------------------------------------------------------


def _lines(stored: StoredBlock) -> int:
    """How many archival lines PostgreSQL keeps for the block: one per entry of an
    archival block's content (a write makes the stored lines those of its content)."""
    if stored.block.key.label is not BlockLabel.ARCHIVAL:
        return 0
    return len(entries(stored.block.content))


class FakeForget(ForgetRepository):
    """Removes a subject's texts from the store's state as ``store/forget.py`` does, with
    the same counts: audit events stay as tombstones (their snapshots emptied), each
    deleted memory ends with a content-free DELETED event by the caller, and the usage
    ledger stays. Archival lines are counted from the blocks' content, since this store
    keeps no lines (see :class:`FakeBlocks`)."""

    def __init__(self, store: FakeStore, principal: Principal) -> None:
        self._store = store
        self._principal = principal
        self._tenant = principal.tenant_id

    @property
    def _state(self) -> State:
        return self._store.state

    def _memories_of(self, owner: Owner) -> ForgetCounts:
        from tests.fakes import FakeMemories

        def drew_on(m: Memory | None) -> set[tuple[str, str]]:
            if m is None or m.owner != owner or m.conversation_id is None:
                return set()
            return {(m.conversation_provider or "", m.conversation_id)}

        mine = {k: m for k, m in self._state.memories.items() if k[0] == self._tenant}
        drawn_on = set().union(
            *(drew_on(m) for m in mine.values()),
            *(drew_on(e.old) | drew_on(e.new) for t, e in self._state.events if t == self._tenant),
        )
        # Tombstones first: the DELETED events below name no owner.
        emptied = 0
        for n, (t, e) in enumerate(self._state.events):
            subject = e.new or e.old
            if t == self._tenant and subject is not None and subject.owner == owner:
                self._state.events[n] = (t, replace(e, old=None, new=None))
                emptied += 1
        gone = [k for k, m in mine.items() if m.owner == owner]
        memories = FakeMemories(self._store, self._principal)
        for key in gone:
            del self._state.memories[key]
            memories._record(MemoryEventType.DELETED, None, None, memory_id=key[1])
        still_drawn_on = {
            (m.conversation_provider or "", m.conversation_id)
            for (t, _), m in self._state.memories.items()
            if t == self._tenant and m.conversation_id is not None
        }
        unused = [
            k
            for k in self._state.conversations
            if k[0] == self._tenant and k[1:] in drawn_on and k[1:] not in still_drawn_on
        ]
        for held in unused:
            del self._state.conversations[held]
            self._state.conversation_times.pop(held, None)
        return ForgetCounts(memories=len(gone), audit_events=emptied, conversations=len(unused))

    def _blocks(self, gone: list[tuple[str, str, BlockKey]]) -> ForgetCounts:
        blocks = [self._state.blocks.pop(k) for k in gone]
        return ForgetCounts(
            blocks=len(blocks),
            block_versions=sum(len(b.versions) for b in blocks),
            archival_lines=sum(_lines(b) for b in blocks),
        )

    def _jobs(self, wanted: Callable[[StoredJob], bool]) -> int:
        gone = [k for k, j in self._state.jobs.items() if k[0] == self._tenant and wanted(j)]
        for key in gone:
            del self._state.jobs[key]
        return len(gone)

    async def agent(self, agent_id: str) -> ForgetCounts:
        jobs = self._jobs(lambda j: j.request.agent_id == agent_id)
        counts = self._memories_of(Owner(Scope.AGENT, agent_id))
        counts += self._blocks(
            [
                k
                for k in self._state.blocks
                if k[0] == self._tenant
                and k[2].scope is BlockScope.AGENT
                and k[2].agent_id == agent_id
            ]
        )
        decisions = [
            k
            for k, d in self._state.decisions.items()
            if k[0] == self._tenant and d.agent_id == agent_id
        ]
        ids = {k[1] for k in decisions}
        reexaminations = [
            k
            for k, r in self._state.reexaminations.items()
            if k[0] == self._tenant and r.parent_decision_id in ids
        ]
        for key in reexaminations:
            del self._state.reexaminations[key]
        for key in decisions:
            del self._state.decisions[key]
        agent_state = 0
        for table in (self._state.agents, self._state.sessions):
            if (self._tenant, agent_id) in table:
                del table[(self._tenant, agent_id)]
                agent_state += 1
        runs = [k for k in self._state.runs if k[:2] == (self._tenant, agent_id)]
        for run in runs:
            del self._state.runs[run]
        return counts + ForgetCounts(
            decisions=len(decisions),
            reexaminations=len(reexaminations),
            extraction_jobs=jobs,
            agent_state=agent_state + len(runs),
        )

    async def workspace(self, workspace_id: str) -> ForgetCounts:
        jobs = self._jobs(lambda j: j.request.workspace_id == workspace_id)
        counts = self._memories_of(Owner(Scope.WORKSPACE, workspace_id))
        counts += self._blocks(
            [
                k
                for k in self._state.blocks
                if k[0] == self._tenant
                and k[2].scope is BlockScope.WORKSPACE
                and k[2].workspace_id == workspace_id
            ]
        )
        settings = self._state.workspaces.pop((self._tenant, workspace_id), None)
        return counts + ForgetCounts(extraction_jobs=jobs, agent_state=int(settings is not None))

    async def user(self) -> ForgetCounts:
        mine = (self._tenant, self._principal.user_id)
        return self._blocks([k for k in self._state.blocks if k[:2] == mine])
