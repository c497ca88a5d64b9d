"""The export and import use case on the in-memory store, with the format the command
uses: what an export writes an import reads back unchanged; a refused file writes
nothing, whether it is refused before any write or by the store halfway."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory.api.transfer_convert import ProtoJsonRecords
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockLimits, BlockScope
from agent_memory.domain.decisions import (
    CardType,
    Decision,
    ReExaminable,
    Reexamination,
    ResolutionStatus,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage, StoredConversation
from agent_memory.domain.memory import Grounding, Memory, MemorySource, Owner, Scope
from agent_memory.domain.transfer import DecisionRecord, MemoryRecord, UserBlock
from agent_memory.service.transfer import CLOCK_SKEW, ImportRefused, Tally, Transfer
from tests.fakes import FakeStore

THEN = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
NOW = THEN + timedelta(days=30)


def transfer(store: FakeStore) -> Transfer:
    return Transfer(store, ProtoJsonRecords(), BlockLimits())


async def seeded(store: FakeStore, tenant: str) -> None:
    decision_id = uuid.uuid4()
    async with store.transaction(Principal(tenant, "seed")) as tx:
        await tx.transfer.put_card_type(
            CardType("trade", ReExaminable.ALWAYS, ("HOLD",), ("WAIT",), THEN, THEN)
        )
        said = (ConversationMessage("user", "I moved to Porto", "m1", THEN),)
        await tx.transfer.put_conversation(
            StoredConversation(Conversation("p", "c1", said, ("{}",)), 1, 1, THEN, THEN)
        )
        await tx.transfer.put_memory(
            MemoryRecord(
                Memory(
                    id=uuid.uuid4(),
                    owner=Owner(Scope.AGENT, "coder"),
                    key="moved",
                    value="Ana moved to Porto.\u2028She works from home.",
                    pinned=True,
                    importance=20,
                    source=MemorySource.MEMORIZE,
                    created_at=THEN,
                    updated_at=THEN,
                    version=1,
                    tags=("home",),
                    confidence=0.5,
                    metadata={"turn": 3.0},
                    groundings=(Grounding(0, "m1", 3, 8, "moved"),),
                    conversation_provider="p",
                    conversation_id="c1",
                )
            )
        )
        key = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")
        await tx.transfer.put_block(UserBlock("ana", key, "a\nb"), keep=5)
        await tx.transfer.put_decision(
            DecisionRecord(
                Decision(
                    decision_id,
                    "run-1",
                    "coder",
                    "trade",
                    "WAIT",
                    "range unresolved",
                    {"symbol": "ACME"},
                    ResolutionStatus.OPEN,
                    THEN,
                ),
                (Reexamination(uuid.uuid4(), decision_id, "run-2", 60, "Still.", "HOLD", THEN),),
            )
        )


async def exported(store: FakeStore, tenant: str) -> list[str]:
    lines: list[str] = []
    await transfer(store).export(tenant, lines.append)
    return lines


def unsealed(lines: list[str]) -> list[dict[str, object]]:
    """The records with each seal as one placeholder: a seal differs from one export to
    the next, while which records carry one is compared; every block carries one."""
    records = [json.loads(line) for line in lines]
    assert all(isinstance(r["screened"], str) for r in records if r.get("kind") == "block")
    return [{**r, "screened": "SEALED"} if "screened" in r else r for r in records]


def test_an_import_of_an_export_exports_the_same_and_a_second_import_changes_nothing() -> None:
    async def go() -> None:
        store = FakeStore()
        await seeded(store, "source")
        source = await exported(store, "source")
        text = "\n".join(source) + "\n"
        first = await transfer(store).import_text("target", text, now=NOW)
        assert {kind: t.imported for kind, t in first.items()} == {
            "card_type": 1,
            "conversation": 1,
            "memory": 1,
            "block": 1,
            "decision": 1,
        }
        target = await exported(store, "target")
        assert unsealed(target[1:]) == unsealed(source[1:])
        second = await transfer(store).import_text("target", text, now=NOW)
        assert all(t == Tally(0, 1) for t in second.values())
        assert unsealed((await exported(store, "target"))[1:]) == unsealed(target[1:])

    asyncio.run(go())


def test_a_line_separator_in_a_value_is_written_as_it_is() -> None:
    """Only "\\n" ends a record: the round trip above reads it back whole."""

    async def go() -> None:
        store = FakeStore()
        await seeded(store, "source")
        (memory,) = [line for line in await exported(store, "source") if '"memory"' in line]
        assert "\u2028" in memory

    asyncio.run(go())


def _file(*records: dict[str, Any]) -> str:
    header = {"format": "agent-memory-export", "version": 2}
    return "".join(json.dumps(r) + "\n" for r in (header, *records))


CARD_TYPE = {
    "kind": "card_type",
    "card_type": {
        "name": "trade",
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
    },
}


def _decision(card_type: str = "trade", created_at: str = "2026-01-01T00:00:00Z") -> dict[str, Any]:
    return {
        "kind": "decision",
        "decision": {
            "id": str(uuid.uuid4()),
            "run_id": f"run-{uuid.uuid4().hex[:6]}",
            "agent_id": "coder",
            "card_type": card_type,
            "action": "WAIT",
            "summary": "range unresolved",
            "resolution_status": "RESOLUTION_STATUS_OPEN",
            "created_at": created_at,
        },
    }


def test_a_record_the_store_refuses_halfway_rolls_back_what_came_before() -> None:
    async def go() -> None:
        store = FakeStore()
        text = _file(CARD_TYPE, _decision(), _decision(card_type="spells"))
        with pytest.raises(ImportRefused) as refused:
            await transfer(store).import_text("t", text, now=NOW)
        assert refused.value.line == 4
        assert "card type 'spells' is not registered" in refused.value.message
        assert store.state.card_types == {}
        assert store.state.decisions == {}

    asyncio.run(go())


def test_a_time_a_little_ahead_is_the_clock_skew_and_further_is_refused() -> None:
    def at(ahead: timedelta) -> str:
        return (NOW + ahead).isoformat().replace("+00:00", "Z")

    async def go() -> None:
        store = FakeStore()
        skewed = _file(CARD_TYPE, _decision(created_at=at(CLOCK_SKEW - timedelta(seconds=1))))
        await transfer(store).import_text("t", skewed, now=NOW)
        ahead = _file(_decision(created_at=at(CLOCK_SKEW + timedelta(seconds=1))))
        with pytest.raises(ImportRefused) as refused:
            await transfer(store).import_text("u", ahead, now=NOW)
        assert (refused.value.line, refused.value.message) == (
            2,
            "decision.created_at: must not be in the future",
        )

    asyncio.run(go())


def test_a_header_alone_imports_nothing_and_an_empty_line_is_refused() -> None:
    async def go() -> None:
        store = FakeStore()
        assert await transfer(store).import_text("t", _file(), now=NOW) == {}
        with pytest.raises(ImportRefused) as refused:
            await transfer(store).import_text("t", _file(CARD_TYPE) + "\n", now=NOW)
        assert refused.value.line == 3
        assert store.state.card_types == {}

    asyncio.run(go())
