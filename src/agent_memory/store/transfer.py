"""A tenant's card types, conversations, memories, blocks and decisions, read whole for
an export and written back by an import with the ids and times they had.

Reads go through the same row readers as every other read of these tables, so an
export holds what the API answers. Each put is one statement that writes only where
nothing holds the record's key (``ON CONFLICT DO NOTHING``), so importing the same
file twice changes nothing the second time; blocks go through the block store, which
keeps their version and archival lines as any block write does.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, LiteralString

import psycopg
from psycopg.types.json import Jsonb

from agent_memory.domain.decisions import CardType, Reexamination
from agent_memory.domain.errors import AlreadyExists, FailedPrecondition
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import StoredConversation
from agent_memory.domain.transfer import DecisionRecord, MemoryRecord, UserBlock
from agent_memory.store.blocks import PgBlocks, key_from_row
from agent_memory.store.columns import OUTPUT, WRITTEN, insert_columns, insert_values, named, output
from agent_memory.store.conversations import conversation_from_row, snapshot_columns
from agent_memory.store.decisions import (
    CARD_TYPE_COLUMNS,
    REEXAMINATION_COLUMNS,
    card_type_from_row,
    decision_columns,
    decision_from_row,
    reexamination_from_row,
)
from agent_memory.store.history import snapshot
from agent_memory.store.memory_sql import GROUNDINGS, columns, live, memory_from_row, params_of
from agent_memory.store.models import ConversationRow, MemoryRow
from agent_memory.store.repositories import TransferRepository
from agent_memory.store.sql import Connection, execute, fetch_all, fetch_one
from agent_memory.store.vectors import memory_hash, text_hash, unread

_CARD_TYPES: LiteralString = f"""
SELECT {CARD_TYPE_COLUMNS} FROM card_types WHERE tenant_id = %(tenant_id)s ORDER BY name
"""

_CONVERSATIONS: LiteralString = f"""
SELECT {output(ConversationRow, "", full=True)}
FROM conversations WHERE tenant_id = %(tenant_id)s ORDER BY provider, conversation_id
"""

_MEMORIES: LiteralString = f"""
SELECT {columns("m")}, {GROUNDINGS},
       NOT m.held_for_review AND NOT ({unread("m", memory_hash("m"))}) AS screened
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s AND {live("m")}
ORDER BY m.scope, m.owner_id, m.key
"""

_BLOCKS: LiteralString = """
SELECT user_id, scope, agent_id, label, content FROM blocks
WHERE tenant_id = %(tenant_id)s ORDER BY user_id, scope, agent_id, label
"""

_DECISIONS: LiteralString = f"""
SELECT {decision_columns(full=True)} FROM decisions AS d
WHERE d.tenant_id = %(tenant_id)s ORDER BY d.created_at, d.id
"""

_REEXAMINATIONS: LiteralString = f"""
SELECT {REEXAMINATION_COLUMNS} FROM reexaminations
WHERE tenant_id = %(tenant_id)s ORDER BY created_at, id
"""

_PUT_CARD_TYPE: LiteralString = """
INSERT INTO card_types (tenant_id, name, re_examinable, actions, decision_actions,
                        created_at, updated_at)
VALUES (%(tenant_id)s, %(name)s, %(re_examinable)s, %(actions)s, %(decision_actions)s,
        %(created_at)s, %(updated_at)s)
ON CONFLICT DO NOTHING
"""

_PUT_CONVERSATION: LiteralString = """
INSERT INTO conversations (tenant_id, provider, conversation_id, messages, message_count,
                           raw_events, raw_event_count, created_at, updated_at)
VALUES (%(tenant_id)s, %(provider)s, %(conversation_id)s, %(messages)s, %(message_count)s,
        %(raw_events)s, %(raw_event_count)s, %(created_at)s, %(updated_at)s)
