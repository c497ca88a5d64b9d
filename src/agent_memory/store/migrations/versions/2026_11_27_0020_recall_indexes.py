"""Recall bounded by indexes: each archival block's terms, with how many of its lines hold
each and their ordinals (in place of the block's vocabulary array), a GIN index led by
the owner over the memories' lexemes, and vectors stored as pgvector's ``halfvec``
where the server has pgvector.

Each block's terms are counted from its lines as they are. The vector columns keep
their values, converted; the approximate indexes over them are built by the indexer,
one per model (see store/vector_indexes.py), not here.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As store/search.py writes them, at this revision.
_MEMORY_OWNER = "((((tenant_id || chr(31)) || scope) || chr(31)) || owner_id)"
_MEMORY_LEXEMES = "to_tsvector('english'::regconfig, (key::text || ' ') || value)"
_VECTORS = ("archival_lines", "memories")


def _pgvector() -> bool:
    found = op.get_bind().exec_driver_sql(
        "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector')"
    )
    return bool(found.scalar())


def upgrade() -> None:
    # btree_gin is a trusted extension (PostgreSQL 13+), shipped with pg_trgm in contrib:
    # it lets a GIN index lead with the owner before the lexemes.
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    op.create_table(
        "archival_terms",
        sa.Column("tenant_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("agent_id", sa.String(length=255), nullable=False),
        sa.Column("lexeme", sa.Text(collation="C"), nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("ordinals", postgresql.ARRAY(sa.Integer()), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "user_id", "scope", "agent_id", "lexeme", name=op.f("pk_archival_terms")
        ),
    )
    op.execute(
        """
        INSERT INTO archival_terms (tenant_id, user_id, scope, agent_id, lexeme, lines,
                                    ordinals)
        SELECT l.tenant_id, l.user_id, l.scope, l.agent_id, u.lexeme, count(*),
               array_agg(l.ordinal ORDER BY l.ordinal)
        FROM archival_lines AS l, unnest(l.lexemes) AS u
        GROUP BY l.tenant_id, l.user_id, l.scope, l.agent_id, u.lexeme
        """
    )
    op.drop_column("archival_vocabulary", "lexemes")
    op.create_index(
        "ix_memories_search",
        "memories",
        [sa.text(_MEMORY_OWNER), sa.text(_MEMORY_LEXEMES)],
        postgresql_using="gin",
        postgresql_where=sa.text("superseded_by IS NULL"),
    )
    if _pgvector():
        for table in _VECTORS:
            op.execute(
                f"ALTER TABLE {table} ALTER COLUMN embedding TYPE halfvec USING embedding::halfvec"
            )


def downgrade() -> None:
    if _pgvector():
        for table in _VECTORS:
            for (name,) in op.get_bind().exec_driver_sql(
                "SELECT indexname FROM pg_indexes WHERE tablename = %(t)s"
                " AND indexdef LIKE '%%USING hnsw%%'",
                {"t": table},
            ):
                op.execute(f'DROP INDEX "{name}"')
            op.execute(
                f"ALTER TABLE {table} ALTER COLUMN embedding TYPE real[] USING embedding::real[]"
            )
    op.drop_index("ix_memories_search", table_name="memories")
    op.add_column(
        "archival_vocabulary",
        sa.Column(
            "lexemes",
            postgresql.ARRAY(sa.Text()),
            server_default=sa.text("'{}'"),
            nullable=False,
        ),
    )
    op.execute(
        """
        UPDATE archival_vocabulary AS v SET lexemes = t.lexemes
        FROM (
            SELECT tenant_id, user_id, scope, agent_id, array_agg(lexeme) AS lexemes
            FROM archival_terms GROUP BY tenant_id, user_id, scope, agent_id
        ) AS t
        WHERE (v.tenant_id, v.user_id, v.scope, v.agent_id)
            = (t.tenant_id, t.user_id, t.scope, t.agent_id)
        """
    )
    op.alter_column("archival_vocabulary", "lexemes", server_default=None)
    op.drop_table("archival_terms")
