"""Automatic extraction: one budgeted model pass over a finished run's transcript.

Credentials turn up in conversations, so a transcript is not refused for carrying
one: every secret in it is redacted before it is queued and before the model sees
it, and a queued transcript is emptied when its job ends.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Tracer, TracerProvider

from agent_memory.config import Settings
from agent_memory.detectors.secrets import OFF_LOOP_CHARS, redact_secrets
from agent_memory.domain.errors import Conflict, FailedPrecondition, FieldViolation, check
from agent_memory.domain.extraction import (
    Action,
    DroppedFact,
    DropReason,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    Usage,
    UsageReport,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import (
    Evidence,
    Memory,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    period_violations,
    utc_day,
)
from agent_memory.domain.text_rules import text_violations
from agent_memory.extract import budget, prompt
from agent_memory.extract.model import ExtractionModel, ModelCall
from agent_memory.extract.sift import KeptFact, SiftRules, sift
from agent_memory.service.memories import write_by_key
from agent_memory.store.repositories import Store, Tx
from agent_memory.tasks import cancel_and_wait
from agent_memory.telemetry.metrics import Metrics
from agent_memory.telemetry.tracing import log_failure, set_caller

log = logging.getLogger(__name__)

GEN_AI_SYSTEM = "anthropic"


class LeaseLost(Conflict):
    """The job's lease ran out and another worker runs it now: this pass changed nothing."""


@dataclass(frozen=True)
class JobRef:
    """The queued job a pass runs for; closed in the pass's last transaction."""

    id: uuid.UUID
    attempt: int
    final_attempt: bool


