"""Ranking inside PostgreSQL: BM25 over stemmed lexemes, with typo-tolerant terms and
the neighbouring lines of a block as context. One statement.

* Terms are the English-stemmed lexemes of the query (``to_tsvector('english')``),
  the same analysis the lines get when they are written.
* Each term is weighted by its inverse document frequency over the lines being
  searched (the caller's blocks), so names and rare words count most.
* A query term that occurs nowhere is matched to close lexemes by trigram
  similarity, weighted by that similarity: typos and name variants still hit.
  The candidates are the searched blocks' vocabularies, kept with each write.
* Short lines need little length normalisation (b = 0.4).
* In a conversation the answer often sits next to the line that names the
  topic, so each line also gets half the score of its best neighbour (a quarter
  from two lines away), neighbours being the block's non-empty lines in order.
* The score is normalised by what a typical line holding every query term once
  would get (the sum of the terms' weights) and capped at 1, so it means the
  same for every query: 1 is "all of it is here", 0.3 "a third of the evidence".

With an embedding of the query (an embedder, and pgvector) the lexical score is
blended with the cosine similarity of each line's embedding (clipped at 0):
``(1 - w) * lexical + w * similarity``, over the same lines, so a line that shares
no word with the query but means the same is a candidate too. A line without a
usable embedding and a memory row keep their lexical score.

Lexical ranking needs no per-block statistics from the lines: the blocks' line
counts, total lengths and vocabularies are kept with each write. It scans the
searched blocks' lines (at most a block's worth each, by index) for the query's
terms and reads the text of the best few at the end. Ranking by meaning compares
every line's embedding.

The statement's parameters are prefixed ``rank_`` (but for the caller's
``tenant_id``, ``user_id`` and ``agent_id``) so it can be part of a larger one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, LiteralString

from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Scope
from agent_memory.domain.recall import RankQuery, RecallMatch
from agent_memory.store.memories import current
from agent_memory.store.repositories import RecallRepository
from agent_memory.store.sql import Connection, as_uuid, fetch_all, fetch_one

K1 = 1.2
B = 0.4
NEIGHBOUR_WEIGHT = 0.5
FUZZY_MIN_SIMILARITY = 0.4


def _searched(a: LiteralString) -> LiteralString:
    """Rows of the caller's user block and of the agent's block (lines or vocabularies)."""
    return f"""
    {a}.tenant_id = %(tenant_id)s AND {a}.user_id = %(user_id)s
      AND (({a}.scope = 'user' AND {a}.agent_id = '')
           OR ({a}.scope = 'agent' AND {a}.agent_id = %(agent_id)s))"""


_TERMS: LiteralString = (
    """
terms AS (
    SELECT DISTINCT u.lexeme AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
query_terms AS (
    SELECT coalesce(array_agg(term), '{}') AS terms,
           coalesce(string_agg(quote_literal(term), ' | '), '')::tsquery AS tsq
    FROM terms
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.lexemes, b.line_count, b.lexeme_total
    FROM archival_vocabulary AS b
    WHERE"""
    + _searched("b")
    + """
)"""
)


def _memories(embeddings: bool) -> LiteralString:
    """The memories searched with the lines (only when asked for)."""
    embedding: LiteralString = ", NULL::real[] AS embedding" if embeddings else ""
    return f"""
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id, to_tsvector('english', m.key || ' ' || m.value) AS lexemes,
           row_number() OVER (ORDER BY m.id) AS ord{embedding}
    FROM memories AS m
    WHERE %(rank_include_memories)s AND m.tenant_id = %(tenant_id)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(rank_workspace_id)s))
      AND {current("m")}
)"""


# BM25 statistics over the searched lines and memories: how many, and how long on average.
_STATS: LiteralString = """
stats AS (
    SELECT x.n::float8 AS n, greatest(x.total / nullif(x.n, 0), 1)::float8 AS avgdl
    FROM (
        SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)
                   + (SELECT count(*) FROM memory_docs) AS n,
               (coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)
                   + coalesce((SELECT sum(length(lexemes)) FROM memory_docs), 0))::numeric
                   AS total
    ) AS x
)"""


def _hits(docs: LiteralString, query: LiteralString, matched: LiteralString) -> LiteralString:
    """Each (document, term) of the documents ``docs`` (a table expression aliased ``d``)
    that match the tsquery of CTE ``query``, with what BM25 needs of it."""
    return f"""
    SELECT d.kind, d.scope, d.agent_id, d.ord, {matched},
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM {docs}
    CROSS JOIN {query} AS q
    CROSS JOIN LATERAL unnest(d.lexemes) AS u"""


# Lexical ranking reads the searched lines where they are, twice (for exact and for
# close terms), each time only those that match: nothing is materialised.
_MATCHABLE: LiteralString = (
    """(
        SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
        FROM archival_lines AS l
        WHERE"""
    + _searched("l")
    + """
        UNION ALL
        SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
    ) AS d"""
)


def _scoring(docs: LiteralString) -> LiteralString:
    """From terms to each document's points ("combined") and the best attainable
    ("best"), over documents ``docs`` (a table expression aliased ``d``)."""
    return f"""
