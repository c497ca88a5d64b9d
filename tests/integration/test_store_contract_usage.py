"""The usage ledger's contract, run against PostgreSQL and the in-memory store: records
by id prefix in a half-open time range, oldest first, capped, with totals over every
match, costs kept to eight decimals, and tenants apart."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta

import pytest

from agent_memory.domain.extraction import ExtractionOutcome, Usage
from agent_memory.domain.identity import Principal
from agent_memory.store.repositories import Store, Tx
from agent_memory.store.usage import MAX_RECORDS
from tests.integration.conftest import Body


async def spend(
    tx: Tx, session_id: str, tokens: int, cost: float = 0.5, agent_id: str = "coder"
) -> None:
    await tx.usage.record(
        session_id,
        agent_id=agent_id,
        model="claude-test",
        usage=Usage(tokens, tokens * 2, cost),
        outcome=ExtractionOutcome.COMPLETED,
    )


def test_a_report_is_of_the_ids_with_the_prefix_oldest_first_with_totals(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        for session_id, tokens in (("run-1", 10), ("other-1", 100), ("run-2", 20)):
            async with store.connection(caller) as tx:
                await spend(tx, session_id, tokens, cost=0.25)
        async with store.connection(caller) as tx:
            runs = await tx.usage.report("run-", start=None, end=None)
            every = await tx.usage.report("", start=None, end=None)
            none = await tx.usage.report("nothing", start=None, end=None)
        assert [r.synthetic_session_id for r in runs.records] == ["run-1", "run-2"]
        first = runs.records[0]
        assert (first.agent_id, first.model, first.outcome) == (
            "coder",
            "claude-test",
            ExtractionOutcome.COMPLETED,
        )
        assert (first.input_tokens, first.output_tokens, first.cost_usd) == (10, 20, 0.25)
        assert first.recorded_at < runs.records[1].recorded_at
        assert (runs.total_input_tokens, runs.total_output_tokens, runs.total_cost_usd) == (
            30,
            60,
            0.5,
        )
        assert [r.synthetic_session_id for r in every.records] == ["run-1", "other-1", "run-2"]
        assert every.total_input_tokens == 130
        assert none.records == []
        assert (none.total_input_tokens, none.total_output_tokens, none.total_cost_usd) == (
            0,
            0,
            0.0,
        )

    scenario(body)


def test_the_time_range_includes_its_start_and_leaves_out_its_end(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        for session_id in ("s-1", "s-2", "s-3"):
            async with store.connection(caller) as tx:
                await spend(tx, session_id, 1)
        async with store.connection(caller) as tx:
            times = [
                r.recorded_at for r in (await tx.usage.report("s-", start=None, end=None)).records
            ]
            first, second, third = times
            middle = await tx.usage.report("s-", start=second, end=third)
            from_second = await tx.usage.report("s-", start=second, end=None)
            before_second = await tx.usage.report("s-", start=None, end=second)
            empty = await tx.usage.report("s-", start=second, end=second)
            later = await tx.usage.report("s-", start=third + timedelta(microseconds=1), end=None)
        assert first < second < third
        assert [r.synthetic_session_id for r in middle.records] == ["s-2"]
        assert middle.total_input_tokens == 1
        assert [r.synthetic_session_id for r in from_second.records] == ["s-2", "s-3"]
        assert [r.synthetic_session_id for r in before_second.records] == ["s-1"]
        assert (empty.records, empty.total_input_tokens) == ([], 0)
        assert later.records == []

    scenario(body)


def test_costs_are_kept_to_eight_decimals_and_summed_exactly(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await spend(tx, "c-1", 1, cost=0.123456789)
            await spend(tx, "c-2", 1, cost=0.1)
            await spend(tx, "c-3", 1, cost=0.2)
            report = await tx.usage.report("c-", start=None, end=None)
        assert sorted(r.cost_usd for r in report.records) == [0.1, 0.12345679, 0.2]
        assert report.total_cost_usd == 0.42345679

    scenario(body)


def test_the_records_are_capped_but_the_totals_count_every_match(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            for n in range(MAX_RECORDS + 5):
                await spend(tx, f"many-{n}", 1, cost=0.0)
            report = await tx.usage.report("many-", start=None, end=None)
        assert len(report.records) == MAX_RECORDS
        assert report.total_input_tokens == MAX_RECORDS + 5
        # Recorded in one transaction, the records share one time: the id orders them.
        keys = [(r.recorded_at, r.id) for r in report.records]
        assert keys == sorted(keys)

    scenario(body)


def test_a_tenant_never_sees_another_tenants_usage(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await spend(tx, "run-1", 10)
        async with store.connection(intruder) as tx:
            theirs = await tx.usage.report("", start=None, end=None)
            await spend(tx, "run-1", 99)
        async with store.connection(caller) as tx:
            mine = await tx.usage.report("", start=None, end=None)
        assert (theirs.records, theirs.total_input_tokens) == ([], 0)
        assert [r.input_tokens for r in mine.records] == [10]
        assert mine.total_input_tokens == 10

    scenario(body)


def test_usage_recorded_in_a_transaction_that_raises_is_not_kept(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def half_a_pass(store: Store) -> None:
        async with store.transaction(caller) as tx:
            await spend(tx, "run-1", 10)
            raise RuntimeError("the pass failed after its model call")

    async def body(store: Store) -> None:
        with pytest.raises(RuntimeError):
            await half_a_pass(store)
        async with store.connection(caller) as tx:
            assert (await tx.usage.report("", start=None, end=None)).records == []

    scenario(body)