class Extraction:
    """Runs passes now, or queues them for the server's workers."""

    def __init__(
        self,
        store: Store,
        model: ExtractionModel,
        settings: Settings,
        *,
        tracer_provider: TracerProvider | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._store = store
        self._model = model
        self._settings = settings
        self._prices = budget.prices(settings.extraction_prices)
        self._tracer: Tracer = trace.get_tracer(__name__, tracer_provider=tracer_provider)
        self._metrics = metrics or Metrics()
        # Called after a pass is queued, so in-process workers look at once.
        self.on_queued: Callable[[], None] | None = None
        # Passes running now, each to its end whether or not its caller still waits.
        self._running: set[asyncio.Task[ExtractionResult]] = set()
        self._left: set[asyncio.Task[ExtractionResult]] = set()

    async def extract(
        self, principal: Principal, request: ExtractionRequest, *, queued: bool
    ) -> ExtractionResult:
        """Run one pass now, or queue it to run once the conversation settles.

        Model failures are not errors: they come back as the result's outcome.

        Raises:
            InvalidArgument: a malformed request.
            Unavailable: the database cannot be reached.
        """
        request.validate()
        if queued:
            request = replace(request, transcript=await redacted(request.transcript))
            async with self._store.connection(principal) as tx:
                job_id = await tx.jobs.enqueue(
                    request, settle=timedelta(seconds=self._settings.extraction_settle_seconds)
                )
            if self.on_queued is not None:
                self.on_queued()
            return ExtractionResult(
                ExtractionOutcome.QUEUED,
                request.synthetic_session_id,
                job_id=job_id,
                detail=f"runs after {self._settings.extraction_settle_seconds:g}s of quiet",
            )
        return await self.to_its_end(self.run_pass(principal, request))

    async def to_its_end(self, pass_: Coroutine[Any, Any, ExtractionResult]) -> ExtractionResult:
        """Run a pass to its end even when its caller leaves meanwhile (a deadline, a
        cancel, a worker told to stop): the model's answer is paid for, so its spend is
        recorded and its facts are kept as the pass would have kept them. A stop lets
        such passes finish for a while (:meth:`drain`)."""
        task = asyncio.ensure_future(pass_)
        self._running.add(task)
        task.add_done_callback(self._ended)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                self._left.add(task)
            raise

    def _ended(self, task: asyncio.Task[ExtractionResult]) -> None:
        self._running.discard(task)
        left = task in self._left
        self._left.discard(task)
        if task.cancelled():
            return
        failed = task.exception()  # the caller that waited has it; else it is said here
        if left and failed is not None:
            log_failure(log, failed, "an extraction pass whose caller had left failed")

    async def drain(self, grace: float) -> None:
        """Let the passes still running finish for up to ``grace`` seconds, then stop
        them (a queued one runs again once its lease runs out)."""
        if self._running:
            _, unfinished = await asyncio.wait(set(self._running), timeout=grace)
            await cancel_and_wait(*unfinished)

    async def usage_report(
        self,
        principal: Principal,
        *,
        prefix: str,
        start: datetime | None,
        end: datetime | None,
    ) -> UsageReport:
        """Recorded usage whose synthetic session id starts with ``prefix``, in [start, end).

        Raises:
            InvalidArgument: the prefix is too long or the range is reversed.
        """
        violations = text_violations(
            "synthetic_session_id_prefix", prefix, max_chars=300, min_chars=0
        )
        if start is not None and end is not None and end < start:
            violations.append(
                FieldViolation("end_time", "must not be before start_time", "OUT_OF_RANGE")
            )
        check(violations)
        async with self._store.connection(principal) as tx:
            return await tx.usage.report(prefix, start=start, end=end)

    async def run_pass(
        self, principal: Principal, request: ExtractionRequest, job: JobRef | None = None
    ) -> ExtractionResult:
        """One pass, traced under its synthetic session id with GenAI usage attributes."""
        s = self._settings
        with self._tracer.start_as_current_span(
            "memory.extract",
            attributes={
                "session.id": request.synthetic_session_id,
                "gen_ai.system": GEN_AI_SYSTEM,
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": s.extraction_model,
                "agent.id": request.agent_id,
            },
        ) as span:
            # Queued passes run outside any call: the pass says whose it is itself.
            set_caller(
                span,
                principal.tenant_id,
                principal.user_id,
                workspace=request.workspace_id,
                chain=request.chain_id or request.session_id,
            )
            try:
                result = await self._run(principal, request, job)
            except Exception:
                # The database failed it, or another worker took it over.
                self._metrics.extraction_pass(principal.tenant_id, "failed")
                raise
            self._metrics.extraction_pass(principal.tenant_id, result.outcome.value)
            span.set_attribute("gen_ai.usage.input_tokens", result.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", result.usage.output_tokens)
            span.set_attribute("memory.extract.cost_usd", result.usage.cost_usd)
            span.set_attribute("memory.extract.outcome", result.outcome.value)
            span.set_attribute("memory.extract.kept", len(result.written))
            span.set_attribute("memory.extract.dropped", len(result.dropped))
            return result

    async def _run(
        self, principal: Principal, request: ExtractionRequest, job: JobRef | None
    ) -> ExtractionResult:
        s = self._settings
        synthetic = request.synthetic_session_id
        has_workspace = request.workspace_id is not None
        # Queued transcripts were redacted when queued; those of older servers were not.
        request = replace(request, transcript=await redacted(request.transcript))

        def early(outcome: ExtractionOutcome, detail: str) -> ExtractionResult:
            return ExtractionResult(outcome, synthetic, detail=detail)

        if len(request.transcript.strip()) < s.extraction_min_chars:
            return await self._close(
                principal,
                job,
                early(
                    ExtractionOutcome.SKIPPED_TOO_SHORT,
                    f"transcript under {s.extraction_min_chars} characters",
                ),
            )
        owners = [Owner(Scope.AGENT, request.agent_id)]
        if request.workspace_id is not None:
            owners.append(Owner(Scope.WORKSPACE, request.workspace_id))
        async with self._store.connection(principal) as tx:
            settings = await tx.agents.get(request.agent_id)
            existing = await tx.memories.recent(
                owners, max(s.extraction_dedup_rows, s.extraction_hint_count)
            )
        if not settings.memory_enabled and not has_workspace:
            return await self._close(
                principal,
                job,
                early(
                    ExtractionOutcome.SKIPPED_MEMORY_DISABLED,
                    "agent memory is off and the run has no workspace: nothing could be written",
                ),
            )

        capped = prompt.cap_transcript(request.transcript, s.extraction_max_chars)
        # A memory held for review is never shown to a model, this one included.
        shown = [m for m in existing if not m.held_for_review]
        known = prompt.known_memories(shown, capped.text, s.extraction_hint_count)
        call = ModelCall(
            model=s.extraction_model,
            system=prompt.SYSTEM,
            messages=[
                {
                    "role": "user",
                    "content": prompt.user_message(
                        capped, known, has_workspace, today=utc_day(datetime.now(UTC))
                    ),
                }
            ],
            tools=[prompt.tool(s.extraction_max_facts, has_workspace)],
        )
        price = budget.price_for(s.extraction_model, self._prices)
        if price is None:
            return await self._close(
                principal,
                job,
                early(
                    ExtractionOutcome.SKIPPED_BUDGET,
                    f"no price for model {s.extraction_model!r}: the budget cannot be enforced",
                ),
            )
        allowance = budget.allowance(
            budget.input_token_bound(call.system, call.messages, call.tools),
            price,
            s.extraction_budget_usd,
        )
        if allowance.refusal:
            # The byte bound is pessimistic: ask for the exact count before giving up.
            try:
                exact = await self._model.count_tokens(call)
                allowance = budget.allowance(exact, price, s.extraction_budget_usd)
            except Exception as exc:
                log.info("token count unavailable (%s); keeping the bound", type(exc).__name__)
            if allowance.refusal:
                return await self._close(
                    principal,
                    job,
                    early(ExtractionOutcome.SKIPPED_BUDGET, f"over budget: {allowance.refusal}"),
                )

        reply = await self._model.extract(replace(call, max_tokens=allowance.max_tokens))
        spent = Usage(
            reply.input_tokens,
            reply.output_tokens,
            price.cost(reply.input_tokens, reply.output_tokens),
        )
        # Spent, whatever becomes of the pass's writes.
        self._metrics.extraction_spent(
            principal.tenant_id,
            input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens,
            cost_usd=spent.cost_usd,
        )
        detail = f"kept the {capped.describe()}"
        if reply.outcome not in (ExtractionOutcome.COMPLETED, ExtractionOutcome.NO_FACTS):
            result = ExtractionResult(
                reply.outcome, synthetic, usage=spent, detail=reply.detail or detail
            )
            async with self._store.transaction(principal) as tx:
                await self._record_usage(tx, request, result)
                await self._finish_job(tx, job, result)
            return result

        kept, dropped = sift(
            reply.candidates,
            [m.value for m in existing[: s.extraction_dedup_rows]],
            SiftRules(
                max_facts=s.extraction_max_facts,
                min_confidence=s.extraction_min_confidence,
                jaccard_threshold=s.extraction_jaccard_threshold,
                has_workspace=has_workspace,
                memory_enabled=settings.memory_enabled,
            ),
            {k.ref: k.memory for k in known},
        )
        outcome = reply.outcome if reply.candidates else ExtractionOutcome.NO_FACTS
        # The call's cost is spent whatever happens to the write: record it on its own.
        async with self._store.connection(principal) as tx:
            await self._record_usage(tx, request, ExtractionResult(outcome, synthetic, usage=spent))
        async with self._store.transaction(principal) as tx:
            # The agent as it is now, its settings locked until the facts are written:
            # forgotten (or its memory turned off) while the model answered, it takes
            # none of them; a forget that comes now waits, then forgets them too.
            now = await tx.agents.get(request.agent_id, lock=True)
            if settings.memory_enabled and not now.memory_enabled:
                dropped += [
                    DroppedFact(f.key, f.value, f.scope, f.confidence, DropReason.MEMORY_DISABLED)
                    for f in kept
                    if f.scope is Scope.AGENT
                ]
                kept = [f for f in kept if f.scope is not Scope.AGENT]
            written, superseded, held = await self._write(tx, request, kept)
            result = ExtractionResult(
                outcome,
                synthetic,
                written,
                dropped + held,
                spent,
                detail=detail,
                superseded=superseded,
            )
            await self._finish_job(tx, job, result)
        return result

    async def _write(
        self, tx: Tx, request: ExtractionRequest, kept: list[KeptFact]
    ) -> tuple[list[Memory], list[Memory], list[DroppedFact]]:
        """Write every kept fact in the caller's one transaction: an addition or a
        superseding fact upserts by its auto: key, an update rewrites its target, and a
        superseded target then names the fact that replaced it."""
        facts: list[Memory] = []
        superseded: list[Memory] = []
        held: list[DroppedFact] = []
        for fact in kept:
            if fact.target is not None:
                owner = fact.target.owner
            elif fact.scope is Scope.WORKSPACE and request.workspace_id is not None:
                owner = Owner(Scope.WORKSPACE, request.workspace_id)
            else:
                owner = Owner(Scope.AGENT, request.agent_id)
            write = await _with_period(
                tx,
                MemoryWrite(
                    owner,
                    fact.key,
                    MemorySource.AUTO,
                    fact.value,
                    evidence=Evidence(confidence=fact.confidence),
                    valid_start_time=fact.valid_start_time,
                    valid_end_time=fact.valid_end_time,
                ),
            )
            try:
                written = await write_by_key(tx.memories, write)
            except FailedPrecondition:
                # The key belongs to a manual or other row: an automatic fact never
                # overwrites it. Raised before any statement failed, so the
                # transaction is intact.
                held.append(
                    DroppedFact(
                        fact.key, fact.value, fact.scope, fact.confidence, DropReason.KEY_HELD
                    )
                )
                continue
            facts.append(written.memory)
            target = fact.target
            if fact.action is Action.SUPERSEDE and target and target.id != written.memory.id:
                # Gone since the pass read it: nothing is left to supersede.
                replaced = await tx.memories.supersede(target.id, written.memory)
                if replaced is not None:
                    superseded.append(replaced)
        return facts, superseded, held

    async def _record_usage(
        self, tx: Tx, request: ExtractionRequest, result: ExtractionResult
    ) -> None:
        await tx.usage.record(
            result.synthetic_session_id,
            agent_id=request.agent_id,
            model=self._settings.extraction_model,
            usage=result.usage,
            outcome=result.outcome,
        )

    async def _finish_job(self, tx: Tx, job: JobRef | None, result: ExtractionResult) -> None:
        if job is None or (result.outcome.retryable and not job.final_attempt):
            return
        finished = await tx.jobs.finish(job.id, attempt=job.attempt, result=result)
        if not finished:
            # Our lease ran out and another worker owns the job now: roll back, so the
            # pass's facts land once, from that worker.
            raise LeaseLost(
                f"extraction job {job.id} was taken over by another worker",
                reason="EXTRACTION_LEASE_LOST",
            )

    async def _close(
        self, principal: Principal, job: JobRef | None, result: ExtractionResult
    ) -> ExtractionResult:
        if job is not None:
            async with self._store.connection(principal) as tx:
                await self._finish_job(tx, job, result)
        return result


async def _with_period(tx: Tx, write: MemoryWrite) -> MemoryWrite:
    """``write`` without the bounds of its fact's period that would, with the period
    the memory at its key has stored, end the period before it starts: a fact never
    fails a pass for its dates (and a statement that failed would spoil its
    transaction)."""
    if write.valid_start_time is None and write.valid_end_time is None:
        return write
    stored = await tx.memories.find_by_key(write.owner, write.key)
    if stored is None:
        return write
    start = write.valid_start_time or stored.valid_start_time
    end = write.valid_end_time or stored.valid_end_time
    if period_violations(start, end):
        return replace(write, valid_start_time=None, valid_end_time=None)
    return write


async def redacted(transcript: str) -> str:
    """``transcript`` with every secret replaced by a placeholder naming its kind; off
    the event loop when long."""
    if len(transcript) <= OFF_LOOP_CHARS:
        return redact_secrets(transcript)
    return await asyncio.to_thread(redact_secrets, transcript)
