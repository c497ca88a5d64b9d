"""The planner keeps no statistics of the tenant column: it finds a tenant's rows by
the rest of their key, whatever it would guess of the tenant's size.

With statistics, a tenant the last ANALYZE did not see (a new one, on a database
whose few tenants all fit its list of common values) is guessed to hold one row. A
lookup by id then ties between the primary key and any index led by the tenant, and
the planner may take the latter: a read of every row of the tenant for one of them.
Without them, every tenant is guessed to hold a small share of the table, and the
index that names the row wins.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Every table distributed by tenant at this revision (store/distribution.py); a later
# table sets the same in its own migration (tests/e2e/test_tenant_routing.py checks).
_TABLES = (
    "memories",
    "active_sessions",
    "agent_runs",
    "agent_settings",
    "archival_lines",
    "archival_terms",
    "archival_vocabulary",
    "blocks",
    "card_types",
    "conversations",
    "extraction_jobs",
    "memory_events",
    "usage_records",
    "workspace_settings",
    "block_versions",
    "decisions",
    "memory_groundings",
    "reexaminations",
)


def upgrade() -> None:
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN tenant_id SET STATISTICS 0")


def downgrade() -> None:
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN tenant_id SET STATISTICS -1")
