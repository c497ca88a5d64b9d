"""Blocks of one user and of the workspaces of its tenant, each write in one statement
with its version and lines.

A block's key is (tenant, user, scope, owner, label), the owner held in ``agent_id``:
the agent's id for an agent block, empty for a user block. A workspace block is the
tenant's, not one user's: its user is empty and its owner is the workspace's id, so
every user of the tenant who names the workspace reaches the same row (and the same
versions and lines), under the same compare-and-set.

A compare-and-set write locks the block, replaces it only when its ``updated_at`` is
the one expected, keeps the new version, prunes the oldest and (for archival
blocks) rewrites the changed lines; when the precondition fails the same statement
returns the block as it is, so a conflict needs no second round trip and no
rollback.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, LiteralString

from agent_memory.domain.blocks import (
    Block,
    BlockKey,
    BlockLabel,
    BlockScope,
    BlockVersion,
    BlockWrite,
    ScopeFilter,
    entries,
)
from agent_memory.domain.errors import FailedPrecondition
from agent_memory.domain.history import DEFAULT_HISTORY
from agent_memory.domain.identity import Principal
from agent_memory.store.columns import compact, insert_columns, insert_values, output
from agent_memory.store.models import BlockRow, BlockVersionRow
from agent_memory.store.repositories import BlockRepository
from agent_memory.store.sql import Connection, Row, fetch_all, fetch_one
from agent_memory.store.vectors import SPEAKER, indexed, line_hash


def _is_owner(a: LiteralString) -> LiteralString:
    """The (user, scope, agent) the parameters name: its blocks, and the lines,
    vocabulary and terms of its archival block.

    A statement that changes one block names its rows by these parameters, not by a
    join to the block it read: the planner then reads them through the key's index,
    whatever it guesses of the sizes (a join may scan every row of the tenant)."""
    return f"""{a}.tenant_id = %(tenant_id)s AND {a}.user_id = %(user_id)s
      AND {a}.scope = %(scope)s AND {a}.agent_id = %(agent_id)s"""


def _is_block(a: LiteralString) -> LiteralString:
    """The block the parameters name."""
    return f"""{_is_owner(a)} AND {a}.label = %(label)s"""


def _same_block(a: LiteralString, b: LiteralString) -> LiteralString:
    return f"""{a}.tenant_id = %(tenant_id)s AND {a}.user_id = {b}.user_id
      AND {a}.scope = {b}.scope AND {a}.agent_id = {b}.agent_id AND {a}.label = {b}.label"""


def _same_owner(a: LiteralString, b: LiteralString) -> LiteralString:
    """Archival lines belong to the (user, scope, agent) of their block."""
    return f"""{a}.tenant_id = %(tenant_id)s AND {a}.user_id = {b}.user_id
      AND {a}.scope = {b}.scope AND {a}.agent_id = {b}.agent_id"""


def _columns(a: LiteralString) -> LiteralString:
    """What a statement returns of a block."""
    return output(BlockRow, a)


# A block's indexed lines are counted up to this many: a read of a block costs no more
# than that, however large the block.
INDEXED_COUNT_BOUND = 100_000


def _indexed(a: LiteralString) -> LiteralString:
    """How many lines of block ``a`` have a vector of the model recall runs (up to the
    bound)."""
    return f"""CASE WHEN {a}.label = 'archival' THEN (
        SELECT count(*) FROM (
            SELECT FROM archival_lines AS l
            WHERE {_same_owner("l", a)} AND {indexed("l", "%(index_model)s")}
            LIMIT {INDEXED_COUNT_BOUND}) AS x
    ) ELSE 0 END AS indexed_line_count"""


_GET: LiteralString = (
    f"SELECT {_columns('b')}, {_indexed('b')} FROM blocks AS b WHERE {_is_block('b')}"
)
# The block as it was at %(as_of)s: its newest version written by then (no version by
# then of a block created by then: its versions of then are pruned). Its indexed lines
# are not counted: they are the lines of now.
_GET_AT: LiteralString = f"""
SELECT {_columns("x")}, 0 AS indexed_line_count, x.pruned
FROM (
    SELECT b.tenant_id, b.user_id, b.scope, b.agent_id, b.label,
           coalesce(v.content, '') AS content, coalesce(v.version, 0) AS version,
           b.created_at, coalesce(v.written_at, b.created_at) AS updated_at,
           v.version IS NULL AS pruned
    FROM blocks AS b
    LEFT JOIN LATERAL (
        SELECT v.version, v.content, v.written_at FROM block_versions AS v
        WHERE {_same_block("v", "b")} AND v.written_at <= %(as_of)s
        ORDER BY v.version DESC LIMIT 1
    ) AS v ON true
    WHERE {_is_block("b")} AND b.created_at <= %(as_of)s
) AS x
"""


_SELECT: LiteralString = f"""
SELECT {_columns("b")}, {_indexed("b")} FROM blocks AS b
WHERE tenant_id = %(tenant_id)s
  AND ((user_id = %(user_id)s
        AND ((scope = 'user' AND %(users)s)
             OR (scope = 'agent' AND %(agents)s
                 AND (%(agent_id)s = '' OR agent_id = %(agent_id)s))))
       OR (user_id = '' AND scope = 'workspace' AND %(workspaces)s
           AND agent_id = %(workspace_id)s))
