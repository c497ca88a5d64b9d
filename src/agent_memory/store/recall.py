"""Ranking inside PostgreSQL: BM25 over stemmed lexemes, with typo-tolerant terms and
the neighbouring lines of a block as context; fused with meaning where lines and
memories have vectors.

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

Lexical ranking needs no per-block statistics from the lines: the blocks' line
counts, total lengths and vocabularies are kept with each write. It scans the
searched blocks' lines (at most a block's worth each, by index) for the query's
terms and reads the text of the best few at the end: one statement (:data:`RANK`).

Ranking by meaning takes two. The lexical half (:data:`LEXICAL_PART`) ranks as
above and returns the best candidates by words, with the speakers of the searched
blocks; it runs while the query is being embedded. The fusion (:data:`FUSE`)
compares the query's vector with every searched line and memory that has a vector
of the same model (an exact scan: a block holds at most a few thousand lines),
takes the best candidates by meaning, and scores the union of both sets:

    (1 - w) * lexical + w * minmax(cosine + 0.5 * the better neighbour's cosine)

where minmax spreads the meaning side over [0, 1] across the candidates, so both
sides weigh alike whatever the model's range of cosines. A candidate with no vector
(not indexed yet) keeps its lexical score; a line of the one speaker the query
names scores half as much again. A memory has no neighbours: its own cosine
stands in for theirs.

The statements' parameters are prefixed ``rank_`` (but for the caller's
``tenant_id``, ``user_id`` and ``agent_id``) so they can be part of larger ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, LiteralString

from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import Scope
from agent_memory.domain.recall import (
    CANDIDATES,
    Candidate,
    LexicalPart,
    Meaning,
    RankQuery,
    RecallMatch,
)
from agent_memory.store.memories import current, mark_used
from agent_memory.store.repositories import RecallRepository
from agent_memory.store.sql import Connection, as_uuid, fetch_all, fetch_one
from agent_memory.store.vectors import (
    PGVECTOR_INSTALLED,
    SPEAKER,
    current_vector,
    line_hash,
    memory_hash,
    vector_literal,
)

K1 = 1.2
B = 0.4
NEIGHBOUR_WEIGHT = 0.5
FUZZY_MIN_SIMILARITY = 0.4
# Meaning: a neighbour's cosine counts half; a line of the speaker the query names
# half as much again.
NEIGHBOUR_MEANING = 0.5
SPEAKER_BOOST = 1.5


def _searched(a: LiteralString) -> LiteralString:
    """Rows of the caller's user block and of the agent's block (lines or vocabularies)."""
    return f"""
    {a}.tenant_id = %(tenant_id)s AND {a}.user_id = %(user_id)s
      AND (({a}.scope = 'user' AND {a}.agent_id = '')
           OR ({a}.scope = 'agent' AND {a}.agent_id = %(agent_id)s))"""


# Whether the caller has archival lines a ranking would search.
HAS_ARCHIVAL: LiteralString = (
    "EXISTS (SELECT FROM archival_vocabulary AS v WHERE"
    + _searched("v")
    + "\n      AND v.line_count > 0)"
)


def _searched_memories(a: LiteralString) -> LiteralString:
    """Current memories of the agent and of the workspace, when memories are searched."""
    return f"""%(rank_include_memories)s AND {a}.tenant_id = %(tenant_id)s
      AND (({a}.scope = 'agent' AND {a}.owner_id = %(agent_id)s)
           OR ({a}.scope = 'workspace' AND {a}.owner_id = %(rank_workspace_id)s))
      AND {current(a)}"""


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
    SELECT b.scope, b.agent_id, b.lexemes, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE"""
    + _searched("b")
    + """
)"""
)

# The memories searched with the lines (only when asked for).
_MEMORIES: LiteralString = f"""
memory_docs AS (
    SELECT 'memory' AS kind, m.scope,
           CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           CASE WHEN m.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           m.id AS memory_id, to_tsvector('english', m.key || ' ' || m.value) AS lexemes,
           row_number() OVER (ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE {_searched_memories("m")}
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
           coalesce(sc.own, 0) + {NEIGHBOUR_WEIGHT} * coalesce(cx.near, 0) AS points,
           coalesce(sc.own, 0) AS own
    FROM scored AS sc
    FULL JOIN context AS cx
      ON (cx.kind, cx.scope, cx.agent_id, cx.ord) = (sc.kind, sc.scope, sc.agent_id, sc.ord)
)"""


