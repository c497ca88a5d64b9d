"""The approximate indexes recall walks for an owner with many vectors: one HNSW index
(pgvector) per table and model, over the rows of that model only, at its dimensions.

A model's vectors can only be indexed once its dimensions are known, and models come
and go with the settings, so the indexes are not the migrations': the indexer makes
its model's the first time it stores vectors (``CREATE INDEX CONCURRENTLY``, which
leaves writes and reads running while it builds). Recall is right without them, and
reads an owner's vectors as they are until they exist (store/recall.py).

Built in the database's processes: an index over many rows takes a while and CPU
there. Where the database's server runs as this process's user (the embedded one),
the session that builds it gives way to everything else (see store/priority.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Any, LiteralString

import psycopg
from psycopg import sql

from agent_memory.store.priority import yield_to_others

log = logging.getLogger(__name__)

TABLES: Sequence[str] = ("archival_lines", "memories")


def index_name(table: str, model: str, dimensions: int) -> str:
    """The name of ``model``'s index on ``table``: short and the same everywhere."""
    digest = hashlib.sha256(f"{model}\n{dimensions}".encode()).hexdigest()[:12]
    return f"ix_{table}_hnsw_{digest}"


def _create(table: str, model: str, dimensions: int) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING hnsw "
        "((embedding::halfvec({dimensions})) halfvec_cosine_ops) "
        "WHERE embedding_model = {model}"
    ).format(
        name=sql.Identifier(index_name(table, model, dimensions)),
        table=sql.Identifier(table),
        dimensions=sql.Literal(int(dimensions)),
        model=sql.Literal(model),
    )


# An index walk filtered to one owner's rows visits about ``k / share`` of them (the
# share: the owner's rows among the model's), each several times what comparing one
# row of a scan costs: the walk pays once ``owner ** 2 > WALK_PAYS * rows of the model``.
# Measured (bench/growth.py, 8 clients): an owner of 10,000 lines, 9% of the index, is
# read as it is in 249 ms at the median, and walked in 415.
WALK_PAYS = 4000.0
# How long the number of a model's indexed rows is taken as known.
COUNT_SECONDS = 60.0

_ROWS: LiteralString = (
    "SELECT c.reltuples FROM pg_class AS c JOIN pg_index AS i ON i.indexrelid = c.oid "
    "WHERE c.relname = %(name)s AND i.indisvalid"
)


class IndexedRows:
    """How many rows each model's approximate index holds, as the catalogue says (kept
    for a minute): whether walking it beats reading an owner's vectors as they are."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[float, float | None]] = {}

    async def walk_pays(
        self,
        conn: psycopg.AsyncConnection[Any],
        table: str,
        model: str,
        dimensions: int,
        owner_rows: int,
    ) -> bool:
        """Whether an index walk for an owner of ``owner_rows`` rows beats a scan of them:
        there is an index of the model, and the owner is a large enough share of it."""
        rows = await self._rows(conn, index_name(table, model, dimensions))
        return rows is not None and owner_rows * owner_rows > WALK_PAYS * max(rows, 1.0)

    async def _rows(self, conn: psycopg.AsyncConnection[Any], name: str) -> float | None:
        now = time.monotonic()
        known = self._known.get(name)
        if known is not None and now - known[0] < COUNT_SECONDS:
            return known[1]
        cursor = await conn.execute(_ROWS, {"name": name})
        row = await cursor.fetchone()
        rows: float | None = None
        if row is not None:
            value = float(row["reltuples"] if isinstance(row, dict) else row[0])
            rows = value if value >= 0 else 0.0  # -1: never counted yet
        self._known[name] = (now, rows)
        return rows


_STATE = sql.SQL(
    "SELECT i.indisvalid AS valid FROM pg_class AS c JOIN pg_index AS i ON i.indexrelid = c.oid "
    "WHERE c.relname = {name}"
)


# What a build may use: the graph of a few hundred thousand vectors fits (a larger one
# is built more slowly, on disk), in the session that builds, which works alone (no
# parallel workers, whose processes could not be lowered in priority).
BUILD_MEMORY = "256MB"


async def ensure(url: str, model: str, dimensions: int, *, memory: str = BUILD_MEMORY) -> list[str]:
    """Make ``model``'s indexes where they are missing; the names of those that are
    there and usable now. Without a time limit: a build over many rows takes as long
    as it takes, on a connection of its own, with ``memory`` to build in.

    Raises:
        psycopg.Error: the database refused (no pgvector, or no right to create).
    """
    ready: list[str] = []
    async with await psycopg.AsyncConnection.connect(
        url,
        autocommit=True,
        options=(
            f"-c statement_timeout=0 -c maintenance_work_mem={memory}"
            " -c max_parallel_maintenance_workers=0"
        ),
        application_name="agent-memory-index-build",
    ) as conn:
        await yield_to_others(conn)
        for table in TABLES:
            name = index_name(table, model, dimensions)
            # Another indexer may have created it meanwhile.
            with contextlib.suppress(psycopg.errors.UniqueViolation):
                await conn.execute(_create(table, model, dimensions))
            row = await (await conn.execute(_STATE.format(name=sql.Literal(name)))).fetchone()
            if row is not None and row[0]:
                ready.append(name)
            elif row is not None:
                log.warning(
                    "the index %s is not usable (a build that did not finish, or one under way "
                    "elsewhere); recall reads without it. Rebuild it with REINDEX INDEX "
                    "CONCURRENTLY %s",
                    name,
                    name,
                )
    return ready
