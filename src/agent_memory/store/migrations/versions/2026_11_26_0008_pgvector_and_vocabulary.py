"""pgvector where the server has it, and each archival block's vocabulary for recall.

The extension used to be created by the first recall that needed it, on the
request path; here it is created once, by whoever migrates. Where the server does
not ship pgvector (or the migrating role may not create it) recall stays lexical
and the migration says so. Every block with lines gets a vocabulary, an empty one
when its lines hold only stop words, as a block written from now on does.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 03:30:00
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")


def _install_pgvector() -> None:
    bind = op.get_bind()
    available = bind.exec_driver_sql(
        "SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector')"
    ).scalar()
    if not available:
        log.info("pgvector is not available on this server: recall stays lexical")
        return
    try:
        with bind.begin_nested():
            bind.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
    except sa.exc.DBAPIError as exc:
        log.info("pgvector could not be installed (%s): recall stays lexical", exc.orig)


def upgrade() -> None:
    _install_pgvector()
    op.create_table(
        "archival_vocabulary",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("lexemes", postgresql.ARRAY(sa.Text()), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "user_id", "scope", "agent_id", name=op.f("pk_archival_vocabulary")
        ),
    )
    op.execute(
        """
        INSERT INTO archival_vocabulary (tenant_id, user_id, scope, agent_id, lexemes)
        SELECT l.tenant_id, l.user_id, l.scope, l.agent_id,
               coalesce(array_agg(DISTINCT u.lexeme) FILTER (WHERE u.lexeme IS NOT NULL),
                        '{}')
        FROM archival_lines AS l LEFT JOIN LATERAL unnest(l.lexemes) AS u(lexeme) ON true
        GROUP BY l.tenant_id, l.user_id, l.scope, l.agent_id
        """
    )


def downgrade() -> None:
    op.drop_table("archival_vocabulary")
    # The extension stays: other objects of the database may use it.