exact_hits AS ({_hits(docs, "query_terms", "u.lexeme AS term, 1.0::float8 AS weight")}
    WHERE d.lexemes @@ q.tsq AND u.lexeme = ANY (q.terms)
),
missing AS (
    SELECT term FROM terms
    WHERE term NOT IN (SELECT term FROM exact_hits) AND length(term) >= 4
),
vocab AS (
    SELECT v.lexeme
    FROM searched_blocks AS b, unnest(b.lexemes) AS v(lexeme)
    WHERE EXISTS (SELECT FROM missing)
    UNION ALL
    SELECT u.lexeme
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    WHERE EXISTS (SELECT FROM missing)
),
fuzzy AS (
    -- A lexeme in several of the searched vocabularies counts once.
    SELECT DISTINCT m.term, v.lexeme, similarity(v.lexeme, m.term)::float8 AS weight
    FROM missing AS m, vocab AS v
    WHERE similarity(v.lexeme, m.term) >= {FUZZY_MIN_SIMILARITY}
),
fuzzy_query AS (
    SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery AS tsq
    FROM (SELECT DISTINCT lexeme FROM fuzzy) AS f
),
fuzzy_hits AS ({_hits(docs, "fuzzy_query", "f.term, f.weight")}
    JOIN fuzzy AS f ON f.lexeme = u.lexeme
    WHERE q.tsq IS NOT NULL AND d.lexemes @@ q.tsq
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
)"""


# Ranking by meaning reads every searched line, with its embedding, once.
_DOCS: LiteralString = """(
        SELECT kind, scope, agent_id, ord, lexemes FROM docs
    ) AS d"""
_ALL_DOCS: LiteralString = (
    """
docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, '' AS workspace_id, l.ordinal::bigint AS ord,
           NULL::uuid AS memory_id, l.lexemes, l.embedding
    FROM archival_lines AS l
    WHERE"""
    + _searched("l")
    + """
    UNION ALL
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id, lexemes, embedding
    FROM memory_docs
)"""
)

# The documents with points: a line is one that exists (its ordinal is within its block),
# a memory one that was searched.
_LEXICAL_RANKED: LiteralString = """
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
)"""

# A zero vector has no direction: its distance is NaN and it says nothing.
_HYBRID_RANKED: LiteralString = """
distances AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord,
           (d.embedding::vector <=> CAST(%(rank_embedding)s AS vector))::float8 AS distance
    FROM docs AS d
    WHERE d.embedding IS NOT NULL AND cardinality(d.embedding) = %(rank_dimensions)s
),
semantic AS (
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
    SELECT d.kind, d.scope, d.agent_id, d.workspace_id, d.ord, d.memory_id,
           CASE WHEN s.near IS NULL THEN coalesce(x.score, 0)
                ELSE (1 - %(rank_weight)s) * coalesce(x.score, 0) + %(rank_weight)s * s.near
           END AS raw
    FROM docs AS d
    LEFT JOIN lexical AS x
      ON (x.kind, x.scope, x.agent_id, x.ord) = (d.kind, d.scope, d.agent_id, d.ord)
    LEFT JOIN semantic AS s
      ON (s.kind, s.scope, s.agent_id, s.ord) = (d.kind, d.scope, d.agent_id, d.ord)
    WHERE x.kind IS NOT NULL OR s.kind IS NOT NULL
)"""

# The best matches, then their text: a line's content and number (by its ordinal), a
# memory's "key: value". A line's ordinal orders like its number, a memory's like its id.
_BEST_FIRST: LiteralString = """,
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
)
SELECT b.kind, b.scope, b.agent_id, b.workspace_id, coalesce(l.line_number, 0) AS line_number,
       b.memory_id, coalesce(l.content, m.key || ': ' || m.value) AS content, b.score, b.raw,
       b.ord
