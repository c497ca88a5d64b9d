"""Ranking inside PostgreSQL: BM25 over stemmed lexemes, with typo-tolerant terms and,
in a conversation, the neighbouring lines as context; fused with meaning where lines
and memories have vectors.

* Terms are the English-stemmed lexemes of the query (``to_tsvector('english')``),
  the same analysis the lines get when they are written.
* Each term is weighted by its inverse document frequency over the lines being
  searched (the caller's blocks), so names and rare words count most. How many lines
  of a block hold each lexeme is kept with every write of the block (its *terms*),
  so a term's weight costs one index probe, whatever the size of the block.
* A query term that occurs nowhere is matched to close lexemes of the searched
  blocks by trigram similarity (those sharing its first two letters: one index range
  of the block's terms), weighted by that similarity: typos and name variants hit.
* Short lines need little length normalisation (b = 0.4).
* In a conversation the answer often sits next to the line that names the topic, so
  each line of a block that reads as one also gets half the score of its best
  neighbour (a quarter from two lines away), neighbours being the block's non-empty
  lines in order. A block reads as a conversation when at least two speakers (names
  that open two or more of its lines as ``Name: text``, kept with every write) take
  turns in it; in a list of facts or notes each line stands alone, and a line next to
  the answer is not about it.
* The score is normalised by what a typical line holding every query term once would
  get (the sum of the terms' weights) and capped at 1, so it means the same for
  every query: 1 is "all of it is here", 0.3 "a third of the evidence".

**What is read.** A ranking reads the lines that hold a term of the query, and never
more than a bound. When the searched blocks hold at most ``scan`` lines (a setting)
it reads them as they are, by their block's key. Past that it reads, from the
blocks' terms, the lines of the query's rarest lexemes, until they would fill
``cap``: each term keeps the ordinals of the lines that hold it (its postings), so
the rarest terms' lines are found by primary key, whatever the block's size, and
every query term is then scored on those candidates. Below the cap the ranking is
the same either way; above it, lines that hold only common terms are not read. All
of this is one statement (:data:`RANK`), planned once for every owner.

Memories are read as they are up to ``scan`` of them too. Past that a second
statement (:data:`MEMORY_CANDIDATES`) finds those that hold a term through the GIN index
led by their owner, at most ``cap``, and a third (:data:`RANK_GIVEN`) ranks again
with them. That second statement is sent with its values written in (psycopg binds
them on the client), so that PostgreSQL plans it for this owner, whose size its
statistics know, rather than for an average one.

**By meaning** the lexical half (:data:`LEXICAL_PART`, the best candidates by words)
runs while the query is being embedded. The fusion (:data:`FUSE`) takes the lines and
memories nearest the query's vector: read as they are below ``scan``, or (above it)
from the vectors' approximate index (:data:`NEAREST`, pgvector's HNSW with iterative
scans filtered to the owner, one index per model, planned for its values too). It
compares the query with those and the lexical candidates, and with the lines next to
them only:

    (1 - w) * lexical + w * minmax(cosine + 0.5 * the better neighbour's cosine)

where minmax spreads the meaning side over [0, 1] across the candidates, so both
sides weigh alike whatever the model's range of cosines. A candidate with no vector
(not indexed yet) keeps its lexical score; a line of the one speaker the query names
scores half as much again. A memory, and a line of a block that is not a
conversation, has no neighbours: its own cosine stands in for theirs. Those points
order the matches; the scores returned are the points in one ratio, brought down
until the best match's is what it earns alone (below), since minmax gives the best
all of the meaning half however far it is from the query.

**Reminders** (``min_own``) are held to what a line earns by itself, its neighbours
left out, on a scale that does not depend on the other candidates:
``(1 - w) * its own words + w * its own cosine on the model's scale`` (see
``CosineScale``), or its own words alone where it has no vector yet or the model no
known scale (then against ``min_own_words``).

The statements' parameters are prefixed ``rank_`` (but for the caller's
``tenant_id``, ``user_id`` and ``agent_id``, and ``block_workspace_id``, the workspace
whose archival block is searched, empty for none) so they can be part of larger ones.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, LiteralString

from agent_memory.domain.identity import Principal
from agent_memory.domain.indexing import IndexingStatus
from agent_memory.domain.memorize import CONTENT_KEY_PATTERN
from agent_memory.domain.memory import MemorySource, Scope
from agent_memory.domain.recall import (
    CANDIDATES,
    Candidate,
    LexicalPart,
    Meaning,
    RankQuery,
    RecallMatch,
)
from agent_memory.store.history import ARCHIVAL_AT, BY_AGENT_OR_WORKSPACE, memories_at
from agent_memory.store.indexing import INDEXING_STATUS, indexing_status, status_params
from agent_memory.store.memory_sql import current, mark_used, unheld, valid_now
from agent_memory.store.repositories import RecallRepository
from agent_memory.store.search import memory_lexemes, memory_owner, memory_owner_key
from agent_memory.store.sql import (
    Connection,
    as_uuid,
    database_errors,
    fetch_all,
    fetch_all_planned,
    fetch_one,
)
from agent_memory.store.vector_indexes import IndexedRows
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
# A misspelt term is matched against the lexemes that share its first letters, and at
# most this many of a query's terms are (the longest first).
FUZZY_PREFIX = 2
FUZZY_TERMS = 32
# What a memory says as a match: its value, after its key where its writer chose it
# (``shows_key``, as the prompt shows it); keys that machines made are left out.
MEMORY_SAYS: LiteralString = f"""CASE
    WHEN m.source = '{MemorySource.MANUAL.value}' AND m.key !~ '^{CONTENT_KEY_PATTERN}$'
    THEN m.key || ': ' || m.value ELSE m.value END"""

# Meaning: a neighbour's cosine counts half; a line of the speaker the query names
# half as much again.
NEIGHBOUR_MEANING = 0.5
SPEAKER_BOOST = 1.5
# The searched memories are counted up to this many (their count weighs the terms).
MEMORY_COUNT_BOUND = 10_000
# A memory's key for joins: its id; a line's: the nil id (lines are keyed by ordinal).
_NIL: LiteralString = "'00000000-0000-0000-0000-000000000000'::uuid"


def _searched(a: LiteralString) -> LiteralString:
    """Rows of the caller's user block, of the agent's block and of the workspace's
    block, when one is named (lines or vocabularies). A workspace's block is the
    tenant's: it has no user, and its owner column holds the workspace's id."""
    return f"""
    {a}.tenant_id = %(tenant_id)s
      AND (({a}.user_id = %(user_id)s
            AND (({a}.scope = 'user' AND {a}.agent_id = '')
                 OR ({a}.scope = 'agent' AND {a}.agent_id = %(agent_id)s)))
           OR ({a}.user_id = '' AND {a}.scope = 'workspace'
               AND {a}.agent_id = %(block_workspace_id)s))"""


def _user_of(b: LiteralString) -> LiteralString:
    """The user of searched block ``b``: the caller, or none for a workspace's."""
    return f"CASE WHEN {b}.scope = 'workspace' THEN '' ELSE %(user_id)s END"