# The documents with points: a line is one that exists (its ordinal is within its block),
# a memory one that was searched.
_LEXICAL_RANKED: LiteralString = """
ranked AS (
    SELECT c.kind, c.scope, c.agent_id, coalesce(m.workspace_id, '') AS workspace_id, c.ord,
           m.memory_id, c.points / nullif(b.top, 0) AS raw, c.own / nullif(b.top, 0) AS own
    FROM combined AS c
    CROSS JOIN best AS b
    LEFT JOIN searched_blocks AS k
      ON c.kind = 'line' AND k.scope = c.scope AND k.agent_id = c.agent_id
    LEFT JOIN memory_docs AS m
      ON c.kind = 'memory' AND m.ord = c.ord
    WHERE (c.kind = 'line' AND c.ord BETWEEN 1 AND k.line_count) OR m.memory_id IS NOT NULL
)"""

# The best matches, then their text: a line's content and number (by its ordinal), a
# memory's "key: value". A line's ordinal orders like its number, a memory's like its id.
_BEST_FIRST: LiteralString = """,
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_lexical)s
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

_LEXICAL: LiteralString = (
    f"WITH {_TERMS},{_MEMORIES},{_STATS},{_scoring(_MATCHABLE)},{_LEXICAL_RANKED}"
)

# Lexical ranking, best first.
RANK: LiteralString = _LEXICAL + _BEST_FIRST

# The lexical half of a ranking by meaning: one row, the best candidates by words (a
# memory by its id) and the speakers of the searched blocks.
LEXICAL_PART: LiteralString = (
    _LEXICAL
    + """,
