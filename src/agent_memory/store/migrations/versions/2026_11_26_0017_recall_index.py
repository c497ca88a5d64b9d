"""Recall by meaning, indexed in the background: each archival line and memory keeps
its vector with the model that made it and a hash of the text it was made from, and
a lease while an indexer embeds it; each archival block keeps its speakers.

Vectors stored before this revision name no model: they are dropped, and the indexer
embeds those lines again with the model the server runs.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 23:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HASHED = {
    "archival_lines": "hashtextextended(content, 0)",
    "memories": "hashtextextended(key || E'\\n' || value, 0)",
}
# A line "Name: text" names its speaker (as the store's SPEAKER pattern, at this revision).
_SPEAKER = r"^\s*([[:upper:]][[:alnum:]'.-]*(?: [[:upper:]][[:alnum:]'.-]*){0,2}):\s"


def upgrade() -> None:
    op.execute("UPDATE archival_lines SET embedding = NULL WHERE embedding IS NOT NULL")
    op.add_column("memories", sa.Column("embedding", postgresql.ARRAY(sa.REAL()), nullable=True))
    for table, hashed in _HASHED.items():
        op.add_column(table, sa.Column("embedding_model", sa.Text(), nullable=True))
        op.add_column(table, sa.Column("embedded_hash", sa.BigInteger(), nullable=True))
        op.add_column(
            table, sa.Column("index_lease_until", sa.DateTime(timezone=True), nullable=True)
        )
        op.create_index(
            f"ix_{table}_unindexed",
            table,
            ["tenant_id"],
            postgresql_where=sa.text(f"embedded_hash IS DISTINCT FROM {hashed}"),
        )
        op.create_index(
            f"ix_{table}_embedding_model",
            table,
            ["embedding_model"],
            postgresql_where=sa.text("embedding_model IS NOT NULL"),
        )
    op.add_column(
        "archival_vocabulary",
        sa.Column(
            "speakers",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
    )
    op.execute(
        sa.text(
            """
            UPDATE archival_vocabulary AS v SET speakers = s.names
            FROM (
                SELECT tenant_id, user_id, scope, agent_id, array_agg(name ORDER BY name) AS names
                FROM (
                    SELECT tenant_id, user_id, scope, agent_id, name
                    FROM (
                        SELECT tenant_id, user_id, scope, agent_id,
                               substring(content FROM :speaker) AS name
                        FROM archival_lines
                    ) AS named
                    WHERE name IS NOT NULL
                    GROUP BY tenant_id, user_id, scope, agent_id, name
                    HAVING count(*) >= 2
                ) AS speaking
                GROUP BY tenant_id, user_id, scope, agent_id
            ) AS s
            WHERE (v.tenant_id, v.user_id, v.scope, v.agent_id)
                = (s.tenant_id, s.user_id, s.scope, s.agent_id)
            """
        ).bindparams(speaker=_SPEAKER)
    )


def downgrade() -> None:
    op.drop_column("archival_vocabulary", "speakers")
    for table in _HASHED:
        op.drop_index(f"ix_{table}_embedding_model", table_name=table)
        op.drop_index(f"ix_{table}_unindexed", table_name=table)
        op.drop_column(table, "index_lease_until")
        op.drop_column(table, "embedded_hash")
        op.drop_column(table, "embedding_model")
    op.drop_column("memories", "embedding")