ORDER BY scope = 'workspace', scope = 'agent', agent_id, label = 'archival'
"""

_CREATE: LiteralString = f"""
WITH written AS (
    INSERT INTO blocks ({insert_columns(BlockRow)})
    VALUES ({insert_values(BlockRow)})
    ON CONFLICT (tenant_id, user_id, scope, agent_id, label) DO NOTHING
    RETURNING *
),
current AS (
    SELECT * FROM blocks AS b WHERE {_is_block("b")}
),"""

# A write prunes at most this many of the block's oldest versions: it reads no more of
# them, however many the history keeps, and a longer backlog drains a few at each write.
PRUNED_PER_WRITE = 8

# Strictly later than the previous write even when the clock stands still or steps back,
# so a writer holding the old updated_at can never match the new one. A version goes
# once the newest ``keep`` are newer and the version after it was written before the
# history's horizon, so a read as of any instant within it still finds its version
# (versions are written in order of time: the next one is the oldest newer one).
_REPLACE: LiteralString = f"""
WITH current AS (
    SELECT * FROM blocks AS b WHERE {_is_block("b")}
    FOR UPDATE
),
written AS (
    UPDATE blocks AS b
    SET content = %(content)s, version = c.version + 1,
        updated_at = greatest(clock_timestamp(), c.updated_at + interval '1 microsecond')
    FROM current AS c
    WHERE {_is_block("b")} AND c.updated_at = %(expected)s
    RETURNING b.*
),
pruned AS (
    DELETE FROM block_versions AS v
    WHERE {_is_block("v")}
      AND v.version <= (
          SELECT max(o.version) FROM (
              SELECT o.version FROM block_versions AS o
              WHERE {_is_block("o")} AND o.version <= (SELECT version FROM written) - %(keep)s
              ORDER BY o.version LIMIT {PRUNED_PER_WRITE}) AS o)
      AND v.written_at < statement_timestamp() - %(kept)s::interval
      AND (SELECT n.written_at FROM block_versions AS n
           WHERE {_is_block("n")} AND n.version > v.version
           ORDER BY n.version LIMIT 1) < statement_timestamp() - %(kept)s::interval
),"""

_KEEP_VERSION: LiteralString = """
kept AS (
    INSERT INTO block_versions (tenant_id, user_id, scope, agent_id, label, version, content,
                                char_count, writer_user_id, written_at)
    SELECT tenant_id, user_id, scope, agent_id, label, version, content, %(char_count)s,
           %(writer_user_id)s, updated_at
    FROM written
)"""

# The block's non-empty lines: those gone are deleted, the others written where they
# changed (a line's lexemes are recomputed only then), each taking the vector of a line
# of the block that held the same text, if any; what recall needs of the block as a
# whole (its speakers, line count and total length); and its terms, each with the
# ordinals of the lines that hold it (only those that changed are written).
_LINES: LiteralString = f""",
embedded AS (
    SELECT DISTINCT ON (o.content) o.content, o.embedding, o.embedding_model, o.embedded_hash
    FROM archival_lines AS o
    WHERE o.tenant_id = %(tenant_id)s AND o.user_id = %(user_id)s AND o.scope = %(scope)s
      AND o.agent_id = %(agent_id)s AND o.embedding IS NOT NULL
      AND o.embedded_hash = {line_hash("o")}
    ORDER BY o.content, o.embedding_model IS NOT DISTINCT FROM %(index_model)s DESC
),
lines_gone AS (
    DELETE FROM archival_lines AS l
    USING written AS w
    WHERE {_is_owner("l")} AND l.line_number <> ALL (%(line_numbers)s::integer[])
),
lines_put AS (
    INSERT INTO archival_lines AS l (tenant_id, user_id, scope, agent_id, line_number,
                                     ordinal, content, embedding, embedding_model,
                                     embedded_hash)
    SELECT w.tenant_id, w.user_id, w.scope, w.agent_id, x.line_number, x.ordinal, x.content,
           e.embedding, e.embedding_model, e.embedded_hash
    FROM written AS w
    CROSS JOIN unnest(%(line_numbers)s::integer[], %(line_contents)s::text[])
        WITH ORDINALITY AS x(line_number, content, ordinal)
    LEFT JOIN embedded AS e ON e.content = x.content
    ON CONFLICT (tenant_id, user_id, scope, agent_id, line_number) DO UPDATE
    SET content = excluded.content, ordinal = excluded.ordinal,
        embedding = excluded.embedding, embedding_model = excluded.embedding_model,
        embedded_hash = excluded.embedded_hash, index_lease_until = NULL
    WHERE l.content IS DISTINCT FROM excluded.content OR l.ordinal <> excluded.ordinal
),
analysed AS (
    SELECT t.line, t.ordinal, to_tsvector('english', t.line) AS lexemes
    FROM unnest(%(line_contents)s::text[]) WITH ORDINALITY AS t(line, ordinal)
),
speaking AS (
    SELECT s.name
    FROM (SELECT substring(a.line FROM %(speaker_pattern)s) AS name FROM analysed AS a) AS s
    WHERE s.name IS NOT NULL
    GROUP BY s.name
    HAVING count(*) >= 2
),
vocabulary AS (
    INSERT INTO archival_vocabulary (tenant_id, user_id, scope, agent_id, line_count,
                                     lexeme_total, speakers)
    SELECT w.tenant_id, w.user_id, w.scope, w.agent_id,
           (SELECT count(*) FROM analysed),
           (SELECT coalesce(sum(length(a.lexemes)), 0) FROM analysed AS a),
           coalesce((SELECT array_agg(name ORDER BY name) FROM speaking), '{{}}')
    FROM written AS w
    ON CONFLICT (tenant_id, user_id, scope, agent_id) DO UPDATE
    SET line_count = excluded.line_count, lexeme_total = excluded.lexeme_total,
        speakers = excluded.speakers
),
terms AS (
    SELECT u.lexeme, count(*) AS lines, array_agg(a.ordinal ORDER BY a.ordinal) AS ordinals
    FROM analysed AS a, unnest(a.lexemes) AS u
    GROUP BY u.lexeme
),
terms_gone AS (
    DELETE FROM archival_terms AS t
    USING written AS w
    WHERE {_is_owner("t")} AND t.lexeme NOT IN (SELECT lexeme FROM terms)
),
terms_put AS (
    INSERT INTO archival_terms AS t (tenant_id, user_id, scope, agent_id, lexeme, lines,
                                     ordinals)
    SELECT w.tenant_id, w.user_id, w.scope, w.agent_id, x.lexeme, x.lines, x.ordinals
    FROM written AS w, terms AS x
    ON CONFLICT (tenant_id, user_id, scope, agent_id, lexeme) DO UPDATE
    SET lines = excluded.lines, ordinals = excluded.ordinals
    WHERE t.ordinals <> excluded.ordinals
)"""

# A written block's indexed lines: those that kept or took the vector of a line of the
# same text (the statement's other parts do not see the lines it writes).
_WRITTEN_INDEXED: dict[BlockLabel, LiteralString] = {
    BlockLabel.CORE: "0",
    BlockLabel.ARCHIVAL: """(
    SELECT count(*) FROM unnest(%(line_contents)s::text[]) AS t(line)
    JOIN embedded AS e ON e.content = t.line
    WHERE e.embedding_model = %(index_model)s)""",
}


def _outcome(label: BlockLabel) -> LiteralString:
    return f"""