def _of_block(a: LiteralString, b: LiteralString) -> LiteralString:
    """Rows of ``a`` (lines or terms) of searched block ``b``, by their key's prefix."""
    return f"""{a}.tenant_id = %(tenant_id)s AND {a}.user_id = {_user_of(b)}
      AND {a}.scope = {b}.scope AND {a}.agent_id = {b}.agent_id"""


# A block reads as a conversation when at least this many speakers take turns in it
# (one recurring label, "Acme: ..." notes, is not one).
CONVERSATION_SPEAKERS = 2


def _conversation(b: LiteralString) -> LiteralString:
    """Whether block ``b`` (a row of archival_vocabulary) reads as a conversation."""
    return f"cardinality({b}.speakers) >= {CONVERSATION_SPEAKERS}"


# Whether the caller has archival lines a ranking would search.
HAS_ARCHIVAL: LiteralString = (
    "EXISTS (SELECT FROM archival_vocabulary AS v WHERE"
    + _searched("v")
    + "\n      AND v.line_count > 0)"
)


def _searched_memories(a: LiteralString) -> LiteralString:
    """Current memories of the agent and of the workspace whose facts are valid now and
    that are not held for review, when memories are searched."""
    return f"""%(rank_include_memories)s AND {a}.tenant_id = %(tenant_id)s
      AND (({a}.scope = 'agent' AND {a}.owner_id = %(agent_id)s)
           OR ({a}.scope = 'workspace' AND {a}.owner_id = %(rank_workspace_id)s))
      AND {current(a)} AND {unheld(a)} AND {valid_now(a)}"""


def _memory_doc(a: LiteralString) -> LiteralString:
    """What a ranking reads of memory ``a``."""
    return f"""'memory' AS kind, {a}.scope,
           CASE WHEN {a}.scope = 'agent' THEN {a}.owner_id ELSE '' END AS agent_id,
           CASE WHEN {a}.scope = 'workspace' THEN {a}.owner_id ELSE '' END AS workspace_id,
           {a}.id AS memory_id, {memory_lexemes(a)} AS lexemes"""


# The query's terms, the searched blocks, and how large what is searched is.
_SEARCHED: LiteralString = (
    """
terms AS (
    SELECT DISTINCT u.lexeme COLLATE "C" AS term
    FROM unnest(to_tsvector('english', %(rank_query)s)) AS u
),
searched_blocks AS (
    SELECT b.scope, b.agent_id, b.line_count, b.lexeme_total, b.speakers
    FROM archival_vocabulary AS b
    WHERE"""
    + _searched("b")
    + f"""
),
sizes AS (
    SELECT coalesce((SELECT sum(line_count) FROM searched_blocks), 0)::float8 AS lines,
           coalesce((SELECT sum(lexeme_total) FROM searched_blocks), 0)::float8 AS lexemes,
           (SELECT count(*) FROM (
                SELECT FROM memories AS m WHERE {_searched_memories("m")}
                LIMIT %(rank_memory_bound)s) AS c)::float8 AS memories
),
scanned AS (
    SELECT lines <= %(rank_scan)s AS lines, memories <= %(rank_scan)s AS memories FROM sizes
)"""
)

# The searched memories, read as they are (when few enough), with their lexemes.
_SCANNED_MEMORIES: LiteralString = f"""
memory_docs AS (
    SELECT {_memory_doc("m")}, row_number() OVER (ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE (SELECT memories FROM scanned) AND {_searched_memories("m")}
)"""

# The memories among the given candidates (still the caller's, and current).
_GIVEN_MEMORIES: LiteralString = f"""
memory_docs AS (
    SELECT {_memory_doc("m")}, row_number() OVER (ORDER BY m.id) AS ord
    FROM memories AS m
    WHERE m.tenant_id = %(tenant_id)s AND m.id = ANY (%(rank_memory_ids)b::uuid[])
      AND {_searched_memories("m")}
)"""

