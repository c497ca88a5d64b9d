"""The decision repository's contract, run against PostgreSQL and the in-memory store:
card types replaced in place, a decision once per run id and its result never changed,
the review order, resolutions, re-examinations beside their decision, and tenants
apart."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    ReExaminable,
    ResolutionStatus,
)
from agent_memory.domain.identity import Principal
from agent_memory.store.repositories import Store, Tx
from tests.integration.conftest import Body

TRADE = CardType("trade", ReExaminable.ALWAYS, ("HOLD", "SELL"), ("WAIT", "BUY"))


def new_decision(run_id: str, **fields: Any) -> NewDecision:
    values: dict[str, Any] = {
        "agent_id": "trader",
        "card_type": "trade",
        "action": "WAIT",
        "summary": "range unresolved",
        "result": {"symbol": "ACME", "levels": [1.5, 2], "note": None},
    }
    return NewDecision(run_id, **{**values, **fields})


async def recorded(tx: Tx, run_id: str, **fields: Any) -> Decision:
    decision = await tx.decisions.insert(new_decision(run_id, **fields))
    assert decision is not None
    return decision


def again(decision: Decision, run_id: str, score: int, action: str = "HOLD") -> NewReexamination:
    return NewReexamination(decision.id, run_id, score, f"conviction {score}", action)


def test_a_card_type_is_inserted_then_replaced_in_place(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            assert await tx.decisions.get_card_type("trade") is None
            first, new = await tx.decisions.put_card_type(TRADE)
            changed = CardType("trade", ReExaminable.NEVER, ("SELL",), ())
            second, new_again = await tx.decisions.put_card_type(changed)
            read = await tx.decisions.get_card_type("trade")
        assert new
        assert (first.name, first.re_examinable) == ("trade", ReExaminable.ALWAYS)
        assert (first.actions, first.decision_actions) == (("HOLD", "SELL"), ("WAIT", "BUY"))
        assert first.created_at is not None
        assert first.created_at == first.updated_at
        assert not new_again
        assert (second.re_examinable, second.actions, second.decision_actions) == (
            ReExaminable.NEVER,
            ("SELL",),
            (),
        )
        assert second.created_at == first.created_at
        assert second.updated_at is not None
        assert second.updated_at > first.created_at
        assert read == second

    scenario(body)


def test_a_decision_is_recorded_open_once_per_run_id(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.decisions.put_card_type(TRADE)
            decision = await recorded(tx, "run-1")
            taken = await tx.decisions.insert(new_decision("run-1", action="BUY"))
            by_id = await tx.decisions.get(decision.id, lock="share")
            by_run = await tx.decisions.find_by_run("run-1")
            assert await tx.decisions.get(uuid.uuid4()) is None
            assert await tx.decisions.find_by_run("run-2") is None
        assert (decision.run_id, decision.agent_id, decision.card_type) == (
            "run-1",
            "trader",
            "trade",
        )
        assert (decision.action, decision.summary) == ("WAIT", "range unresolved")
        assert decision.result == {"symbol": "ACME", "levels": [1.5, 2], "note": None}
        assert decision.resolution_status is ResolutionStatus.OPEN
        assert decision.resolved_at is None
        assert (decision.latest_conviction_score, decision.reexamination_count) == (None, 0)
        assert decision.compact == ""
        assert taken is None
        assert by_id == decision
        assert by_run == decision

    scenario(body)


def test_recent_decisions_are_the_agents_newest_first_with_results_only_when_asked(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.decisions.put_card_type(TRADE)
            await tx.decisions.put_card_type(CardType("hire"))
            made = [
                await recorded(tx, "r1"),
                await recorded(tx, "r2", card_type="hire", action="HIRE"),
                await recorded(tx, "r3", agent_id="other"),
                await recorded(tx, "r4"),
                await recorded(tx, "r5", card_type="hire", action="PASS"),
            ]
            newest = await tx.decisions.recent("trader", limit=10, with_result=True)
            two = await tx.decisions.recent("trader", limit=2, with_result=False)
            trades = await tx.decisions.recent(
                "trader", limit=10, with_result=True, card_type="trade"
            )
            nobody = await tx.decisions.recent("nobody", limit=10, with_result=True)
        r1, r2, _, r4, r5 = made
        assert [d.id for d in newest] == [r5.id, r4.id, r2.id, r1.id]
        assert newest[0] == r5
        assert [d.id for d in two] == [r5.id, r4.id]
        assert [d.result for d in two] == [None, None]
        assert [d.summary for d in two] == ["range unresolved"] * 2
        assert [d.id for d in trades] == [r4.id, r1.id]
        assert nobody == []
        assert all(a.created_at < b.created_at for a, b in pairwise(made))

    scenario(body)


def test_a_resolution_sets_the_status_and_when_it_closed_and_nothing_else(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.decisions.put_card_type(TRADE)
            decision = await recorded(tx, "run-1")
            await tx.decisions.set_resolution(decision.id, ResolutionStatus.RESOLVED)
            resolved = await tx.decisions.get(decision.id)
            await tx.decisions.set_resolution(decision.id, ResolutionStatus.EXPIRED)
            expired = await tx.decisions.get(decision.id)
            await tx.decisions.set_resolution(decision.id, ResolutionStatus.OPEN)
            reopened = await tx.decisions.get(decision.id)
        assert resolved is not None
        assert resolved.resolution_status is ResolutionStatus.RESOLVED
        assert resolved.resolved_at is not None
        assert resolved.resolved_at >= decision.created_at
        unchanged = {"resolution_status": ResolutionStatus.OPEN, "resolved_at": None}
        assert Decision(**{**vars(resolved), **unchanged}) == decision
        assert expired is not None
        assert expired.resolution_status is ResolutionStatus.EXPIRED
        assert expired.resolved_at is not None
        assert reopened == decision

    scenario(body)


def test_re_examinations_are_kept_beside_the_decision_once_per_run_id(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.decisions.put_card_type(TRADE)
            decision = await recorded(tx, "run-1")
            other = await recorded(tx, "run-2")
            first = await tx.decisions.insert_reexamination(again(decision, "re-1", 70))
            second = await tx.decisions.insert_reexamination(again(decision, "re-2", 0, "SELL"))
            taken = await tx.decisions.insert_reexamination(again(other, "re-1", 10))
            history = await tx.decisions.reexaminations(decision.id)
            found = await tx.decisions.find_reexamination_by_run("re-2")
            assert await tx.decisions.find_reexamination_by_run("re-3") is None
            assert await tx.decisions.reexaminations(other.id) == []
            after = await tx.decisions.get(decision.id)
            listed = await tx.decisions.recent("trader", limit=10, with_result=False)
            untouched = await tx.decisions.get(other.id)
        assert first is not None
        assert second is not None
        assert (first.parent_decision_id, first.run_id, first.conviction_score) == (
            decision.id,
            "re-1",
            70,
        )
        assert (first.notes, first.suggested_action) == ("conviction 70", "HOLD")
        assert first.created_at < second.created_at
        assert taken is None
        assert history == [first, second]
        assert found == second
        assert after is not None
        # The newest conviction and the count come with the decision; it is otherwise
        # as it was recorded.
        assert (after.latest_conviction_score, after.reexamination_count) == (0, 2)
        assert (
            Decision(**{**vars(after), "latest_conviction_score": None, "reexamination_count": 0})
            == decision
        )
        assert [(d.latest_conviction_score, d.reexamination_count) for d in listed] == [
            (None, 0),
            (0, 2),
        ]
        assert untouched == other

    scenario(body)


def test_a_tenant_never_sees_or_changes_another_tenants_decisions(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.decisions.put_card_type(TRADE)
            mine = await recorded(tx, "run-1")
            history = await tx.decisions.insert_reexamination(again(mine, "re-1", 50))
        async with store.connection(intruder) as tx:
            assert await tx.decisions.get_card_type("trade") is None
            assert await tx.decisions.get(mine.id) is None
            assert await tx.decisions.find_by_run("run-1") is None
            assert await tx.decisions.recent("trader", limit=10, with_result=True) == []
            assert await tx.decisions.find_reexamination_by_run("re-1") is None
            assert await tx.decisions.reexaminations(mine.id) == []
            await tx.decisions.set_resolution(mine.id, ResolutionStatus.RESOLVED)
            _, new = await tx.decisions.put_card_type(CardType("trade"))
            assert new
            theirs = await recorded(tx, "run-1", action="BUY")
            assert theirs.id != mine.id
            their_again = await tx.decisions.insert_reexamination(again(theirs, "re-1", 5))
            assert their_again is not None
        async with store.connection(caller) as tx:
            card_type = await tx.decisions.get_card_type("trade")
            found = await tx.decisions.get(mine.id)
            assert await tx.decisions.reexaminations(mine.id) == [history]
        assert card_type is not None
        assert (card_type.re_examinable, card_type.actions) == (ReExaminable.ALWAYS, TRADE.actions)
        assert found is not None
        assert found.resolution_status is ResolutionStatus.OPEN
        assert found.latest_conviction_score == 50

    scenario(body)


def test_a_decision_written_in_a_transaction_that_raises_is_not_kept(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def half_a_use_case(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await tx.decisions.put_card_type(TRADE)
            await recorded(tx, "run-1")
            raise RuntimeError("the rest of the use case failed")

    async def body(store: Store) -> None:
        with pytest.raises(RuntimeError):
            await half_a_use_case(store)
        async with store.connection(caller) as tx:
            assert await tx.decisions.get_card_type("trade") is None
            assert await tx.decisions.find_by_run("run-1") is None

    scenario(body)