SELECT true AS written, {_columns("w")}, {_WRITTEN_INDEXED[label]} AS indexed_line_count
FROM written AS w
UNION ALL
SELECT false, {_columns("c")}, {_indexed("c")} FROM current AS c
WHERE NOT EXISTS (SELECT FROM written)
"""


# Compacted: psycopg parses a statement of more than 4,096 bytes again at every call,
# and a block's write is on every compare-and-set.
_WRITES: dict[tuple[bool, BlockLabel], LiteralString] = {
    (replace, label): compact(
        (_REPLACE if replace else _CREATE)
        + _KEEP_VERSION
        + (_LINES if label is BlockLabel.ARCHIVAL else "")
        + _outcome(label)
    )
    for replace in (False, True)
    for label in BlockLabel
}

_DELETE: LiteralString = f"""
WITH current AS (
    SELECT * FROM blocks AS b WHERE {_is_block("b")}
    FOR UPDATE
),
gone AS (
    DELETE FROM blocks AS b
    USING current AS c
    WHERE {_is_block("b")}
      AND (%(expected)s::timestamptz IS NULL OR c.updated_at = %(expected)s::timestamptz)
    RETURNING b.*
),
lines_gone AS (
    DELETE FROM archival_lines AS l
    USING gone AS g
    WHERE {_is_owner("l")} AND g.label = 'archival'
),
vocabulary_gone AS (
    DELETE FROM archival_vocabulary AS v
    USING gone AS g
    WHERE {_is_owner("v")} AND g.label = 'archival'
),
terms_gone AS (
    DELETE FROM archival_terms AS t
    USING gone AS g
    WHERE {_is_owner("t")} AND g.label = 'archival'
)
SELECT EXISTS (SELECT FROM gone) AS deleted, {_columns("c")}, 0 AS indexed_line_count
FROM current AS c
"""

# No row: the block does not exist. Otherwise one row per version, or a row of NULLs.
_VERSIONS: LiteralString = f"""
SELECT {output(BlockVersionRow, "v")}
FROM blocks AS b
LEFT JOIN LATERAL (
    SELECT * FROM block_versions AS v
    WHERE {_same_block("v", "b")}
      AND (%(before)s::bigint IS NULL OR v.version < %(before)s::bigint)
    ORDER BY v.version DESC
    LIMIT %(limit)s
) AS v ON true
WHERE {_is_block("b")}
ORDER BY v.version DESC
"""


def key_from_row(row: Mapping[str, Any]) -> BlockKey:
    """The key of a row of ``blocks``: its owner column holds the agent's or the
    workspace's id."""
    scope = BlockScope(row["scope"])
    if scope is BlockScope.WORKSPACE:
        return BlockKey(BlockLabel(row["label"]), scope, workspace_id=row["agent_id"])
    return BlockKey(BlockLabel(row["label"]), scope, row["agent_id"])


