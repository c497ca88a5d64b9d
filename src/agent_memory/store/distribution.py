"""How the schema spreads over a Citus cluster, by tenant.

Every table that holds a tenant's rows is distributed by ``tenant_id``, all of them
colocated with ``memories``: one tenant's rows of every table live on one worker,
and each statement a request sends constrains ``tenant_id`` by equality, so Citus
routes it to that worker whole (joins, CTEs and foreign keys included). Tables read
before the tenant is known are reference tables, copied to every worker.

Background work (the extraction queue, the indexer, the expiry sweeper) first reads
across tenants which have work due, locking and changing nothing, then claims and
changes one tenant's rows at a time: those reads are the only statements that span
tenants, and they are listed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString

import psycopg
from psycopg import sql

from agent_memory.store.history import HISTORY_CROSSED
from agent_memory.store.indexing import INDEX_DISCOVERY, INDEXING_OVERVIEW
from agent_memory.store.jobs import DUE_TENANTS
from agent_memory.store.memories import EXPIRED_TENANTS
from agent_memory.store.models import Base

DISTRIBUTION_COLUMN = "tenant_id"
# The table the others are colocated with.
ANCHOR = "memories"
# Read by key id to learn the caller's tenant: small, written rarely, on every worker;
# and the service's own tables of index workers, of page token keys and of how far the
# history sweep went, which hold no tenant's rows.
REFERENCE_TABLES = ("api_keys", "index_workers", "page_token_keys", "history_sweep")
# Reads across tenants that lock and change nothing (and the indexing gauges' count of
# what waits); every other statement on a distributed table names its tenant.
CROSS_TENANT_READS: tuple[LiteralString, ...] = (
    EXPIRED_TENANTS,
    HISTORY_CROSSED,
    DUE_TENANTS,
    *INDEX_DISCOVERY,
    INDEXING_OVERVIEW,
)


def distributed_tables() -> list[str]:
    """The tables distributed by tenant: the anchor first, then every other table
    holding ``tenant_id`` with the tables its foreign keys name before it."""
    tables = [
        t.name
        for t in Base.metadata.sorted_tables
        if DISTRIBUTION_COLUMN in t.columns and t.name not in REFERENCE_TABLES
    ]
    return [ANCHOR, *(t for t in tables if t != ANCHOR)]


@dataclass(frozen=True)
class Distribution:
    """What ``distribute`` did: tables it distributed or made reference tables now, and
    those that already were."""

    distributed: list[str]
    referenced: list[str]
    already: list[str]

    def describe(self) -> str:
        done = [*self.distributed, *self.referenced]
        if not done:
            return f"every table already distributed or a reference table ({len(self.already)})"
        return (
            f"distributed by {DISTRIBUTION_COLUMN}: {', '.join(self.distributed) or 'none'}; "
            f"reference tables: {', '.join(self.referenced) or 'none'}"
            + (f"; {len(self.already)} already were" if self.already else "")
        )


class NoCitus(Exception):
    """The database has no ``citus`` extension: there is nothing to distribute with."""


def distribute(url: str) -> Distribution:
    """Make the distributed and reference tables, each once (a second run does nothing).

    Raises:
        NoCitus: the ``citus`` extension is not installed in the database; the message
            says whether this PostgreSQL offers it at all.
    """
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT FROM pg_extension WHERE extname = 'citus'").fetchone() is None:
            offered = conn.execute(
                "SELECT FROM pg_available_extensions WHERE name = 'citus'"
            ).fetchone()
            raise NoCitus(
                "the citus extension is not installed in this database: run CREATE "
                "EXTENSION citus on the coordinator first"
                if offered is not None
                else "this PostgreSQL has no Citus: install Citus on the coordinator and "
                "the workers, or run migrate without --distribute"
            )
        placed = {
            str(name)
            for (name,) in conn.execute(
                "SELECT logicalrelid::regclass::text FROM pg_dist_partition"
            )
        }
        referenced = [t for t in REFERENCE_TABLES if t not in placed]
        for table in referenced:
            conn.execute("SELECT create_reference_table(%s)", (table,))
        distributed = [t for t in distributed_tables() if t not in placed]
        for table in distributed:
            colocate = "default" if table == ANCHOR else ANCHOR
            conn.execute(
                sql.SQL("SELECT create_distributed_table({}, {}, colocate_with => {})").format(
                    sql.Literal(table), sql.Literal(DISTRIBUTION_COLUMN), sql.Literal(colocate)
                )
            )
        already = sorted(placed & {*REFERENCE_TABLES, *distributed_tables()})
    return Distribution(distributed, referenced, already)