ON CONFLICT DO NOTHING
"""

# The memory, its groundings and its CREATED event (the row as stored, as every
# audit event keeps it), in one statement; nothing at all when a key is taken.
# The fields of a memory an import stores, each in the column of its name.
_WRITTEN = named(MemoryRow, WRITTEN | OUTPUT)
# What an import keeps of a memory's history beside what a write gives: a write sets
# these itself. A text that needs no judging (an attestation this service's keys open)
# counts as read by the learned screens.
_HISTORY: LiteralString = (
    "created_at, updated_at, superseded_by, held_for_review, hold_reason, screened_hash"
)
_HISTORY_VALUES: LiteralString = (
    "%(created_at)s::timestamptz, %(updated_at)s::timestamptz, %(superseded_by)s::uuid,"
    " %(held_for_review)s::boolean, %(hold_reason)s::text,"
    f" CASE WHEN %(screened)s::boolean THEN {text_hash('%(key)s::text', '%(value)s::text')} END"
)
_PUT_MEMORY: LiteralString = f"""
WITH inserted AS (
    INSERT INTO memories ({insert_columns(MemoryRow)}, {_HISTORY})
    SELECT {insert_values(MemoryRow)}, {_HISTORY_VALUES}
    ON CONFLICT DO NOTHING
    RETURNING *
),
groundings AS (
    INSERT INTO memory_groundings (tenant_id, memory_id, ordinal, message_position,
                                   provider_message_id, start_character, end_character,
                                   quote, raw_event_index, raw_start_character,
                                   raw_end_character, metadata)
    SELECT i.tenant_id, i.id, g.ordinal, g.message_position, g.provider_message_id,
           g.start_character, g.end_character, g.quote, g.raw_event_index,
           g.raw_start_character, g.raw_end_character, g.metadata
    FROM inserted AS i
    CROSS JOIN jsonb_to_recordset(%(groundings)s::jsonb) AS g(
        ordinal smallint, message_position integer, provider_message_id text,
        start_character integer, end_character integer, quote text, raw_event_index integer,
        raw_start_character integer, raw_end_character integer, metadata jsonb)
),
created AS (
    INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id,
                               occurred_at, old_memory, new_memory)
    SELECT i.tenant_id, gen_random_uuid(), i.id, 'created', %(actor)s, clock_timestamp(),
           NULL, {snapshot("i")}
    FROM inserted AS i
)
SELECT count(*) AS n FROM inserted
"""

# Each memory by its primary key, and its replacement by its own.
_ACROSS_OWNERS: LiteralString = """
SELECT m.id FROM memories AS m
JOIN memories AS r ON r.tenant_id = m.tenant_id AND r.id = m.superseded_by
WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY(%(ids)s)
      AND (r.scope <> m.scope OR r.owner_id <> m.owner_id)