def block_from_row(row: Row) -> Block:
    return Block(
        key=key_from_row(row),
        content=row["content"],
        version=row["version"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        indexed_line_count=int(row["indexed_line_count"]),
    )


class PgBlocks(BlockRepository):
    def __init__(
        self,
        conn: Connection,
        principal: Principal,
        index_model: str | None,
        *,
        as_of: datetime | None = None,
        kept: timedelta = DEFAULT_HISTORY,
    ) -> None:
        """``as_of``: read blocks as they were then; such a repository only reads.
        ``kept``: how long versions are kept for as-of reads beyond the newest ``keep``
        of a write (with, of those older, the newest: the block's state then)."""
        self._conn = conn
        self._as_of = as_of
        self._kept = kept
        self._user = {
            "tenant_id": principal.tenant_id,
            "user_id": principal.user_id,
            "index_model": index_model,
        }
        self._writer = principal.user_id

    def _block(self, key: BlockKey) -> dict[str, Any]:
        """The parameters naming ``key``'s row: a workspace's has no user."""
        return {
            **self._user,
            "user_id": "" if key.shared else self._writer,
            "scope": key.scope.value,
            "agent_id": key.owner_id,
            "label": key.label.value,
        }

    async def get(self, key: BlockKey) -> Block | None:
        if self._as_of is not None:
            row = await fetch_one(self._conn, _GET_AT, {**self._block(key), "as_of": self._as_of})
            if row and row["pruned"]:
                raise FailedPrecondition(
                    f"the block's versions of {self._as_of.isoformat()} are no longer kept",
                    reason="HISTORY_PRUNED",
                    metadata={"as_of_time": self._as_of.isoformat()},
                )
            return block_from_row(row) if row else None
        row = await fetch_one(self._conn, _GET, self._block(key))
        return block_from_row(row) if row else None

    async def select(
        self, scope_filter: ScopeFilter, agent_id: str, workspace_id: str = ""
    ) -> list[Block]:
        params = {
            **self._user,
            "users": scope_filter in (ScopeFilter.USER, ScopeFilter.ALL),
            "agents": scope_filter in (ScopeFilter.AGENT, ScopeFilter.ALL),
            "agent_id": agent_id,
            "workspaces": bool(workspace_id)
            and scope_filter in (ScopeFilter.WORKSPACE, ScopeFilter.ALL),
            "workspace_id": workspace_id,
        }
        return [block_from_row(r) for r in await fetch_all(self._conn, _SELECT, params)]

    async def write(
        self,
        key: BlockKey,
        content: str,
        *,
        expected: datetime | None,
        keep: int,
    ) -> BlockWrite:
        params = {
            **self._block(key),
            "writer_user_id": self._writer,
            "content": content,
            "char_count": len(content),
            "expected": expected,
            "keep": keep,
            "kept": self._kept,
        }
        if key.label is BlockLabel.ARCHIVAL:
            lines = entries(content)
            params["line_numbers"] = [n for n, _ in lines]
            params["line_contents"] = [line for _, line in lines]
            params["speaker_pattern"] = SPEAKER
        row = await fetch_one(self._conn, _WRITES[expected is not None, key.label], params)
        if row is None:
            # Created by a concurrent writer after this statement's snapshot was taken.
            return BlockWrite(written=None, current=await self.get(key))
        block = block_from_row(row)
        return BlockWrite(written=block if row["written"] else None, current=block)

    async def delete(
        self, key: BlockKey, *, expected: datetime | None
    ) -> tuple[bool, Block | None]:
        row = await fetch_one(self._conn, _DELETE, {**self._block(key), "expected": expected})
        if row is None:
            return False, None
        return bool(row["deleted"]), block_from_row(row)

    async def versions(
        self, key: BlockKey, *, before: int | None, limit: int
    ) -> list[BlockVersion] | None:
        params = {**self._block(key), "before": before, "limit": limit}
        rows = await fetch_all(self._conn, _VERSIONS, params)
        if not rows:
            return None
        return [
            BlockVersion(
                version=r["version"],
                content=r["content"],
                char_count=r["char_count"],
                writer_user_id=r["writer_user_id"],
                written_at=r["written_at"],
            )
            for r in rows
            if r["version"] is not None
        ]