top AS (
    SELECT scope, agent_id, CASE WHEN kind = 'line' THEN ord ELSE 0 END AS ord, memory_id,
           least(1.0, raw)::float8 AS score, least(1.0, own)::float8 AS own
    FROM ranked
    WHERE raw > 0
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_candidates)s
)
SELECT (SELECT coalesce(json_agg(json_build_array(scope, agent_id, ord, memory_id, score, own)),
                        '[]')
        FROM top) AS candidates,
       (SELECT coalesce(array_agg(DISTINCT s.name ORDER BY s.name), '{}')
        FROM searched_blocks AS b, unnest(b.speakers) AS s(name)) AS speakers"""
)

# A memory's key for joins: its id; a line's: the nil id (lines are keyed by ordinal).
_NIL: LiteralString = "'00000000-0000-0000-0000-000000000000'::uuid"

# The fusion: candidates by words (given) and by meaning, scored together, best first.
# The searched lines' cosines are computed once (MATERIALIZED): each is read again as
# its neighbours' neighbour. A zero vector has no direction: its distance is NaN.
FUSE: LiteralString = f"""
WITH lexical AS (
    SELECT x.scope, x.agent_id, x.ord, coalesce(x.memory_id, {_NIL}) AS memory_id, x.score, x.own
    FROM unnest(%(rank_scopes)s::text[], %(rank_agent_ids)s::text[], %(rank_ordinals)s::bigint[],
                %(rank_memory_ids)s::uuid[], %(rank_scores)s::float8[], %(rank_owns)s::float8[])
         AS x(scope, agent_id, ord, memory_id, score, own)
),
line_cosines AS MATERIALIZED (
    SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord,
           (1 - (l.embedding::vector <=> %(rank_vector)s::vector))::float8 AS cosine
    FROM archival_lines AS l
    WHERE {_searched("l")}
      AND {current_vector("l", line_hash("l"), "%(rank_model)s")}
),
line_meaning AS (
    SELECT scope, agent_id, ord, {_NIL} AS memory_id,
           cosine + {NEIGHBOUR_MEANING} * coalesce(greatest(
               CASE WHEN lag(ord) OVER w = ord - 1 THEN lag(cosine) OVER w END,
               CASE WHEN lead(ord) OVER w = ord + 1 THEN lead(cosine) OVER w END), cosine)
               AS meaning
    FROM line_cosines
    WHERE cosine <> 'NaN'::float8
    WINDOW w AS (PARTITION BY scope, agent_id ORDER BY ord)
),
memory_meaning AS (
    SELECT m.scope, CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           0::bigint AS ord, m.id AS memory_id,
           (1 + {NEIGHBOUR_MEANING})
               * (1 - (m.embedding::vector <=> %(rank_vector)s::vector))::float8 AS meaning
    FROM memories AS m
    WHERE {_searched_memories("m")}
      AND {current_vector("m", memory_hash("m"), "%(rank_model)s")}
),
meaning AS (
    SELECT * FROM line_meaning
    UNION ALL
    SELECT * FROM memory_meaning WHERE meaning <> 'NaN'::float8
),
candidates AS (
    SELECT scope, agent_id, ord, memory_id FROM lexical
    UNION
    (SELECT scope, agent_id, ord, memory_id FROM meaning
     ORDER BY meaning DESC LIMIT %(rank_candidates)s)
),
scored AS (
    SELECT c.scope, c.agent_id, c.ord, c.memory_id, coalesce(x.score, 0) AS lexical,
           coalesce(x.own, 0) AS own,
           n.meaning
    FROM candidates AS c
    LEFT JOIN lexical AS x USING (scope, agent_id, ord, memory_id)
    LEFT JOIN meaning AS n USING (scope, agent_id, ord, memory_id)
),
spread AS (
    SELECT min(meaning) AS low, max(meaning) AS high FROM scored
),
fused AS (
    SELECT s.*,
           CASE WHEN s.meaning IS NULL THEN s.lexical
                ELSE (1 - %(rank_weight)s) * s.lexical + %(rank_weight)s
                     * coalesce((s.meaning - p.low) / nullif(p.high - p.low, 0), 1)
           END AS points
    FROM scored AS s CROSS JOIN spread AS p
),
texts AS (
    SELECT CASE WHEN f.memory_id = {_NIL} THEN 'line' ELSE 'memory' END AS kind,
           f.scope, f.agent_id,
           CASE WHEN f.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           f.ord, nullif(f.memory_id, {_NIL}) AS memory_id,
           coalesce(l.line_number, 0) AS line_number,
           coalesce(l.content, m.key || ': ' || m.value) AS content,
           f.own,
           f.points * CASE WHEN %(rank_speaker)s <> ''
                            AND substring(l.content FROM %(speaker_pattern)s) = %(rank_speaker)s
                           THEN {SPEAKER_BOOST} ELSE 1 END AS raw
    FROM fused AS f
    LEFT JOIN archival_lines AS l
      ON f.memory_id = {_NIL} AND l.tenant_id = %(tenant_id)s AND l.user_id = %(user_id)s
     AND l.scope = f.scope AND l.agent_id = f.agent_id AND l.ordinal = f.ord
    LEFT JOIN memories AS m
      ON f.memory_id <> {_NIL} AND m.tenant_id = %(tenant_id)s AND m.id = f.memory_id
    WHERE l.content IS NOT NULL OR m.id IS NOT NULL
)
SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
       least(1.0, raw) AS score, raw, ord
FROM texts
WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s AND own >= %(rank_min_lexical)s
ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id
LIMIT %(rank_limit)s"""


def _ordered(ranking: LiteralString) -> LiteralString:
    """``ranking`` as :func:`_marking_used` returns it, without the marking."""
    return f"""
WITH found AS ({ranking})
SELECT * FROM found ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id"""


def _marking_used(ranking: LiteralString) -> LiteralString:
    """``ranking``, with the memories it returns marked as used (a data-modifying
    statement must be the top level, so the ranking is a part of this one)."""
    return f"""
