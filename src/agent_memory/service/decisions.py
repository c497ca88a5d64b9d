"""Decision use cases: card types, decisions and their review, re-examinations.

Secrets never get this far: every string of a write's request, a result's included,
is scanned before the use case runs (:mod:`agent_memory.api.stored_text`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime

from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    Reexamination,
    ResolutionStatus,
    action_violations,
    card_type_name_violations,
    compact_line,
    recent_limit,
    reexamination_refusal,
    validate_card_type,
    validate_decision,
    validate_reexamination,
)
from agent_memory.domain.errors import AlreadyExists, FailedPrecondition, NotFound, check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import owner_violations
from agent_memory.render.reexamination import render_reexamination
from agent_memory.store.repositories import Lock, Store, Tx


@dataclass(frozen=True)
class DecisionReview:
    """An agent's recent decisions, each with its compact line, as of one instant."""

    decisions: list[Decision]
    as_of: datetime


@dataclass(frozen=True)
class ReexaminationPrompt:
    """The prompt of a run that re-examines a decision, and what it was built from."""

    prompt: str
    decision: Decision
    card_type: CardType
    reexamination_count: int

    @property
    def allowed_actions(self) -> tuple[str, ...]:
        """The words the reply's suggested action may take; empty allows any."""
        return self.card_type.actions