FROM best_first AS b
LEFT JOIN archival_lines AS l
  ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = %(user_id)s
 AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
LEFT JOIN memories AS m
  ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
ORDER BY b.raw DESC, b.kind, b.scope, b.agent_id, b.ord"""

# How its rows are ordered, for a caller that aggregates them.
BEST_FIRST_ORDER: LiteralString = "raw DESC, kind, scope, agent_id, ord"


def ranking(embeddings: bool) -> LiteralString:
    """The ranking statement: lexical, or hybrid with a query embedding."""
    if embeddings:
        ranked = f"{_ALL_DOCS},{_scoring(_DOCS)},{_HYBRID_RANKED}"
    else:
        ranked = f"{_scoring(_MATCHABLE)},{_LEXICAL_RANKED}"
    return f"WITH {_TERMS},{_memories(embeddings)},{_STATS},{ranked}{_BEST_FIRST}"


_RANKINGS: dict[bool, LiteralString] = {e: ranking(e) for e in (False, True)}

PGVECTOR_INSTALLED: LiteralString = (
    "SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') AS installed"
)

_SCOPES = {"user": Scope.USER, "agent": Scope.AGENT, "workspace": Scope.WORKSPACE}


def rank_params(query: RankQuery) -> dict[str, Any]:
    """The ``rank_`` parameters of the ranking statement (and the caller's agent)."""
    params: dict[str, Any] = {
        "agent_id": query.agent_id,
        "rank_query": query.query,
        "rank_limit": query.limit,
        "rank_min_score": query.min_score,
        "rank_include_memories": query.include_memories,
        "rank_workspace_id": query.workspace_id,
    }
    if query.embedding:
        params["rank_embedding"] = "[" + ",".join(repr(float(x)) for x in query.embedding) + "]"
        params["rank_dimensions"] = len(query.embedding)
        params["rank_weight"] = query.weight
    return params


def match_from_row(row: Mapping[str, Any]) -> RecallMatch:
    """A match from a row of the ranking statement, or from its JSON."""
    memory_id = row["memory_id"]
    return RecallMatch(
        content=row["content"],
        score=float(row["score"]),
        scope=_SCOPES[row["scope"]],
        agent_id=row["agent_id"],
        line_number=int(row["line_number"]),
        memory_id=as_uuid(memory_id) if memory_id is not None else None,
        workspace_id=row["workspace_id"],
    )


class PgRecall(RecallRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._caller = {"tenant_id": principal.tenant_id, "user_id": principal.user_id}

    async def rank(self, query: RankQuery) -> list[RecallMatch]:
        # At most 100 rows, all ranked before the first is known: fetched at once.
        rows = await fetch_all(
            self._conn, _RANKINGS[bool(query.embedding)], {**self._caller, **rank_params(query)}
        )
        return [match_from_row(r) for r in rows]

    async def vectors_available(self) -> bool:
        row = await fetch_one(self._conn, PGVECTOR_INSTALLED, {})
        return bool(row and row["installed"])
