"""Card types, decisions and re-examinations. No statement here writes a decision's
result after it is recorded."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    ReExaminable,
    Reexamination,
    ResolutionStatus,
)
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import insert_columns, insert_values, output
from agent_memory.store.models import CardTypeRow, DecisionRow, ReexaminationRow
from agent_memory.store.repositories import DecisionRepository, Lock
from agent_memory.store.sql import (
    Connection,
    Row,
    as_optional_time,
    as_time,
    as_uuid,
    execute,
    fetch_all,
    fetch_one,
)

CARD_TYPE_COLUMNS = output(CardTypeRow, "")
_PUT_CARD_TYPE: LiteralString = f"""
INSERT INTO card_types ({insert_columns(CardTypeRow)})
VALUES ({insert_values(CardTypeRow)})
ON CONFLICT (tenant_id, name) DO UPDATE
SET re_examinable = excluded.re_examinable, actions = excluded.actions,
    decision_actions = excluded.decision_actions, updated_at = clock_timestamp()
RETURNING {CARD_TYPE_COLUMNS}, created_at = updated_at AS created
"""
_GET_CARD_TYPE: LiteralString = f"""
SELECT {CARD_TYPE_COLUMNS} FROM card_types WHERE tenant_id = %(tenant_id)s AND name = %(name)s
"""


def decision_columns(*, full: bool) -> LiteralString:
    """A decision ``d`` (its result only when ``full``) with its newest conviction score
    and how many re-examinations it has."""
    return output(DecisionRow, "d", full=full) + _REEXAMINED


_REEXAMINED: LiteralString = """,
    (SELECT r.conviction_score FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id
     ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS latest_conviction_score,
    (SELECT count(*) FROM reexaminations AS r
     WHERE r.tenant_id = %(tenant_id)s AND r.parent_decision_id = d.id) AS reexamination_count"""
DECISION_COLUMNS = decision_columns(full=False)
_WITH_RESULT: LiteralString = f"SELECT {decision_columns(full=True)} FROM decisions AS d"
_WITHOUT_RESULT: LiteralString = f"SELECT {DECISION_COLUMNS} FROM decisions AS d"

_GET: LiteralString = _WITH_RESULT + " WHERE d.tenant_id = %(tenant_id)s AND d.id = %(id)s"
_GETS: dict[Lock | None, LiteralString] = {
    None: _GET,
    "share": _GET + " FOR SHARE OF d",
    "update": _GET + " FOR UPDATE OF d",
}
_FIND_BY_RUN: LiteralString = (
    _WITH_RESULT + " WHERE d.tenant_id = %(tenant_id)s AND d.run_id = %(run_id)s"
)
_RECENT_WHERE: LiteralString = """
WHERE d.tenant_id = %(tenant_id)s AND d.agent_id = %(agent_id)s
  AND (%(card_type)s::text IS NULL OR d.card_type = %(card_type)s)
ORDER BY d.created_at DESC, d.id DESC
LIMIT %(limit)s
"""
_RECENT: dict[bool, LiteralString] = {
    True: _WITH_RESULT + _RECENT_WHERE,
    False: _WITHOUT_RESULT + _RECENT_WHERE,
}
_INSERT: LiteralString = f"""
WITH d AS (
    INSERT INTO decisions ({insert_columns(DecisionRow)})
    VALUES ({insert_values(DecisionRow)})
    ON CONFLICT (tenant_id, run_id) DO NOTHING
    RETURNING *
)
SELECT {output(DecisionRow, "d", full=True)}, NULL::smallint AS latest_conviction_score,
       0 AS reexamination_count
FROM d
"""
_SET_RESOLUTION: LiteralString = """
UPDATE decisions
SET resolution_status = %(status)s::text,
    resolved_at = CASE WHEN %(status)s::text = 'open' THEN NULL ELSE clock_timestamp() END
WHERE tenant_id = %(tenant_id)s AND id = %(id)s
"""
REEXAMINATION_COLUMNS = output(ReexaminationRow, "")
_INSERT_REEXAMINATION: LiteralString = f"""
INSERT INTO reexaminations ({insert_columns(ReexaminationRow)})
VALUES ({insert_values(ReexaminationRow)})
ON CONFLICT (tenant_id, run_id) DO NOTHING
RETURNING {REEXAMINATION_COLUMNS}
"""
_FIND_REEXAMINATION: LiteralString = f"""
SELECT {REEXAMINATION_COLUMNS} FROM reexaminations
WHERE tenant_id = %(tenant_id)s AND run_id = %(run_id)s
"""
_REEXAMINATIONS: LiteralString = f"""
SELECT {REEXAMINATION_COLUMNS} FROM reexaminations
WHERE tenant_id = %(tenant_id)s AND parent_decision_id = %(id)s
ORDER BY created_at, id
"""


def card_type_from_row(row: Row) -> CardType:
    return CardType(
        name=row["name"],
        re_examinable=ReExaminable(row["re_examinable"]),
        actions=tuple(row["actions"] or ()),
        decision_actions=tuple(row["decision_actions"] or ()),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def decision_from_row(row: Mapping[str, Any]) -> Decision:
    """A decision from a row of the select above, or from its JSON."""
    result = row.get("result")
    return Decision(
        id=as_uuid(row["id"]),
        run_id=row["run_id"],
        agent_id=row["agent_id"],
        card_type=row["card_type"],
        action=row["action"],
        summary=row["summary"],
        result=dict(result) if result is not None else None,
        resolution_status=ResolutionStatus(row["resolution_status"]),
        created_at=as_time(row["created_at"]),
        resolved_at=as_optional_time(row["resolved_at"]),
        latest_conviction_score=row["latest_conviction_score"],
        reexamination_count=int(row["reexamination_count"]),
    )


def reexamination_from_row(row: Row) -> Reexamination:
    return Reexamination(
        id=row["id"],
        parent_decision_id=row["parent_decision_id"],
        run_id=row["run_id"],
        conviction_score=row["conviction_score"],
        notes=row["notes"],
        suggested_action=row["suggested_action"],
        created_at=row["created_at"],
    )


class PgDecisions(DecisionRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = {"tenant_id": principal.tenant_id}

    async def put_card_type(self, card_type: CardType) -> tuple[CardType, bool]:
        row = await fetch_one(
            self._conn,
            _PUT_CARD_TYPE,
            {
                **self._tenant,
                "name": card_type.name,
                "re_examinable": card_type.re_examinable.value,
                "actions": list(card_type.actions),
                "decision_actions": list(card_type.decision_actions),
            },
        )
        assert row is not None  # an upsert returns its row
        return card_type_from_row(row), bool(row["created"])

    async def get_card_type(self, name: str) -> CardType | None:
        row = await fetch_one(self._conn, _GET_CARD_TYPE, {**self._tenant, "name": name})
        return card_type_from_row(row) if row else None

    async def insert(self, decision: NewDecision) -> Decision | None:
        row = await fetch_one(
            self._conn,
            _INSERT,
            {
                **self._tenant,
                "id": uuid.uuid4(),
                "run_id": decision.run_id,
                "agent_id": decision.agent_id,
                "card_type": decision.card_type,
                "action": decision.action,
                "summary": decision.summary,
                "result": Jsonb(dict(decision.result)),
            },
        )
        return decision_from_row(row) if row else None

    async def get(self, decision_id: uuid.UUID, *, lock: Lock | None = None) -> Decision | None:
        row = await fetch_one(self._conn, _GETS[lock], {**self._tenant, "id": decision_id})
        return decision_from_row(row) if row else None

    async def find_by_run(self, run_id: str) -> Decision | None:
        row = await fetch_one(self._conn, _FIND_BY_RUN, {**self._tenant, "run_id": run_id})
        return decision_from_row(row) if row else None

    async def recent(
        self, agent_id: str, *, limit: int, with_result: bool, card_type: str | None = None
    ) -> list[Decision]:
        params = {**self._tenant, "agent_id": agent_id, "card_type": card_type, "limit": limit}
        rows = await fetch_all(self._conn, _RECENT[with_result], params)
        return [decision_from_row(r) for r in rows]

    async def set_resolution(self, decision_id: uuid.UUID, status: ResolutionStatus) -> None:
        params = {**self._tenant, "id": decision_id, "status": status.value}
        await execute(self._conn, _SET_RESOLUTION, params)

    async def insert_reexamination(self, item: NewReexamination) -> Reexamination | None:
        row = await fetch_one(
            self._conn,
            _INSERT_REEXAMINATION,
            {
                **self._tenant,
                "id": uuid.uuid4(),
                "parent_decision_id": item.parent_decision_id,
                "run_id": item.run_id,
                "conviction_score": item.conviction_score,
                "notes": item.notes,
                "suggested_action": item.suggested_action,
            },
        )
        return reexamination_from_row(row) if row else None

    async def find_reexamination_by_run(self, run_id: str) -> Reexamination | None:
        row = await fetch_one(self._conn, _FIND_REEXAMINATION, {**self._tenant, "run_id": run_id})
        return reexamination_from_row(row) if row else None

    async def reexaminations(self, decision_id: uuid.UUID) -> list[Reexamination]:
        rows = await fetch_all(self._conn, _REEXAMINATIONS, {**self._tenant, "id": decision_id})
        return [reexamination_from_row(r) for r in rows]
