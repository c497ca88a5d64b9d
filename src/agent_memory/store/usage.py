"""The usage ledger: what each model call cost, by synthetic session id."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import LiteralString

from agent_memory.domain.extraction import ExtractionOutcome, Usage, UsageRecord, UsageReport
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import insert_columns, insert_values, output
from agent_memory.store.models import UsageRecordRow
from agent_memory.store.repositories import UsageRepository
from agent_memory.store.sql import Connection, execute, fetch_all

MAX_RECORDS = 1000

_RECORD: LiteralString = f"""
INSERT INTO usage_records ({insert_columns(UsageRecordRow)})
VALUES ({insert_values(UsageRecordRow)})
"""

# The records (at most MAX_RECORDS, oldest first) and, on every row, the totals over
# every match; a row of NULL record columns carries the totals when nothing matched.
# ``matched`` is inlined into both uses (not copied whole), and the time bounds are
# ranges even when absent, so one generic plan can use the time index for both.
_REPORT: LiteralString = f"""
WITH matched AS NOT MATERIALIZED (
    SELECT {output(UsageRecordRow, "")}
    FROM usage_records
    WHERE tenant_id = %(tenant_id)s
      AND starts_with(synthetic_session_id, %(prefix)s)
      AND recorded_at >= coalesce(%(start)s::timestamptz, '-infinity')
      AND recorded_at < coalesce(%(end)s::timestamptz, 'infinity')
),
totals AS (
    SELECT coalesce(sum(input_tokens), 0) AS total_input_tokens,
           coalesce(sum(output_tokens), 0) AS total_output_tokens,
           coalesce(sum(cost_usd), 0) AS total_cost_usd
    FROM matched
)
SELECT {output(UsageRecordRow, "r")},
       t.total_input_tokens, t.total_output_tokens, t.total_cost_usd
FROM totals AS t
LEFT JOIN LATERAL (
    SELECT * FROM matched ORDER BY recorded_at, id LIMIT {MAX_RECORDS}
) AS r ON true
ORDER BY r.recorded_at, r.id
"""


class PgUsage(UsageRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
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
        await execute(
            self._conn,
            _RECORD,
            {
                "tenant_id": self._tenant,
                "synthetic_session_id": synthetic_session_id,
                "agent_id": agent_id,
                "model": model,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cost_usd": Decimal(str(round(usage.cost_usd, 8))),
                "outcome": outcome.value,
            },
        )

    async def report(
        self, prefix: str, *, start: datetime | None, end: datetime | None
    ) -> UsageReport:
        rows = await fetch_all(
            self._conn,
            _REPORT,
            {"tenant_id": self._tenant, "prefix": prefix, "start": start, "end": end},
        )
        totals = rows[0]
        return UsageReport(
            records=[
                UsageRecord(
                    id=r["id"],
                    synthetic_session_id=r["synthetic_session_id"],
                    agent_id=r["agent_id"],
                    model=r["model"],
                    input_tokens=r["input_tokens"],
                    output_tokens=r["output_tokens"],
                    cost_usd=float(r["cost_usd"]),
                    outcome=ExtractionOutcome(r["outcome"]),
                    recorded_at=r["recorded_at"],
                )
                for r in rows
                if r["id"] is not None
            ],
            total_input_tokens=int(totals["total_input_tokens"]),
            total_output_tokens=int(totals["total_output_tokens"]),
            total_cost_usd=float(totals["total_cost_usd"]),
        )
