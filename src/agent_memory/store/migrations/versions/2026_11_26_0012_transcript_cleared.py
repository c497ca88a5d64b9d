"""Empty the transcripts of extraction jobs that have ended.

A job needs its transcript only until its pass has run, and a transcript may hold the
credentials of the conversation it records. Jobs now empty theirs when they end; this
empties those of jobs that ended before. Jobs still queued keep theirs: they run with
it redacted, and empty it when they end. The column stays NOT NULL (empty, not NULL).

Downgrading changes nothing: the transcripts are gone.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 14:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("UPDATE extraction_jobs SET transcript = '' WHERE status = 'done'")


def downgrade() -> None:
    pass