WITH found AS ({ranking}),
used AS ({mark_used("SELECT memory_id FROM found WHERE memory_id IS NOT NULL")})
SELECT * FROM found ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id"""


# What Recall runs: the rankings above, marking the memories they return; on a
# standby, where nothing can be written, the rankings alone, in the same order.
RECALL_RANK: LiteralString = _marking_used(RANK)
RECALL_FUSE: LiteralString = _marking_used(FUSE)
RANK_ORDERED: LiteralString = _ordered(RANK)
FUSE_ORDERED: LiteralString = _ordered(FUSE)

_SCOPES = {"user": Scope.USER, "agent": Scope.AGENT, "workspace": Scope.WORKSPACE}


def rank_params(query: RankQuery) -> dict[str, Any]:
    """The ``rank_`` parameters of the lexical statements (and the caller's agent)."""
    return {
        "agent_id": query.agent_id,
        "rank_query": query.query,
        "rank_limit": query.limit,
        "rank_min_score": query.min_score,
        "rank_min_lexical": query.min_lexical,
        "rank_include_memories": query.include_memories,
        "rank_workspace_id": query.workspace_id,
        "rank_candidates": CANDIDATES,
    }


def fuse_params(query: RankQuery, lexical: LexicalPart, meaning: Meaning) -> dict[str, Any]:
    """The parameters of :data:`FUSE`."""
    found = lexical.candidates
    return {
        **rank_params(query),
        "rank_scopes": [c.scope.value for c in found],
        "rank_agent_ids": [c.agent_id for c in found],
        "rank_ordinals": [c.ordinal for c in found],
        "rank_memory_ids": [c.memory_id for c in found],
        "rank_scores": [c.score for c in found],
        "rank_owns": [c.own for c in found],
        "rank_vector": vector_literal(meaning.vector),
        "rank_model": meaning.model,
        "rank_weight": meaning.weight,
        "rank_speaker": meaning.speaker,
        "speaker_pattern": SPEAKER,
    }


def match_from_row(row: Mapping[str, Any]) -> RecallMatch:
    """A match from a row of a ranking statement, or from its JSON."""
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


def lexical_part_from_row(row: Mapping[str, Any]) -> LexicalPart:
    """The lexical half from the row of :data:`LEXICAL_PART`, or from its JSON."""
    candidates = row["candidates"]
    if isinstance(candidates, str):
        candidates = json.loads(candidates)
    return LexicalPart(
        candidates=tuple(
            Candidate(
                scope=_SCOPES[scope],
                agent_id=agent_id,
                ordinal=int(ordinal),
                memory_id=as_uuid(memory_id) if memory_id is not None else None,
                score=float(score),
                own=float(own),
            )
            for scope, agent_id, ordinal, memory_id, score, own in candidates
        ),
        speakers=tuple(row["speakers"] or ()),
    )


class PgRecall(RecallRepository):
    def __init__(self, conn: Connection, principal: Principal, *, marks: bool = True) -> None:
        """``marks``: mark the memories a ranking returns as used (not on a standby)."""
        self._conn = conn
        self._marks = marks
        self._caller = {"tenant_id": principal.tenant_id, "user_id": principal.user_id}

    async def rank(self, query: RankQuery) -> list[RecallMatch]:
        # At most 100 rows, all ranked before the first is known: fetched at once.
        params = {**self._caller, **rank_params(query)}
        rows = await fetch_all(self._conn, RECALL_RANK if self._marks else RANK_ORDERED, params)
        return [match_from_row(r) for r in rows]

    async def lexical(self, query: RankQuery) -> LexicalPart:
        row = await fetch_one(self._conn, LEXICAL_PART, {**self._caller, **rank_params(query)})
        assert row is not None  # one row, always
        return lexical_part_from_row(row)

    async def fuse(
        self, query: RankQuery, lexical: LexicalPart, meaning: Meaning
    ) -> list[RecallMatch]:
        params = {**self._caller, **fuse_params(query, lexical, meaning)}
        statement = RECALL_FUSE if self._marks else FUSE_ORDERED
        return [match_from_row(r) for r in await fetch_all(self._conn, statement, params)]

    async def vectors_available(self) -> bool:
        row = await fetch_one(self._conn, PGVECTOR_INSTALLED, {})
        return bool(row and row["installed"])

    async def has_archival(self, agent_id: str) -> bool:
        statement: LiteralString = "SELECT " + HAS_ARCHIVAL + " AS found"
        row = await fetch_one(self._conn, statement, {**self._caller, "agent_id": agent_id})
        return bool(row and row["found"])