"""

# Nothing is inserted for a card type the tenant has not registered: the statement says
# so instead of failing on the foreign key.
_PUT_DECISION: LiteralString = """
WITH registered AS (
    SELECT EXISTS (SELECT FROM card_types
                   WHERE tenant_id = %(tenant_id)s AND name = %(card_type)s) AS yes
),
inserted AS (
    INSERT INTO decisions (tenant_id, id, run_id, agent_id, card_type, action, summary,
                           result, resolution_status, created_at, resolved_at)
    SELECT %(tenant_id)s, %(id)s, %(run_id)s, %(agent_id)s, %(card_type)s, %(action)s,
           %(summary)s, %(result)s, %(resolution_status)s, %(created_at)s, %(resolved_at)s
    FROM registered WHERE registered.yes
    ON CONFLICT DO NOTHING
    RETURNING tenant_id, id
),
reexaminations AS (
    INSERT INTO reexaminations (tenant_id, id, parent_decision_id, run_id, conviction_score,
                                notes, suggested_action, created_at)
    SELECT i.tenant_id, r.id, i.id, r.run_id, r.conviction_score, r.notes,
           r.suggested_action, r.created_at
    FROM inserted AS i
    CROSS JOIN jsonb_to_recordset(%(reexaminations)s::jsonb) AS r(
        id uuid, run_id text, conviction_score smallint, notes text, suggested_action text,
        created_at timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING id
)
SELECT (SELECT yes FROM registered) AS registered, (SELECT count(*) FROM inserted) AS n,
       ARRAY(SELECT id FROM reexaminations) AS reexamined
"""


@contextmanager
def _refused() -> Iterator[None]:
    """What the database refuses of a checked record (a constraint, a type) as the
    service's error, with the database's own first line."""
    try:
        yield
    except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:
        detail = (exc.diag.message_primary or str(exc)).splitlines()[0]
        raise FailedPrecondition(
            f"the database refuses it: {detail}", reason="RECORD_REFUSED"
        ) from exc


class PgTransfer(TransferRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = principal.tenant_id
        self._actor = principal.user_id

    def _params(self, **params: Any) -> dict[str, Any]:
        return {"tenant_id": self._tenant, **params}

    async def card_types(self) -> list[CardType]:
        rows = await fetch_all(self._conn, _CARD_TYPES, self._params())
        return [card_type_from_row(r) for r in rows]

    async def conversations(self) -> list[StoredConversation]:
        rows = await fetch_all(self._conn, _CONVERSATIONS, self._params())
        return [conversation_from_row(r) for r in rows]

    async def memories(self) -> list[MemoryRecord]:
        rows = await fetch_all(self._conn, _MEMORIES, self._params())
        return [MemoryRecord(memory_from_row(r), screened=r["screened"]) for r in rows]

    async def blocks(self) -> list[UserBlock]:
        rows = await fetch_all(self._conn, _BLOCKS, self._params())
        return [_user_block(r) for r in rows]

    async def decisions(self) -> list[DecisionRecord]:
        held: dict[uuid.UUID, list[Reexamination]] = {}
        for row in await fetch_all(self._conn, _REEXAMINATIONS, self._params()):
            item = reexamination_from_row(row)
            held.setdefault(item.parent_decision_id, []).append(item)
        rows = await fetch_all(self._conn, _DECISIONS, self._params())
        return [
            DecisionRecord(d, tuple(held.get(d.id, ())))
            for d in (decision_from_row(r) for r in rows)
        ]

    async def put_card_type(self, card_type: CardType) -> bool:
        params = self._params(
            name=card_type.name,
            re_examinable=card_type.re_examinable.value,
            actions=list(card_type.actions),
            decision_actions=list(card_type.decision_actions),
            created_at=card_type.created_at,
            updated_at=card_type.updated_at,
        )
        with _refused():
            return await execute(self._conn, _PUT_CARD_TYPE, params) > 0

    async def put_conversation(self, conversation: StoredConversation) -> bool:
        c = conversation.conversation
        params = self._params(
            provider=c.provider,
            conversation_id=c.conversation_id,
            created_at=conversation.created_at,
            updated_at=conversation.updated_at,
            **snapshot_columns(c),
        )
        with _refused():
            return await execute(self._conn, _PUT_CONVERSATION, params) > 0

    async def put_memory(self, record: MemoryRecord) -> bool:
        """Every column a write gives, and the copy's history, from the memory's field
        of the same name."""
        memory = record.memory
        groundings = [
            {**dataclasses.asdict(g), "metadata": dict(g.metadata), "ordinal": i}
            for i, g in enumerate(memory.groundings)
        ]
        params = self._params(
            **params_of(memory, _WRITTEN),
            scope=memory.owner.scope.value,
            owner_id=memory.owner.id,
            ttl=None,
            groundings=Jsonb(groundings),
            actor=self._actor,
            screened=record.screened,
        )
        with _refused():
            row = await fetch_one(self._conn, _PUT_MEMORY, params)
        return bool(row and row["n"])

    async def superseded_across_owners(self, ids: list[uuid.UUID]) -> list[uuid.UUID]:
        rows = await fetch_all(self._conn, _ACROSS_OWNERS, self._params(ids=ids))
        return [row["id"] for row in rows]

    async def put_block(self, block: UserBlock, *, keep: int) -> bool:
        # No index model: the block's lines have no vectors yet, the indexer embeds them.
        blocks = PgBlocks(self._conn, Principal(self._tenant, block.user_id), None)
        with _refused():
            outcome = await blocks.write(block.key, block.content, expected=None, keep=keep)
        return outcome.written is not None

    async def put_decision(self, record: DecisionRecord) -> bool:
        d = record.decision
        params = self._params(
            id=d.id,
            run_id=d.run_id,
            agent_id=d.agent_id,
            card_type=d.card_type,
            action=d.action,
            summary=d.summary,
            result=Jsonb(dict(d.result or {})),
            resolution_status=d.resolution_status.value,
            created_at=d.created_at,
            resolved_at=d.resolved_at,
            reexaminations=Jsonb([_reexamination_json(r) for r in record.reexaminations]),
        )
        with _refused():
            row = await fetch_one(self._conn, _PUT_DECISION, params)
        assert row is not None  # the statement always answers one row
        if not row["registered"]:
            raise FailedPrecondition(
                f"card type {d.card_type!r} is not registered: a card_type record must "
                "come before the decisions that use it",
                reason="CARD_TYPE_NOT_REGISTERED",
                metadata={"card_type": d.card_type},
            )
        if row["n"]:
            kept = set(row["reexamined"])
            for i, item in enumerate(record.reexaminations):
                if item.id not in kept:
                    # Its id, or its run's one re-examination, is another's in the tenant.
                    raise AlreadyExists(
                        f"reexaminations[{i}]: the tenant holds a re-examination of run "
                        f"{item.run_id!r} or with id {item.id} already, of another decision",
                        reason="REEXAMINATION_ALREADY_RECORDED",
                        metadata={"run_id": item.run_id},
                    )
        return bool(row["n"])


def _user_block(row: Mapping[str, Any]) -> UserBlock:
    return UserBlock(row["user_id"], key_from_row(row), row["content"])


def _reexamination_json(item: Reexamination) -> dict[str, Any]:
    return {
        "id": str(item.id),
        "run_id": item.run_id,
        "conviction_score": item.conviction_score,
        "notes": item.notes,
        "suggested_action": item.suggested_action,
        "created_at": item.created_at.isoformat(),
    }
