"""Ranking inside PostgreSQL: BM25 over stemmed lexemes, with typo-tolerant terms and
the neighbouring lines of a block as context.

* Terms are the English-stemmed lexemes of the query (``to_tsvector('english')``),
  the same analysis the lines get when they are written.
* Each term is weighted by its inverse document frequency over the lines being
  searched (the caller's blocks), so names and rare words count most.
* A query term that occurs nowhere is matched to close lexemes by trigram
  similarity, weighted by that similarity: typos and name variants still hit.
* Short lines need little length normalisation (b = 0.4).
* In a conversation the answer often sits next to the line that names the
  topic, so each line also gets half the score of its best neighbour (a quarter
  from two lines away).
* The score is normalised by what a typical line holding every query term once
  would get (the sum of the terms' weights) and capped at 1, so it means the
  same for every query: 1 is "all of it is here", 0.3 "a third of the evidence".

With an embedder and pgvector the lexical score is blended with the cosine
similarity of the line's embedding to the query's (clipped at 0):
``(1 - w) * lexical + w * similarity``, over the same lines, so a line that shares
no word with the query but means the same is a candidate too. A line without a
usable embedding (written while the embedder failed, or by another model) and a
memory row keep their lexical score.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import Boolean, Float, Integer, String

from agent_memory.domain.memory import Scope
from agent_memory.domain.recall import RecallMatch

K1 = 1.2
B = 0.4
NEIGHBOUR_WEIGHT = 0.5
FUZZY_MIN_SIMILARITY = 0.4

_LEXICAL_SQL = f"""
WITH terms AS (
    SELECT DISTINCT u.lexeme AS term
    FROM unnest(to_tsvector('english', :query)) AS u
),
docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, '' AS workspace_id, l.line_number,
           NULL::uuid AS memory_id, l.content, l.lexemes,
           row_number() OVER (PARTITION BY l.scope, l.agent_id ORDER BY l.line_number) AS ord
    FROM archival_lines AS l
    WHERE l.tenant_id = :tenant_id AND l.user_id = :user_id
      AND ((l.scope = 'user' AND l.agent_id = '')
           OR (l.scope = 'agent' AND l.agent_id = :agent_id))
    UNION ALL
    SELECT 'memory', m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END,
           0, m.id, m.key || ': ' || m.value,
           to_tsvector('english', m.key || ' ' || m.value),
           row_number() OVER (ORDER BY m.id)
    FROM memories AS m
    WHERE :include_memories AND m.tenant_id = :tenant_id
      AND ((m.scope = 'agent' AND m.owner_id = :agent_id)
           OR (m.scope = 'workspace' AND m.owner_id = :workspace_id))
),
stats AS (
    SELECT count(*)::float8 AS n, greatest(avg(length(lexemes)), 1)::float8 AS avgdl
    FROM docs
),
query_terms AS (
    SELECT coalesce(array_agg(term), '{{}}') AS terms,
           coalesce(string_agg(quote_literal(term), ' | '), '')::tsquery AS tsq
    FROM terms
),
exact_hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, u.lexeme AS term, 1.0::float8 AS weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN query_terms AS q
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    WHERE d.lexemes @@ q.tsq AND u.lexeme = ANY (q.terms)
),
missing AS (
    SELECT term FROM terms
    WHERE term NOT IN (SELECT DISTINCT term FROM exact_hits) AND length(term) >= 4
),
vocab AS (
    SELECT DISTINCT u.lexeme
    FROM docs AS d, unnest(d.lexemes) AS u
    WHERE EXISTS (SELECT 1 FROM missing)
),
fuzzy AS (
    SELECT m.term, v.lexeme, similarity(v.lexeme, m.term)::float8 AS weight
    FROM missing AS m, vocab AS v
    WHERE similarity(v.lexeme, m.term) >= {FUZZY_MIN_SIMILARITY}
),
fuzzy_hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, f.term, f.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN fuzzy AS f ON f.lexeme = u.lexeme
    WHERE EXISTS (SELECT 1 FROM fuzzy)
),
hits AS (
    SELECT * FROM exact_hits
    UNION ALL
    SELECT * FROM fuzzy_hits
),
df AS (
    SELECT term, count(DISTINCT (kind, scope, agent_id, ord))::float8 AS df
    FROM hits GROUP BY term
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df ON df.term = t.term CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
),
scored AS (
    SELECT h.kind, h.scope, h.agent_id, h.ord,
           sum(i.idf * h.weight * h.tf * ({K1} + 1)
               / (h.tf + {K1} * (1 - {B} + {B} * h.dl / s.avgdl))) AS own
    FROM hits AS h JOIN idf AS i USING (term) CROSS JOIN stats AS s
    GROUP BY h.kind, h.scope, h.agent_id, h.ord
),
context AS (
    SELECT sc.kind, sc.scope, sc.agent_id, sc.ord + v.step AS ord, max(sc.own * v.share) AS near
    FROM scored AS sc, (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
    WHERE sc.kind = 'line'
    GROUP BY sc.kind, sc.scope, sc.agent_id, sc.ord + v.step
),
combined AS (
    SELECT coalesce(sc.kind, cx.kind) AS kind, coalesce(sc.scope, cx.scope) AS scope,
           coalesce(sc.agent_id, cx.agent_id) AS agent_id, coalesce(sc.ord, cx.ord) AS ord,
           coalesce(sc.own, 0) + {NEIGHBOUR_WEIGHT} * coalesce(cx.near, 0) AS points
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
),
ranked AS (
    SELECT d.kind, d.scope, d.agent_id, d.workspace_id, d.line_number, d.memory_id,
           d.content, c.points / nullif(b.top, 0) AS raw
    FROM combined AS c
    JOIN docs AS d
      ON (d.kind, d.scope, d.agent_id, d.ord) = (c.kind, c.scope, c.agent_id, c.ord)
    CROSS JOIN best AS b
)
SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
       least(1.0, raw) AS score
FROM ranked
WHERE raw > 0 AND least(1.0, raw) >= :min_score
ORDER BY raw DESC, kind, scope, agent_id, line_number, memory_id
LIMIT :limit
"""

_FINAL = """
SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
       least(1.0, raw) AS score
FROM ranked
WHERE raw > 0 AND least(1.0, raw) >= :min_score
ORDER BY raw DESC, kind, scope, agent_id, line_number, memory_id
LIMIT :limit
"""


def _hybrid_sql() -> str:
    """The lexical statement with each line's embedding carried along and blended in."""
    sql = _LEXICAL_SQL
    for old, new in (
        ("l.content, l.lexemes,", "l.content, l.lexemes, l.embedding,"),
        (
            "to_tsvector('english', m.key || ' ' || m.value),",
            "to_tsvector('english', m.key || ' ' || m.value), NULL::real[],",
        ),
    ):
        assert sql.count(old) == 1, old
        sql = sql.replace(old, new)
    head, tail = sql.split("ranked AS (")
    assert tail.endswith(_FINAL), "the final SELECT moved"
    return (
        head
        + """distances AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord,
           (d.embedding::vector <=> CAST(:query_embedding AS vector))::float8 AS distance
    FROM docs AS d
    WHERE d.embedding IS NOT NULL AND cardinality(d.embedding) = :dimensions
),
semantic AS (
    -- A zero vector has no direction: its distance is NaN and it says nothing.
    SELECT kind, scope, agent_id, ord, greatest(0, 1 - distance) AS near
    FROM distances
    WHERE distance <> 'NaN'::float8
),
lexical AS (
    SELECT c.kind, c.scope, c.agent_id, c.ord,
           least(1.0, coalesce(c.points / nullif(b.top, 0), 0))::float8 AS score
    FROM combined AS c CROSS JOIN best AS b
),
ranked AS (
    SELECT d.kind, d.scope, d.agent_id, d.workspace_id, d.line_number, d.memory_id, d.content,
           CASE WHEN s.near IS NULL THEN coalesce(x.score, 0)
                ELSE (1 - :weight) * coalesce(x.score, 0) + :weight * s.near
           END AS raw
    FROM docs AS d
    LEFT JOIN lexical AS x
      ON (x.kind, x.scope, x.agent_id, x.ord) = (d.kind, d.scope, d.agent_id, d.ord)
    LEFT JOIN semantic AS s
      ON (s.kind, s.scope, s.agent_id, s.ord) = (d.kind, d.scope, d.agent_id, d.ord)
    WHERE x.kind IS NOT NULL OR s.kind IS NOT NULL
)"""
        + _FINAL
    )


_PARAMS = (
    bindparam("query", type_=String),
    bindparam("tenant_id", type_=String),
    bindparam("user_id", type_=String),
    bindparam("agent_id", type_=String),
    bindparam("workspace_id", type_=String),
    bindparam("include_memories", type_=Boolean),
    bindparam("min_score", type_=Float),
    bindparam("limit", type_=Integer),
)
_RANK = text(_LEXICAL_SQL).bindparams(*_PARAMS)
_HYBRID = text(_hybrid_sql()).bindparams(
    *_PARAMS,
    bindparam("query_embedding", type_=String),
    bindparam("dimensions", type_=Integer),
    bindparam("weight", type_=Float),
)

_SCOPES = {"user": Scope.USER, "agent": Scope.AGENT, "workspace": Scope.WORKSPACE}


async def rank(
    session: AsyncSession,
    *,
    tenant_id: str,
    user_id: str,
    agent_id: str,
    query: str,
    limit: int,
    min_score: float,
    include_memories: bool,
    workspace_id: str | None,
    query_embedding: list[float] | None = None,
    embedding_weight: float = 0.3,
) -> AsyncIterator[RecallMatch]:
    """Matches best first, yielded as PostgreSQL returns them.

    With ``query_embedding`` (only where pgvector is installed) the ranking is hybrid.
    """
    params: dict[str, object] = {
        "query": query,
        "tenant_id": tenant_id,
        "user_id": user_id,
        "agent_id": agent_id,
        "workspace_id": workspace_id or "",
        "include_memories": include_memories,
        "min_score": min_score,
        "limit": limit,
    }
    statement = _RANK
    if query_embedding:
        statement = _HYBRID
        params["query_embedding"] = "[" + ",".join(repr(float(x)) for x in query_embedding) + "]"
        params["dimensions"] = len(query_embedding)
        params["weight"] = embedding_weight
    # At most 100 rows, all ranked before the first is known: one round trip,
    # no server-side cursor. The caller streams them on as they are read.
    result = await session.execute(statement, params)
    for row in result:
        yield RecallMatch(
            content=row.content,
            score=float(row.score),
            scope=_SCOPES[row.scope],
            agent_id=row.agent_id,
            line_number=int(row.line_number),
            memory_id=row.memory_id if isinstance(row.memory_id, uuid.UUID) else None,
            workspace_id=row.workspace_id,
        )


async def pgvector_available(session: AsyncSession) -> bool:
    """Whether this PostgreSQL can load pgvector (for embedding-assisted recall)."""
    found = await session.scalar(
        text("SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')")
    )
    return bool(found)


async def pgvector_installed(session: AsyncSession) -> bool:
    """Whether pgvector is installed in this database."""
    found = await session.scalar(
        text("SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')")
    )
    return bool(found)


async def install_pgvector(session: AsyncSession) -> None:
    """Install pgvector in this database (it must be available on the server)."""
    await session.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
