"""Each archival line's ordinal, and each block's line count and total length.

Recall used to number the non-empty lines of the searched blocks (for neighbours)
and count and measure them (for BM25) on every call; with these kept at write time
it no longer computes them.

Not compatible with replicas of the code before it, which insert lines without an
ordinal: stop them before upgrading (docs/scaling.md).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 05:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("archival_lines", sa.Column("ordinal", sa.Integer(), nullable=True))
    op.execute(
        """
        UPDATE archival_lines AS l SET ordinal = n.ordinal
        FROM (
            SELECT tenant_id, user_id, scope, agent_id, line_number,
                   row_number() OVER (PARTITION BY tenant_id, user_id, scope, agent_id
                                      ORDER BY line_number) AS ordinal
            FROM archival_lines
        ) AS n
        WHERE (l.tenant_id, l.user_id, l.scope, l.agent_id, l.line_number)
            = (n.tenant_id, n.user_id, n.scope, n.agent_id, n.line_number)
        """
    )
    op.alter_column("archival_lines", "ordinal", nullable=False)
    op.create_index(
        "ix_archival_lines_ordinal",
        "archival_lines",
        ["tenant_id", "user_id", "scope", "agent_id", "ordinal"],
    )
    op.add_column(
        "archival_vocabulary",
        sa.Column("line_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
    )
    op.add_column(
        "archival_vocabulary",
        sa.Column("lexeme_total", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
    )
    op.execute(
        """
        UPDATE archival_vocabulary AS v SET line_count = s.lines, lexeme_total = s.total
        FROM (
            SELECT tenant_id, user_id, scope, agent_id, count(*) AS lines,
                   sum(length(lexemes)) AS total
            FROM archival_lines
            GROUP BY tenant_id, user_id, scope, agent_id
        ) AS s
        WHERE (v.tenant_id, v.user_id, v.scope, v.agent_id)
            = (s.tenant_id, s.user_id, s.scope, s.agent_id)
        """
    )


def downgrade() -> None:
    op.drop_column("archival_vocabulary", "lexeme_total")
    op.drop_column("archival_vocabulary", "line_count")
    op.drop_index("ix_archival_lines_ordinal", table_name="archival_lines")
    op.drop_column("archival_lines", "ordinal")