# Each query term and the lexemes that stand for it (itself, or close ones of the
# searched blocks and memories when it occurs nowhere), with the weight of each and how
# many searched lines hold it; then the terms' document frequencies and the corpus.
_LEXICON: LiteralString = f"""
term_lines AS (
    SELECT t.term, sum(s.lines) AS lines
    FROM terms AS t CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s ON {_of_block("s", "b")} AND s.lexeme = t.term
    GROUP BY t.term
),
memory_lexemes AS (
    SELECT u.lexeme COLLATE "C" AS lexeme, count(*) AS docs
    FROM memory_docs AS d, unnest(d.lexemes) AS u
    GROUP BY 1
),
missing AS (
    SELECT t.term FROM terms AS t
    WHERE length(t.term) >= 4
      AND t.term NOT IN (SELECT term FROM term_lines)
      AND t.term NOT IN (SELECT lexeme FROM memory_lexemes)
    ORDER BY length(t.term) DESC, t.term
    LIMIT {FUZZY_TERMS}
),
close AS (
    SELECT m.term, s.lexeme, sum(s.lines) AS lines
    FROM missing AS m CROSS JOIN searched_blocks AS b
    JOIN archival_terms AS s
      ON {_of_block("s", "b")}
     AND s.lexeme >= left(m.term, {FUZZY_PREFIX})
     AND s.lexeme < left(m.term, {FUZZY_PREFIX}) || chr(1114111)
    WHERE similarity(s.lexeme, m.term) >= {FUZZY_MIN_SIMILARITY}
    GROUP BY m.term, s.lexeme
    UNION ALL
    SELECT m.term, x.lexeme, 0
    FROM missing AS m, memory_lexemes AS x
    WHERE starts_with(x.lexeme, left(m.term, {FUZZY_PREFIX}))
      AND similarity(x.lexeme, m.term) >= {FUZZY_MIN_SIMILARITY}
),
lexicon AS (
    SELECT t.term, t.term AS lexeme, 1.0::float8 AS weight, coalesce(x.lines, 0)::float8 AS lines
    FROM terms AS t LEFT JOIN term_lines AS x USING (term)
    UNION ALL
    SELECT term, lexeme, similarity(lexeme, term)::float8, sum(lines)::float8
    FROM close GROUP BY term, lexeme
),
df AS (
    SELECT x.term, sum(x.lines + coalesce(m.docs, 0)) AS df
    FROM lexicon AS x LEFT JOIN memory_lexemes AS m USING (lexeme)
    GROUP BY x.term
),
stats AS (
    SELECT s.lines + s.memories AS n,
           greatest(CASE WHEN s.lines > 0 THEN s.lexemes / s.lines
                         ELSE (SELECT avg(length(lexemes)) FROM memory_docs) END, 1)::float8
               AS avgdl
    FROM sizes AS s
),
idf AS (
    SELECT t.term, ln(1 + (s.n - coalesce(df.df, 0) + 0.5) / (coalesce(df.df, 0) + 0.5)) AS idf
    FROM terms AS t LEFT JOIN df USING (term) CROSS JOIN stats AS s
),
best AS (
    SELECT sum(idf) AS top FROM idf
)"""

# The searched lines that hold a lexeme of the lexicon. Few enough, they are read as they
# are, by their block's key (the match is a function call, not the @@ operator, which
# PostgreSQL could look up in no index but one across owners). Too many, they are the
# lines of the chosen lexemes, found through the postings of the blocks' terms: the
# rarest lexemes' lines first, at most the cap of them.
_LINES: LiteralString = (
    """
line_docs AS (
    SELECT 'line' AS kind, l.scope, l.agent_id, l.ordinal::bigint AS ord, l.lexemes
    FROM archival_lines AS l
    WHERE (SELECT lines FROM scanned) AND"""
    + _searched("l")
    + f"""
      AND ts_match_vq(l.lexemes, (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery
                                  FROM (SELECT DISTINCT lexeme FROM lexicon) AS x))
    UNION ALL
    SELECT 'line', l.scope, l.agent_id, l.ordinal::bigint, l.lexemes
    FROM (
        SELECT p.scope, p.agent_id, p.ord, min(p.rarity) AS rarity
        FROM (
            SELECT b.scope, b.agent_id, o.ord, c.rarity
            FROM chosen AS c
            CROSS JOIN searched_blocks AS b
            JOIN archival_terms AS s ON {_of_block("s", "b")} AND s.lexeme = c.lexeme
            CROSS JOIN LATERAL unnest(s.ordinals[1:%(rank_cap)s]) AS o(ord)
            WHERE NOT (SELECT lines FROM scanned)
        ) AS p
        GROUP BY p.scope, p.agent_id, p.ord
        ORDER BY rarity, p.ord
        LIMIT %(rank_cap)s
    ) AS x
    JOIN archival_lines AS l ON {_of_block("l", "x")} AND l.ordinal = x.ord
)"""
)