class Decisions:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def register_card_type(
        self, principal: Principal, card_type: CardType
    ) -> tuple[CardType, bool]:
        """Register a card type, or replace the one of that name; says whether it was new.

        Raises:
            InvalidArgument: a bad name or action word.
        """
        validate_card_type(card_type)
        async with self._store.connection(principal) as tx:
            return await tx.decisions.put_card_type(card_type)

    async def record(self, principal: Principal, decision: NewDecision) -> tuple[Decision, bool]:
        """Record a run's decision, OPEN; the same decision sent again is returned as it is.

        Raises:
            InvalidArgument: a malformed field, an action outside the card type's
                decision actions, or a summary that reads as an instruction to the
                assistant (reason ``INSTRUCTION_NOT_FACT``).
            FailedPrecondition: the card type is not registered
                (reason ``CARD_TYPE_NOT_REGISTERED``).
            AlreadyExists: the run id already has a different decision
                (reason ``DECISION_ALREADY_RECORDED``).
        """
        validate_decision(decision)
        async with self._store.transaction(principal) as tx:
            card_type = await tx.decisions.get_card_type(decision.card_type)
            if card_type is None:
                raise FailedPrecondition(
                    f"card type {decision.card_type!r} is not registered; register it with "
                    "RegisterCardType first",
                    reason="CARD_TYPE_NOT_REGISTERED",
                    metadata={"card_type": decision.card_type},
                )
            check(action_violations("decision.action", decision.action, card_type.decision_actions))
            created = await tx.decisions.insert(decision)
            if created is not None:
                return created, True
            existing = await tx.decisions.find_by_run(decision.run_id)
            if existing is None or not existing.same_as(decision):
                raise AlreadyExists(
                    f"run {decision.run_id!r} already has a different decision",
                    reason="DECISION_ALREADY_RECORDED",
                    metadata={
                        "run_id": decision.run_id,
                        "decision_id": str(existing.id) if existing else "",
                    },
                )
            return existing, False

    async def get(self, principal: Principal, decision_id: uuid.UUID) -> Decision:
        """Raises: NotFound — no such decision in the caller's tenant."""
        async with self._store.connection(principal) as tx:
            return await _decision(tx, decision_id)

    async def recent(
        self,
        principal: Principal,
        *,
        agent_id: str,
        limit: int,
        include_result: bool,
        card_type: str = "",
    ) -> DecisionReview:
        """The agent's newest decisions first, each with its compact line.

        Raises:
            InvalidArgument: a bad agent id, card type name or limit.
        """
        violations = owner_violations("agent_id", agent_id)
        if card_type:
            violations += card_type_name_violations("card_type", card_type)
        check(violations)
        count = recent_limit(limit)
        async with self._store.reading(principal) as tx:
            found = await tx.decisions.recent(
                agent_id, limit=count, with_result=include_result, card_type=card_type or None
            )
            now = await tx.clock.now()
        return DecisionReview(
            decisions=[replace(d, compact=compact_line(d, now)) for d in found], as_of=now
        )

    async def resolve(
        self, principal: Principal, decision_id: uuid.UUID, status: ResolutionStatus
    ) -> Decision:
        """Set a decision's resolution status; nothing else about it changes.

        Raises:
            NotFound: no such decision in the caller's tenant.
        """
        async with self._store.transaction(principal) as tx:
            current = await _decision(tx, decision_id, lock="update")
            if current.resolution_status is status:
                return current
            await tx.decisions.set_resolution(decision_id, status)
            return await _decision(tx, decision_id)

    async def reexamine(
        self, principal: Principal, item: NewReexamination
    ) -> tuple[Reexamination, bool]:
        """Record a later run's conviction on a decision, beside it; the decision is untouched.

        Raises:
            InvalidArgument: a malformed field, a suggested action outside the card
                type's actions, or notes that read as an instruction to the assistant
                (reason ``INSTRUCTION_NOT_FACT``).
            NotFound: no such decision in the caller's tenant.
            FailedPrecondition: the card type forbids re-examination
                (``NOT_RE_EXAMINABLE``), or the decision is closed and the card type is
                re-examinable only until resolved (``DECISION_CLOSED``).
            AlreadyExists: the run id already has a different re-examination
                (reason ``REEXAMINATION_ALREADY_RECORDED``).
        """
        validate_reexamination(item)
        async with self._store.transaction(principal) as tx:
            parent = await _decision(tx, item.parent_decision_id, lock="share")
            existing = await tx.decisions.find_reexamination_by_run(item.run_id)
            if existing is not None:
                return _replayed(existing, item), False
            card_type = await _re_examinable(tx, parent)
            check(action_violations("suggested_action", item.suggested_action, card_type.actions))
            created = await tx.decisions.insert_reexamination(item)
            if created is not None:
                return created, True
            raced = await tx.decisions.find_reexamination_by_run(item.run_id)
            if raced is None:
                raise AlreadyExists(
                    f"run {item.run_id!r} already has a re-examination",
                    reason="REEXAMINATION_ALREADY_RECORDED",
                    metadata={"run_id": item.run_id},
                )
            return _replayed(raced, item), False

    async def reexaminations(
        self, principal: Principal, parent_decision_id: uuid.UUID
    ) -> list[Reexamination]:
        """A decision's conviction history, oldest first.

        Raises:
            NotFound: no such decision in the caller's tenant.
        """
        async with self._store.connection(principal) as tx:
            await _decision(tx, parent_decision_id)
            return await tx.decisions.reexaminations(parent_decision_id)

    async def reexamination_prompt(
        self, principal: Principal, decision_id: uuid.UUID
    ) -> ReexaminationPrompt:
        """The prompt of a fresh run that re-examines a decision: the decision, its
        fields and its conviction history as data, and the reply it must give.

        Raises:
            NotFound: no such decision in the caller's tenant.
            FailedPrecondition: the decision may not be re-examined, as
                :meth:`reexamine` would refuse it (``NOT_RE_EXAMINABLE``,
                ``DECISION_CLOSED``).
        """
        async with self._store.connection(principal) as tx:
            decision = await _decision(tx, decision_id)
            card_type = await _re_examinable(tx, decision)
            history = await tx.decisions.reexaminations(decision_id)
        return ReexaminationPrompt(
            prompt=render_reexamination(decision, card_type, history),
            decision=decision,
            card_type=card_type,
            reexamination_count=len(history),
        )


async def _re_examinable(tx: Tx, decision: Decision) -> CardType:
    """The decision's card type, when its rules let the decision be re-examined.

    Raises:
        FailedPrecondition: they do not (see ``reexamination_refusal``).
    """
    card_type = await tx.decisions.get_card_type(decision.card_type)
    if card_type is None:  # a decision cannot outlive its card type; be safe anyway
        card_type = CardType(name=decision.card_type)
    refusal = reexamination_refusal(card_type, decision)
    if refusal is not None:
        raise refusal
    return card_type


def _replayed(existing: Reexamination, item: NewReexamination) -> Reexamination:
    if not existing.same_as(item):
        raise AlreadyExists(
            f"run {item.run_id!r} already has a different re-examination",
            reason="REEXAMINATION_ALREADY_RECORDED",
            metadata={"run_id": item.run_id, "reexamination_id": str(existing.id)},
        )
    return existing


async def _decision(tx: Tx, decision_id: uuid.UUID, *, lock: Lock | None = None) -> Decision:
    found = await tx.decisions.get(decision_id, lock=lock)
    if found is None:
        raise NotFound(
            f"decision {decision_id} not found",
            reason="DECISION_NOT_FOUND",
            metadata={"decision_id": str(decision_id)},
        )
    return found
