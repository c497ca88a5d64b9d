"""Decision use cases over the in-memory store: card types, recording once per run,
the compact review as of the store's clock, resolutions, and who may re-examine what."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from agent_memory.domain.decisions import (
    COMPACT_SEPARATOR,
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    ReExaminable,
    ResolutionStatus,
)
from agent_memory.domain.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from agent_memory.domain.identity import Principal
from agent_memory.service.decisions import Decisions
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")
THEN = datetime(2026, 1, 1, tzinfo=UTC)
TRADE = CardType("trade", ReExaminable.UNTIL_RESOLVED, ("HOLD", "CLOSE"), ("WAIT", "BUY"))


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


@pytest.fixture
def decisions(store: FakeStore) -> Decisions:
    service = Decisions(store)
    run(service.register_card_type(ALICE, TRADE))
    return service


def new(run_id: str = "run-1", **fields: Any) -> NewDecision:
    values: dict[str, Any] = {
        "agent_id": "trader",
        "card_type": "trade",
        "action": "WAIT",
        "summary": "range unresolved",
        "result": {"asset": "ACME", "levels": [1, 2]},
    }
    return NewDecision(run_id, **{**values, **fields})


def record(decisions: Decisions, run_id: str = "run-1", **fields: Any) -> Decision:
    decision, created = run(decisions.record(ALICE, new(run_id, **fields)))
    assert created
    return decision


def reexamination(
    decision: Decision, run_id: str = "re-1", score: int = 60, action: str = "HOLD"
) -> NewReexamination:
    return NewReexamination(decision.id, run_id, score, "still holds", action)


# --- card types and recording -------------------------------------------------------------


def test_a_card_type_is_new_once_then_replaced(decisions: Decisions) -> None:
    changed = CardType("trade", ReExaminable.NEVER, ("SELL",))
    stored, created = run(decisions.register_card_type(ALICE, changed))
    assert not created
    assert (stored.re_examinable, stored.actions, stored.decision_actions) == (
        ReExaminable.NEVER,
        ("SELL",),
        (),
    )
    _, created = run(decisions.register_card_type(ALICE, CardType("hire")))
    assert created


def test_a_bad_card_type_is_refused(decisions: Decisions) -> None:
    with pytest.raises(InvalidArgument) as refused:
        run(decisions.register_card_type(ALICE, CardType("Trade", actions=("hold", "HOLD"))))
    assert {v.field for v in refused.value.violations} == {
        "card_type.name",
        "card_type.actions[0]",
    }


def test_a_decision_is_recorded_open_with_its_result(decisions: Decisions) -> None:
    decision = record(decisions)
    assert decision.resolution_status is ResolutionStatus.OPEN
    assert decision.resolved_at is None
    assert decision.result == {"asset": "ACME", "levels": [1, 2]}
    assert run(decisions.get(ALICE, decision.id)) == decision


def test_a_decision_of_a_card_type_not_registered_is_refused(decisions: Decisions) -> None:
    with pytest.raises(FailedPrecondition) as refused:
        run(decisions.record(ALICE, new(card_type="hire")))
    assert refused.value.reason == "CARD_TYPE_NOT_REGISTERED"
    assert refused.value.metadata == {"card_type": "hire"}


def test_the_action_must_be_one_of_the_card_types_decision_actions(
    decisions: Decisions,
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        run(decisions.record(ALICE, new(action="SELL")))
    assert [(v.field, v.reason) for v in refused.value.violations] == [
        ("decision.action", "NOT_ALLOWED")
    ]
    run(decisions.register_card_type(ALICE, CardType("free")))
    assert record(decisions, card_type="free", action="ANYTHING").action == "ANYTHING"


def test_the_same_decision_sent_again_is_the_one_recorded(decisions: Decisions) -> None:
    first = record(decisions)
    # The result's key order does not make it another decision.
    again, created = run(decisions.record(ALICE, new(result={"levels": [1, 2], "asset": "ACME"})))
    assert not created
    assert again == first


def test_another_decision_for_a_run_id_taken_is_refused(decisions: Decisions) -> None:
    first = record(decisions)
    with pytest.raises(AlreadyExists) as refused:
        run(decisions.record(ALICE, new(action="BUY")))
    assert refused.value.reason == "DECISION_ALREADY_RECORDED"
    assert refused.value.metadata == {"run_id": "run-1", "decision_id": str(first.id)}
    assert [
        d.id
        for d in run(
            decisions.recent(ALICE, agent_id="trader", limit=0, include_result=False)
        ).decisions
    ] == [first.id]


def test_a_refused_decision_writes_nothing(decisions: Decisions) -> None:
    with pytest.raises(InvalidArgument):
        run(decisions.record(ALICE, new(summary="two\nlines")))
    review = run(decisions.recent(ALICE, agent_id="trader", limit=0, include_result=False))
    assert review.decisions == []


# --- the review ---------------------------------------------------------------------------


def test_the_review_is_the_newest_five_as_compact_lines_aged_by_the_store_clock(
    store: FakeStore, decisions: Decisions
) -> None:
    record(decisions, "old", summary="range unresolved")
    store.clock.advance(timedelta(days=2, hours=3))
    for n in range(5):
        record(decisions, f"run-{n}", summary=f"decision {n}")
    store.clock.advance(timedelta(minutes=12))
    review = run(decisions.recent(ALICE, agent_id="trader", limit=0, include_result=False))
    assert [d.summary for d in review.decisions] == [f"decision {n}" for n in range(4, -1, -1)]
    assert review.decisions[0].compact == COMPACT_SEPARATOR.join(("12m ago", "WAIT", "decision 4"))
    assert all(d.result is None for d in review.decisions)
    everything = run(decisions.recent(ALICE, agent_id="trader", limit=10, include_result=True))
    assert everything.decisions[-1].compact == COMPACT_SEPARATOR.join(
        ("2d ago", "WAIT", "range unresolved")
    )
    assert everything.decisions[-1].result == {"asset": "ACME", "levels": [1, 2]}
    assert everything.as_of - everything.decisions[-1].created_at >= timedelta(days=2)


def test_the_review_is_of_one_agent_and_may_name_a_card_type(decisions: Decisions) -> None:
    run(decisions.register_card_type(ALICE, CardType("hire")))
    record(decisions, "r1")
    record(decisions, "r2", card_type="hire", action="HIRE")
    record(decisions, "r3", agent_id="other")

    def runs(limit: int = 0, **fields: Any) -> list[str]:
        review = run(decisions.recent(ALICE, limit=limit, include_result=False, **fields))
        return [d.run_id for d in review.decisions]

    assert runs(agent_id="trader") == ["r2", "r1"]
    assert runs(agent_id="trader", card_type="trade") == ["r1"]
    assert runs(agent_id="other") == ["r3"]
    with pytest.raises(InvalidArgument):
        runs(agent_id="trader", card_type="Not A Slug")
    with pytest.raises(InvalidArgument):
        runs(agent_id="trader", limit=-1)


# --- resolution -----------------------------------------------------------------------------


def test_resolving_changes_the_status_and_when_and_nothing_else(decisions: Decisions) -> None:
    decision = record(decisions)
    resolved = run(decisions.resolve(ALICE, decision.id, ResolutionStatus.RESOLVED))
    assert resolved.resolution_status is ResolutionStatus.RESOLVED
    assert resolved.resolved_at is not None
    assert (resolved.id, resolved.action, resolved.summary, resolved.result) == (
        decision.id,
        decision.action,
        decision.summary,
        decision.result,
    )
    # Resolving again to the same status changes nothing, not even when it closed.
    assert run(decisions.resolve(ALICE, decision.id, ResolutionStatus.RESOLVED)) == resolved
    reopened = run(decisions.resolve(ALICE, decision.id, ResolutionStatus.OPEN))
    assert reopened == decision


def test_resolving_an_unknown_decision_is_not_found(decisions: Decisions) -> None:
    missing = uuid.uuid4()
    with pytest.raises(NotFound) as refused:
        run(decisions.resolve(ALICE, missing, ResolutionStatus.RESOLVED))
    assert refused.value.reason == "DECISION_NOT_FOUND"
    assert refused.value.metadata == {"decision_id": str(missing)}


# --- re-examinations ----------------------------------------------------------------------


def test_a_re_examination_is_kept_beside_the_decision_which_it_leaves_alone(
    decisions: Decisions,
) -> None:
    decision = record(decisions)
    first, created = run(decisions.reexamine(ALICE, reexamination(decision, "re-1", 70)))
    assert created
    second, _ = run(decisions.reexamine(ALICE, reexamination(decision, "re-2", 0, "CLOSE")))
    assert run(decisions.reexaminations(ALICE, decision.id)) == [first, second]
    after = run(decisions.get(ALICE, decision.id))
    assert (after.latest_conviction_score, after.reexamination_count) == (0, 2)
    assert (after.result, after.resolution_status, after.action) == (
        decision.result,
        ResolutionStatus.OPEN,
        "WAIT",
    )


def test_the_same_re_examination_sent_again_is_the_one_recorded(decisions: Decisions) -> None:
    decision = record(decisions)
    first, _ = run(decisions.reexamine(ALICE, reexamination(decision)))
    again, created = run(decisions.reexamine(ALICE, reexamination(decision)))
    assert not created
    assert again == first
    with pytest.raises(AlreadyExists) as refused:
        run(decisions.reexamine(ALICE, reexamination(decision, score=10)))
    assert refused.value.reason == "REEXAMINATION_ALREADY_RECORDED"
    assert refused.value.metadata == {"run_id": "re-1", "reexamination_id": str(first.id)}
    assert len(run(decisions.reexaminations(ALICE, decision.id))) == 1


@pytest.mark.parametrize(
    ("re_examinable", "closed", "reason"),
    [
        (ReExaminable.NEVER, None, "NOT_RE_EXAMINABLE"),
        (ReExaminable.UNTIL_RESOLVED, ResolutionStatus.RESOLVED, "DECISION_CLOSED"),
        (ReExaminable.UNTIL_RESOLVED, ResolutionStatus.EXPIRED, "DECISION_CLOSED"),
        (ReExaminable.ALWAYS, ResolutionStatus.RESOLVED, None),
        (ReExaminable.UNTIL_RESOLVED, None, None),
    ],
)
def test_the_card_type_says_whether_a_decision_may_be_re_examined(
    decisions: Decisions,
    re_examinable: ReExaminable,
    closed: ResolutionStatus | None,
    reason: str | None,
) -> None:
    decision = record(decisions)
    if closed is not None:
        run(decisions.resolve(ALICE, decision.id, closed))
    # Registering the card type again changes the rules for decisions already recorded.
    run(decisions.register_card_type(ALICE, CardType("trade", re_examinable, ("HOLD",))))
    item = reexamination(decision)
    if reason is None:
        _, created = run(decisions.reexamine(ALICE, item))
        assert created
        prompt = run(decisions.reexamination_prompt(ALICE, decision.id))
        assert prompt.reexamination_count == 1
        assert prompt.allowed_actions == ("HOLD",)
        return
    for call in (
        decisions.reexamine(ALICE, item),
        decisions.reexamination_prompt(ALICE, decision.id),
    ):
        with pytest.raises(FailedPrecondition) as refused:
            run(call)
        assert refused.value.reason == reason
    assert run(decisions.reexaminations(ALICE, decision.id)) == []


def test_the_suggested_action_follows_the_card_types_actions(decisions: Decisions) -> None:
    decision = record(decisions)
    with pytest.raises(InvalidArgument) as refused:
        run(decisions.reexamine(ALICE, reexamination(decision, action="BUY")))
    assert [(v.field, v.reason) for v in refused.value.violations] == [
        ("suggested_action", "NOT_ALLOWED")
    ]
    run(decisions.register_card_type(ALICE, CardType("trade", ReExaminable.ALWAYS)))
    _, created = run(decisions.reexamine(ALICE, reexamination(decision, action="ANY_WORD")))
    assert created


def test_a_re_examination_of_an_unknown_decision_is_not_found(decisions: Decisions) -> None:
    ghost = Decision(
        uuid.uuid4(), "r", "trader", "trade", "WAIT", "s", {}, ResolutionStatus.OPEN, THEN
    )
    for call in (
        decisions.reexamine(ALICE, reexamination(ghost)),
        decisions.reexaminations(ALICE, ghost.id),
        decisions.reexamination_prompt(ALICE, ghost.id),
    ):
        with pytest.raises(NotFound):
            run(call)


def test_another_tenant_sees_none_of_it(decisions: Decisions) -> None:
    intruder = Principal("globex", "mallory")
    decision = record(decisions)
    for call in (
        decisions.get(intruder, decision.id),
        decisions.resolve(intruder, decision.id, ResolutionStatus.RESOLVED),
        decisions.reexamine(intruder, reexamination(decision)),
        decisions.reexaminations(intruder, decision.id),
    ):
        with pytest.raises(NotFound):
            run(call)
    with pytest.raises(FailedPrecondition):
        run(decisions.record(intruder, new()))
    review = run(decisions.recent(intruder, agent_id="trader", limit=0, include_result=False))
    assert review.decisions == []
    assert run(decisions.get(ALICE, decision.id)) == decision