# From documents to each one's points ("combined").
_SCORING: LiteralString = f"""
docs AS (
    SELECT kind, scope, agent_id, ord, lexemes FROM line_docs
    UNION ALL
    SELECT kind, scope, agent_id, ord, lexemes FROM memory_docs
),
hits AS (
    SELECT d.kind, d.scope, d.agent_id, d.ord, x.term, x.weight,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf,
           length(d.lexemes)::float8 AS dl
    FROM docs AS d
    CROSS JOIN LATERAL unnest(d.lexemes) AS u
    JOIN lexicon AS x ON x.lexeme = u.lexeme COLLATE "C"
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
    FROM scored AS sc
    JOIN searched_blocks AS k
      ON sc.kind = 'line' AND k.scope = sc.scope AND k.agent_id = sc.agent_id
     AND {_conversation("k")}
    CROSS JOIN (VALUES (-2, 0.5), (-1, 1.0), (1, 1.0), (2, 0.5)) AS v(step, share)
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
),
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

# The lexemes whose lines are read when the searched lines are too many to read: the
# rarest first (fewest lines), until their lines would fill the cap (the rarest always).
_CHOSEN: LiteralString = """
chosen AS (
    SELECT lexeme, row_number() OVER (ORDER BY lines, lexeme) AS rarity FROM (
        SELECT lexeme, lines, sum(lines) OVER (ORDER BY lines, lexeme) AS upto
        FROM (SELECT lexeme, max(lines) AS lines FROM lexicon GROUP BY lexeme) AS x
    ) AS y
    WHERE upto - lines < %(rank_cap)s
)"""
# Where the searched memories are too many to read: the lexemes their candidates must hold.
_MEMORY_QUERY: LiteralString = """
    CASE WHEN NOT (SELECT memories FROM scanned) THEN
        (SELECT string_agg(DISTINCT quote_literal(lexeme), ' | ') FROM lexicon)
    END AS memory_query"""

# The best matches, then their text: a line's content and number (by its ordinal), a
# memory's "key: value". A line's ordinal orders like its number, a memory's like its id.
_BEST_FIRST: LiteralString = f""",
best_first AS (
    SELECT kind, scope, agent_id, workspace_id, ord, memory_id,
           least(1.0, raw) AS score, raw
    FROM ranked
    WHERE raw > 0 AND least(1.0, raw) >= %(rank_min_score)s
      AND least(1.0, own) >= %(rank_min_own_words)s
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT %(rank_limit)s
),
found AS (
    SELECT b.kind, b.scope, b.agent_id, b.workspace_id,
           coalesce(l.line_number, 0) AS line_number, b.memory_id,
           coalesce(l.content, {MEMORY_SAYS}) AS content, b.score, b.raw, b.ord
    FROM best_first AS b
    LEFT JOIN archival_lines AS l
      ON b.kind = 'line' AND l.tenant_id = %(tenant_id)s AND l.user_id = {_user_of("b")}
     AND l.scope = b.scope AND l.agent_id = b.agent_id AND l.ordinal = b.ord
    LEFT JOIN memories AS m
      ON b.kind = 'memory' AND m.tenant_id = %(tenant_id)s AND m.id = b.memory_id
)"""

_MATCHES: LiteralString = """
    (SELECT coalesce(json_agg(f ORDER BY f.raw DESC, f.kind, f.scope, f.agent_id, f.ord), '[]')
     FROM found AS f) AS matches"""


def _ranking(memories: LiteralString) -> LiteralString:
    """Every CTE of a ranking by words, over the memories given as a CTE."""
    return f"WITH {_SEARCHED},{memories},{_LEXICON},{_CHOSEN},{_LINES},{_SCORING}"


def _result(body: LiteralString, marks: bool) -> LiteralString:
    """One row: whether the searched memories were read, the lexemes their candidates
    must hold when they were not, and ``body``'s columns; the memories a ranking
    returns are marked as used when ``marks`` (a data-modifying CTE must be at the top
    level)."""
    used = f",\nused AS ({mark_used('SELECT memory_id FROM found WHERE memory_id IS NOT NULL')})"
    return f"""{used if marks else ""}
SELECT (SELECT memories FROM scanned) AS memories_scanned,
       (SELECT lines FROM scanned) AS lines_scanned,
       (SELECT lines FROM sizes)::bigint AS line_count,
       (SELECT memories FROM sizes)::bigint AS memory_count,{_MEMORY_QUERY},{body}"""


_SCANNED: LiteralString = _ranking(_SCANNED_MEMORIES)
_GIVEN: LiteralString = _ranking(_GIVEN_MEMORIES)

# Lexical ranking, best first: one row, the matches as JSON (see _result). Where the
# searched memories are too many to read, the matches are empty and memory_query says
# which lexemes' memories to find: :data:`MEMORY_CANDIDATES`, then :data:`RANK_GIVEN`.
RANK: LiteralString = _SCANNED + _BEST_FIRST + _result(_MATCHES, marks=False)
RANK_GIVEN: LiteralString = _GIVEN + _BEST_FIRST + _result(_MATCHES, marks=False)
RECALL_RANK: LiteralString = _SCANNED + _BEST_FIRST + _result(_MATCHES, marks=True)
RECALL_RANK_GIVEN: LiteralString = _GIVEN + _BEST_FIRST + _result(_MATCHES, marks=True)

# The lexical half of a ranking by meaning: one row, the best candidates by words (a
# memory by its id) and the speakers of the searched blocks.
_TOP: LiteralString = f""",
top AS (
    SELECT scope, agent_id, CASE WHEN kind = 'line' THEN ord ELSE 0 END AS ord, memory_id,
           least(1.0, raw)::float8 AS score, least(1.0, own)::float8 AS own
    FROM ranked
    WHERE raw > 0
    ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT {CANDIDATES}
)"""
_LEXICAL_BODY: LiteralString = """
    (SELECT coalesce(json_agg(json_build_array(scope, agent_id, ord, memory_id, score, own)),
                     '[]')
     FROM top) AS candidates,
    (SELECT coalesce(array_agg(DISTINCT s.name ORDER BY s.name), '{}')
     FROM searched_blocks AS b, unnest(b.speakers) AS s(name)) AS speakers"""
LEXICAL_PART: LiteralString = _SCANNED + _TOP + _result(_LEXICAL_BODY, marks=False)
LEXICAL_PART_GIVEN: LiteralString = _GIVEN + _TOP + _result(_LEXICAL_BODY, marks=False)

# The candidate memories when the searched memories are too many to read: at most the
# cap of those that hold a lexeme, through the GIN index led by their owner. Sent with
# its values written in (see the module's docstring).
MEMORY_CANDIDATES: LiteralString = f"""
SELECT m.id
FROM memories AS m
WHERE m.tenant_id = %(tenant_id)s
  AND ({memory_owner("m")} = %(rank_agent_owner)s OR {memory_owner("m")} = %(rank_workspace_owner)s)
  AND {_searched_memories("m")}
  AND {memory_lexemes("m")} @@ %(rank_memory_query)s::tsquery
LIMIT %(rank_cap)s"""

# The lines (and memories) nearest the query's vector, through its model's approximate
# index (store/vector_indexes.py), filtered to the searched ones as the index is walked:
# each kind only where it is too many to read as it is. Sent with its values written
# in: the index covers one model, at its dimensions.
NEAREST: LiteralString = f"""
(SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord, NULL::uuid AS memory_id
 FROM archival_lines AS l
 WHERE NOT %(rank_lines_read)s AND {_searched("l")} AND l.embedding_model = %(rank_model)s
   AND l.embedded_hash = {line_hash("l")}
 ORDER BY (l.embedding::halfvec(%(rank_dimensions)s))
          <=> %(rank_vector)s::halfvec(%(rank_dimensions)s)
 LIMIT {CANDIDATES})
UNION ALL
(SELECT m.scope, CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END, 0, m.id
 FROM memories AS m
 WHERE NOT %(rank_memories_read)s AND {_searched_memories("m")}
   AND m.embedding_model = %(rank_model)s AND m.embedded_hash = {memory_hash("m")}
 ORDER BY (m.embedding::halfvec(%(rank_dimensions)s))
          <=> %(rank_vector)s::halfvec(%(rank_dimensions)s)
 LIMIT {CANDIDATES})"""

# The fusion: candidates by words (given) and by meaning (read as they are where few
# enough, else given), scored together, best first. Cosines are computed for the
# candidate lines and their neighbours only. A zero vector has no direction: its distance is NaN.
FUSE: LiteralString = f"""
WITH lexical AS (
    SELECT x.scope, x.agent_id, x.ord, coalesce(x.memory_id, {_NIL}) AS memory_id, x.score, x.own
    FROM unnest(%(rank_scopes)s::text[], %(rank_agent_ids)s::text[], %(rank_ordinals)s::bigint[],
                %(rank_memory_ids)s::uuid[], %(rank_scores)s::float8[], %(rank_owns)s::float8[])
         AS x(scope, agent_id, ord, memory_id, score, own)
),
near_lines AS (
    SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord, {_NIL} AS memory_id
    FROM archival_lines AS l
    WHERE %(rank_lines_read)s AND {_searched("l")}
      AND {current_vector("l", line_hash("l"), "%(rank_model)s")}
    ORDER BY l.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT {CANDIDATES}
),
near_memories AS (
    SELECT m.scope, CASE WHEN m.scope = 'agent' THEN m.owner_id ELSE '' END AS agent_id,
           0::bigint AS ord, m.id AS memory_id
    FROM memories AS m
    WHERE %(rank_memories_read)s AND {_searched_memories("m")}
      AND {current_vector("m", memory_hash("m"), "%(rank_model)s")}
    ORDER BY m.embedding::halfvec <=> %(rank_vector)s::halfvec
    LIMIT {CANDIDATES}
),
near_given AS (
    SELECT x.scope, x.agent_id, x.ord, coalesce(x.memory_id, {_NIL}) AS memory_id
    FROM unnest(%(rank_near_scopes)s::text[], %(rank_near_agent_ids)s::text[],
                %(rank_near_ordinals)s::bigint[], %(rank_near_memory_ids)s::uuid[])
         AS x(scope, agent_id, ord, memory_id)
),
conversations AS (
    SELECT v.scope, v.agent_id
    FROM archival_vocabulary AS v
    WHERE {_searched("v")}
      AND {_conversation("v")}
),
candidates AS (
    SELECT scope, agent_id, ord, memory_id, max(score) AS lexical, max(own) AS own
    FROM (
        SELECT scope, agent_id, ord, memory_id, score, own FROM lexical
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_lines
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_memories
        UNION ALL SELECT scope, agent_id, ord, memory_id, NULL, NULL FROM near_given
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
),
line_cosines AS (
    SELECT * FROM (
        SELECT l.scope, l.agent_id, l.ordinal::bigint AS ord, w.talk,
               (1 - (l.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
        FROM (SELECT DISTINCT c.scope, c.agent_id, c.ord + s.step AS ord,
                     t.scope IS NOT NULL AS talk
              FROM candidates AS c
              CROSS JOIN (VALUES (-1), (0), (1)) AS s(step)
              LEFT JOIN conversations AS t ON t.scope = c.scope AND t.agent_id = c.agent_id
              WHERE c.memory_id = {_NIL} AND (s.step = 0 OR t.scope IS NOT NULL)) AS w
        JOIN archival_lines AS l ON {_of_block("l", "w")} AND l.ordinal = w.ord
        WHERE {current_vector("l", line_hash("l"), "%(rank_model)s")}
    ) AS x
    WHERE cosine <> 'NaN'::float8
),
line_meaning AS (
    SELECT scope, agent_id, ord, {_NIL} AS memory_id, cosine,
           cosine + {NEIGHBOUR_MEANING}
               * coalesce(CASE WHEN talk THEN greatest(before, after) END, cosine) AS meaning
    FROM (
        SELECT scope, agent_id, ord, talk, cosine,
               CASE WHEN lag(ord) OVER w = ord - 1 THEN lag(cosine) OVER w END AS before,
               CASE WHEN lead(ord) OVER w = ord + 1 THEN lead(cosine) OVER w END AS after
        FROM line_cosines
        WINDOW w AS (PARTITION BY scope, agent_id ORDER BY ord)
    ) AS x
),
memory_meaning AS (
    SELECT c.scope, c.agent_id, c.ord, c.memory_id,
           (1 - (m.embedding::halfvec <=> %(rank_vector)s::halfvec))::float8 AS cosine
    FROM candidates AS c
    JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = c.memory_id
    WHERE c.memory_id <> {_NIL} AND {_searched_memories("m")}
      AND {current_vector("m", memory_hash("m"), "%(rank_model)s")}
),
-- Each candidate with its words' score, its meaning and its own cosine: one grouping of
-- the rows of both (a hash or a sort, whatever the planner guessed of their numbers).
scored AS (
    SELECT scope, agent_id, ord, memory_id, coalesce(max(lexical), 0) AS lexical,
           coalesce(max(own), 0) AS own, max(meaning) AS meaning, max(cosine) AS cosine
    FROM (
        SELECT scope, agent_id, ord, memory_id, lexical, own, NULL::float8 AS meaning,
               NULL::float8 AS cosine, true AS candidate
        FROM candidates
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, meaning, cosine, false
        FROM line_meaning
        UNION ALL
        SELECT scope, agent_id, ord, memory_id, NULL, NULL, (1 + {NEIGHBOUR_MEANING}) * cosine,
               cosine, false
        FROM memory_meaning
        WHERE cosine <> 'NaN'::float8
    ) AS x
    GROUP BY scope, agent_id, ord, memory_id
    HAVING bool_or(candidate)
),
spread AS (
    SELECT min(meaning) AS low, max(meaning) AS high FROM scored
),
-- The score (points), and what a candidate earns by itself on a scale of its own
-- (alone; NULL where it is its own words' score: no vector, or no scale of the model).
fused AS (
    SELECT s.*,
           CASE WHEN s.meaning IS NULL THEN s.lexical
                ELSE (1 - %(rank_weight)s) * s.lexical + %(rank_weight)s
                     * coalesce((s.meaning - p.low) / nullif(p.high - p.low, 0), 1)
           END AS points,
           CASE WHEN %(rank_scaled)s AND s.cosine IS NOT NULL
                THEN (1 - %(rank_weight)s) * s.own + %(rank_weight)s
                     * least(1.0, greatest(0.0, (s.cosine - %(rank_unrelated)s)
                                                / (%(rank_answering)s - %(rank_unrelated)s)))
           END AS alone
    FROM scored AS s CROSS JOIN spread AS p
),
texts AS (
    SELECT CASE WHEN f.memory_id = {_NIL} THEN 'line' ELSE 'memory' END AS kind,
           f.scope, f.agent_id,
           CASE WHEN f.scope = 'workspace' THEN m.owner_id ELSE '' END AS workspace_id,
           f.ord, nullif(f.memory_id, {_NIL}) AS memory_id,
           coalesce(l.line_number, 0) AS line_number,
           coalesce(l.content, {MEMORY_SAYS}) AS content,
           f.own, f.alone,
           f.points * CASE WHEN %(rank_speaker)s <> ''
                            AND substring(l.content FROM %(speaker_pattern)s) = %(rank_speaker)s
                           THEN {SPEAKER_BOOST} ELSE 1 END AS raw
    FROM fused AS f
    LEFT JOIN archival_lines AS l
      ON f.memory_id = {_NIL} AND l.tenant_id = %(tenant_id)s AND l.user_id = {_user_of("f")}
     AND l.scope = f.scope AND l.agent_id = f.agent_id AND l.ordinal = f.ord
    LEFT JOIN memories AS m
      ON f.memory_id <> {_NIL} AND m.tenant_id = %(tenant_id)s AND m.id = f.memory_id
     AND {unheld("m")}
    WHERE l.content IS NOT NULL OR m.id IS NOT NULL
),
-- The best match's points, against what it earns by itself on the model's scale (NULL
-- where it has no vector, or the model no scale): the meaning half of the points is
-- spread over the candidates, so the best always has all of it, however far it is.
best AS (
    SELECT raw, alone FROM texts WHERE raw > 0 ORDER BY raw DESC, kind, scope, agent_id, ord
    LIMIT 1
),
-- Scores are the points brought down, all in one ratio (the order stays), until the
-- best match's is what it earns by itself: a query nothing answers scores low.
scaled AS (
    SELECT t.*, least(1.0, t.raw * coalesce(
               (SELECT least(1.0, b.alone / b.raw) FROM best AS b WHERE b.alone IS NOT NULL),
               1.0)) AS score
    FROM texts AS t
),
found AS (
    SELECT kind, scope, agent_id, workspace_id, line_number, memory_id, content,
           score, raw, ord
    FROM scaled
    WHERE raw > 0 AND score >= %(rank_min_score)s
      AND CASE WHEN alone IS NULL THEN own >= %(rank_min_own_words)s
               ELSE alone >= %(rank_min_own)s END
    ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id
    LIMIT %(rank_limit)s
)"""

_FUSED_ORDER: LiteralString = "ORDER BY raw DESC, kind, scope, agent_id, ord, memory_id"
# What Recall runs: the fusion, marking the memories it returns; on a standby, where
# nothing can be written, the fusion alone, in the same order.
RECALL_FUSE: LiteralString = (
    FUSE
    + f",\nused AS ({mark_used('SELECT memory_id FROM found WHERE memory_id IS NOT NULL')})"
    + f"\nSELECT * FROM found {_FUSED_ORDER}"
)
FUSE_ORDERED: LiteralString = FUSE + f"\nSELECT * FROM found {_FUSED_ORDER}"

# How a ranking's matches are ordered, for a caller that aggregates them.
BEST_FIRST_ORDER: LiteralString = "raw DESC, kind, scope, agent_id, ord"

_SCOPES = {"user": Scope.USER, "agent": Scope.AGENT, "workspace": Scope.WORKSPACE}


def rank_params(query: RankQuery) -> dict[str, Any]:
    """The ``rank_`` parameters of the lexical statements (and the caller's agent, and
    the workspace whose archival block is searched)."""
    return {
        "agent_id": query.agent_id,
        "block_workspace_id": query.workspace_id,
        "rank_query": query.query,
        "rank_limit": query.limit,
        "rank_min_score": query.min_score,
        "rank_min_own": query.min_own,
        "rank_min_own_words": query.min_own_words,
        "rank_include_memories": query.include_memories,
        "rank_workspace_id": query.workspace_id,
        "rank_scan": query.scan,
        "rank_cap": query.cap,
        "rank_memory_bound": MEMORY_COUNT_BOUND + 1,
    }


def _owners(tenant_id: str, query: RankQuery) -> dict[str, Any]:
    """The owner keys of the memories ``query`` searches (see store/search.py)."""
    return {
        "rank_agent_owner": memory_owner_key(tenant_id, "agent", query.agent_id),
        "rank_workspace_owner": memory_owner_key(tenant_id, "workspace", query.workspace_id),
    }


def _near(found: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``rank_near_`` parameters of :data:`FUSE`: the nearest :data:`NEAREST` found."""
    return {
        "rank_near_scopes": [r["scope"] for r in found],
        "rank_near_agent_ids": [r["agent_id"] for r in found],
        "rank_near_ordinals": [int(r["ord"]) for r in found],
        "rank_near_memory_ids": [r["memory_id"] for r in found],
    }


def fuse_params(
    query: RankQuery,
    lexical: LexicalPart,
    meaning: Meaning,
    *,
    read_lines: bool = True,
    read_memories: bool = True,
) -> dict[str, Any]:
    """The parameters of :data:`FUSE` (and :data:`NEAREST`), none nearest given yet:
    the lines (``read_lines``) and memories (``read_memories``) nearest in meaning
    found by reading their vectors as they are, or else through an index."""
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
        "rank_dimensions": len(meaning.vector),
        "rank_model": meaning.model,
        "rank_weight": meaning.weight,
        "rank_speaker": meaning.speaker,
        "rank_scaled": meaning.scale is not None,
        "rank_unrelated": meaning.scale.unrelated if meaning.scale else 0.0,
        "rank_answering": meaning.scale.answering if meaning.scale else 1.0,
        "speaker_pattern": SPEAKER,
        "rank_lines_read": read_lines,
        "rank_memories_read": read_memories,
        **_near([]),
    }


def match_from_row(row: Mapping[str, Any]) -> RecallMatch:
    """A match from a row of a ranking statement, or from its JSON."""
    memory_id = row["memory_id"]
    scope = _SCOPES[row["scope"]]
    agent_id, workspace_id = row["agent_id"], row["workspace_id"] or ""
    if scope is Scope.WORKSPACE and memory_id is None:
        # A line of the workspace's block: its owner column holds the workspace's id.
        agent_id, workspace_id = "", agent_id
    return RecallMatch(
        content=row["content"],
        score=float(row["score"]),
        scope=scope,
        agent_id=agent_id,
        line_number=int(row["line_number"]),
        memory_id=as_uuid(memory_id) if memory_id is not None else None,
        workspace_id=workspace_id,
    )


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def matches_from_row(row: Mapping[str, Any]) -> list[RecallMatch]:
    """The matches of a row of :data:`RANK` (or of its JSON)."""
    return [match_from_row(m) for m in _json(row["matches"]) or ()]


def lexical_part_from_row(row: Mapping[str, Any]) -> LexicalPart:
    """The lexical half from the row of :data:`LEXICAL_PART`, or from its JSON."""
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
            for scope, agent_id, ordinal, memory_id, score, own in _json(row["candidates"])
        ),
        speakers=tuple(row["speakers"] or ()),
        lines_scanned=bool(row.get("lines_scanned", True)),
        memories_scanned=bool(row.get("memories_scanned", True)),
        line_count=int(row.get("line_count") or 0),
        memory_count=int(row.get("memory_count") or 0),
    )


class Ranking:
    """The statements of one ranking, run on one connection for one caller."""

    def __init__(
        self,
        conn: Connection,
        principal: Principal,
        *,
        marks: bool,
        indexed: IndexedRows | None = None,
    ) -> None:
        """``marks``: mark the memories a ranking returns as used (not on a standby).
        ``indexed``: what says when walking a model's index beats reading vectors (the
        database's, kept between calls; a new one counts the index again)."""
        self._conn = conn
        self._marks = marks
        self._indexed = indexed or IndexedRows()
        self._tenant = principal.tenant_id
        self._user = principal.user_id
        self._caller = {"tenant_id": principal.tenant_id, "user_id": principal.user_id}

    def _params(self, query: RankQuery) -> dict[str, Any]:
        return {**self._caller, **rank_params(query), "rank_memory_ids": []}

    async def _given(self, query: RankQuery, row: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters of a second ranking with the candidate memories, where the first
        (which returned ``row``) found the searched memories too many to read."""
        params = {**self._params(query), **_owners(self._tenant, query)}
        if row["memory_query"]:
            params["rank_memory_query"] = row["memory_query"]
            found = await fetch_all_planned(self._conn, MEMORY_CANDIDATES, params)
            params["rank_memory_ids"] = [r["id"] for r in found]
        return params

    async def rank(self, query: RankQuery) -> list[RecallMatch]:
        """The matches by words, best first."""
        statement = RECALL_RANK if self._marks else RANK
        row = await fetch_one(self._conn, statement, self._params(query))
        assert row is not None  # one row, always
        return await self.finish(query, row)

    async def finish(self, query: RankQuery, row: Mapping[str, Any]) -> list[RecallMatch]:
        """The matches of a ranking by words whose first statement returned ``row``."""
        if _json(row["memories_scanned"]) is not False:
            return matches_from_row(row)
        statement = RECALL_RANK_GIVEN if self._marks else RANK_GIVEN
        found = await fetch_one(self._conn, statement, await self._given(query, row))
        assert found is not None
        return matches_from_row(found)

    async def lexical(self, query: RankQuery) -> LexicalPart:
        row = await fetch_one(self._conn, LEXICAL_PART, self._params(query))
        assert row is not None  # one row, always
        return await self.finish_lexical(query, row)

    async def finish_lexical(self, query: RankQuery, row: Mapping[str, Any]) -> LexicalPart:
        """The lexical half whose first statement returned ``row``."""
        if _json(row["memories_scanned"]) is not False:
            return lexical_part_from_row(row)
        found = await fetch_one(self._conn, LEXICAL_PART_GIVEN, await self._given(query, row))
        assert found is not None
        return lexical_part_from_row(found)

    async def fuse(
        self, query: RankQuery, lexical: LexicalPart, meaning: Meaning
    ) -> list[RecallMatch]:
        read_lines = await self._read(
            "archival_lines", lexical.line_count, lexical.lines_scanned, query, meaning
        )
        read_memories = await self._read(
            "memories", lexical.memory_count, lexical.memories_scanned, query, meaning
        )
        params = {
            **self._caller,
            **fuse_params(
                query, lexical, meaning, read_lines=read_lines, read_memories=read_memories
            ),
        }
        if not (read_lines and read_memories):
            found = await fetch_all_planned(self._conn, NEAREST, params, by_index=True)
            params.update(_near(found))
        statement = RECALL_FUSE if self._marks else FUSE_ORDERED
        return [match_from_row(r) for r in await fetch_all(self._conn, statement, params)]

    async def _read(
        self, table: str, count: int, scanned: bool, query: RankQuery, meaning: Meaning
    ) -> bool:
        """Whether the nearest rows of ``table`` are found by reading the searched ones'
        vectors as they are: few enough, or too small a share of the model's index for
        a walk of it to pay."""
        if scanned or count <= query.scan:
            return True
        with database_errors():
            pays = await self._indexed.walk_pays(
                self._conn, table, meaning.model, len(meaning.vector), count
            )
        return not pays


class PgRecall(RecallRepository):
    def __init__(
        self,
        conn: Connection,
        principal: Principal,
        *,
        marks: bool = True,
        indexed: IndexedRows | None = None,
        as_of: datetime | None = None,
    ) -> None:
        """``marks``: mark the memories a ranking returns as used (not on a standby).
        ``as_of``: rank what could be searched then, by words."""
        self._conn = conn
        self._ranking = Ranking(conn, principal, marks=marks, indexed=indexed)
        self._caller = {"tenant_id": principal.tenant_id, "user_id": principal.user_id}
        self._as_of = as_of

    async def rank(self, query: RankQuery) -> list[RecallMatch]:
        if self._as_of is not None:
            return await rank_at(self._conn, self._caller, query, self._as_of)
        # At most 100 matches, all ranked before the first is known: fetched at once.
        return await self._ranking.rank(query)

    async def lexical(self, query: RankQuery) -> LexicalPart:
        return await self._ranking.lexical(query)

    async def fuse(
        self, query: RankQuery, lexical: LexicalPart, meaning: Meaning
    ) -> list[RecallMatch]:
        return await self._ranking.fuse(query, lexical, meaning)

    async def vectors_available(self) -> bool:
        row = await fetch_one(self._conn, PGVECTOR_INSTALLED, {})
        return bool(row and row["installed"])

    async def has_archival(self, agent_id: str, workspace_id: str = "") -> bool:
        statement: LiteralString = "SELECT " + HAS_ARCHIVAL + " AS found"
        params = {**self._caller, "agent_id": agent_id, "block_workspace_id": workspace_id}
        row = await fetch_one(self._conn, statement, params)
        return bool(row and row["found"])

    async def indexing(self, model: str) -> IndexingStatus:
        params = status_params(self._caller["tenant_id"], model)
        row = await fetch_one(self._conn, INDEXING_STATUS, params)
        assert row is not None  # one row, always
        return indexing_status(row)


# A query's terms, any of which a line may hold.
_TERMS: LiteralString = (
    "(SELECT nullif(replace(plainto_tsquery('english', %(query)s)::text, '&', '|'), '')::tsquery"
    " AS q)"
)
# Recall by words as of then: the non-empty lines of each block's version of then, and
# the memories shown then, each scored by how much of the query it holds, in [0, 1).
_RANK_AT: LiteralString = f"""
WITH terms AS {_TERMS},
lines AS (
    SELECT a.scope, a.agent_id, l.n::int AS line_number, l.content
    FROM {ARCHIVAL_AT} AS a,
         regexp_split_to_table(a.content, E'\\n') WITH ORDINALITY AS l(content, n)
    WHERE btrim(l.content, E' \\t') <> ''
),
found AS (
    SELECT l.content, l.scope, l.agent_id, NULL::text AS workspace_id, l.line_number,
           NULL::uuid AS memory_id,
           ts_rank_cd(to_tsvector('english', l.content), terms.q, 32) AS score
    FROM lines AS l, terms
    WHERE to_tsvector('english', l.content) @@ terms.q
    UNION ALL
    SELECT {MEMORY_SAYS}, m.scope,
           CASE m.scope WHEN 'agent' THEN m.owner_id ELSE '' END,
           CASE m.scope WHEN 'workspace' THEN m.owner_id END, 0, m.id,
           ts_rank_cd(to_tsvector('english', m.key || ' ' || m.value), terms.q, 32)
    FROM {memories_at(BY_AGENT_OR_WORKSPACE)} AS m, terms
    WHERE %(include_memories)s
      AND ((m.scope = 'agent' AND m.owner_id = %(agent_id)s)
           OR (m.scope = 'workspace' AND m.owner_id = %(workspace_id)s::text))
      AND m.superseded_by IS NULL AND {unheld("m")}
      AND tstzrange(m.valid_start_time, m.valid_end_time)
          * tstzrange(NULL, m.expire_time) @> %(as_of)s::timestamptz
      AND to_tsvector('english', m.key || ' ' || m.value) @@ terms.q
)
SELECT * FROM found
WHERE score >= %(min_score)s
ORDER BY score DESC, scope, agent_id, line_number, memory_id
LIMIT %(limit)s
"""


async def rank_at(
    conn: Connection, caller: dict[str, Any], query: RankQuery, as_of: datetime
) -> list[RecallMatch]:
    """Recall by words over what the caller could search at ``as_of`` (see
    :mod:`agent_memory.store.history`)."""
    params = {
        **caller,
        "as_of": as_of,
        "query": query.query,
        "agent_id": query.agent_id,
        "workspace_id": query.workspace_id or None,
        "block_workspace_id": query.workspace_id,
        "include_memories": query.include_memories,
        "min_score": max(query.min_score, query.min_own_words),
        "limit": query.limit,
    }
    rows = await fetch_all(conn, _RANK_AT, params)
    return [match_from_row(r) for r in rows]
