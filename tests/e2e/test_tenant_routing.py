"""A schema Citus can shard by tenant, by construction.

Every statement the store sends during a representative run (every RPC of the HTTP
scenario, over gRPC, with the background workers running) is captured as PostgreSQL
received it, and planned again with EXPLAIN: every scan of a distributed table must
constrain ``tenant_id`` by equality to a value, so Citus routes the whole statement to
one tenant's shard. The only exceptions are the named reads across tenants that
background work uses to find who has work due, and they must lock and change
nothing. The catalogue test checks that every key, unique constraint and foreign key
of a distributed table leads with ``tenant_id``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from psycopg import ClientCursor, sql

from agent_memory.config import Settings
from agent_memory.store.distribution import (
    CROSS_TENANT_READS,
    DISTRIBUTION_COLUMN,
    REFERENCE_TABLES,
    distributed_tables,
)
from agent_memory.store.jobs import DUE_TENANTS
from agent_memory.store.memories import EXPIRED_TENANTS, SWEEP_EXPIRED
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.e2e import test_http
from tests.support import ServerThread, has_pgvector, wait_until

pytestmark = pytest.mark.e2e

Captured = dict[str, Any]  # statement text -> the parameters it was first sent with
# A constraint on the distribution column by a value: `(m.tenant_id)::text = 'acme'::text`.
BY_VALUE = re.compile(r"\btenant_id\)?(?:::[\w ]+)? = '")


def _strip(statement: str) -> str:
    return " ".join(statement.split())


@pytest.fixture(scope="module")
def database_url(module_database: str) -> str:
    """A database of the module's own: its index worker embeds the module's lines, not
    every earlier test's."""
    return module_database


@pytest.fixture(scope="module")
def captured(database_url: str) -> Captured:
    statements: Captured = {}
    original = psycopg.AsyncConnection.execute

    async def spy(self: Any, query: Any, params: Any = None, *args: Any, **kw: Any) -> Any:
        # A statement planned for its values arrives as bytes, its values written in.
        if isinstance(query, bytes):
            text = query.decode()
        elif isinstance(query, sql.Composable):
            text = query.as_string(self)
        else:
            text = str(query)
        statements.setdefault(text, params)
        return await original(self, query, params, *args, **kw)

    settings = Settings(
        http_listen="127.0.0.1:0",
        expiry_sweep_seconds=0.5,
        extraction_settle_seconds=0,
        extraction_poll_seconds=0.2,
        index_poll_seconds=0.2,
        # Recall reads through its indexes, as for an owner too large to read as it is.
        recall_scan_rows=0,
    )
    psycopg.AsyncConnection.execute = spy  # type: ignore[method-assign]
    try:
        with (
            ServerThread(database_url, settings=settings, index=True) as server,
            server.client() as client,
        ):
            test_http.play(lambda method, request: test_http.call_grpc(client, method, request))
            # A memory that expires, for the sweeper to delete.
            brief = pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(agent_id="coder"), key="brief", value="soon gone"
            )
            brief.ttl.FromTimedelta(timedelta(seconds=1))
            client.call(client.memory.UpsertMemory, brief)
            wanted = {SWEEP_EXPIRED, EXPIRED_TENANTS, DUE_TENANTS}
            vectors = has_pgvector(database_url)

            def seen() -> bool:
                # The sweeper's statements, and (where vectors are compared) the index
                # worker's, which stores its first vectors when its lowest priority lets
                # it: on a busy machine that takes a while.
                return wanted <= statements.keys() and (
                    not vectors or _vector_statement(statements)
                )

            assert wait_until(seen, timeout=120, step=0.2), sorted(wanted - statements.keys())
    finally:
        psycopg.AsyncConnection.execute = original  # type: ignore[method-assign]
    return statements


def _vector_statement(statements: Captured) -> bool:
    """Whether a statement that works on vectors at a model's dimensions was sent: an
    index walk, or the index the walk uses being made."""
    return any("::halfvec(" in s for s in list(statements))


def _plans(url: str, statements: Captured) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Each statement that names a table, with the plan PostgreSQL makes of it."""
    with psycopg.connect(url, autocommit=True) as conn:
        for statement, params in statements.items():
            if not re.search(r"\b(FROM|INTO|UPDATE)\b", statement, re.IGNORECASE):
                continue
            cursor = ClientCursor(conn)
            text = cursor.mogrify(statement, params)  # type: ignore[arg-type]
            row = cursor.execute("EXPLAIN (VERBOSE, FORMAT JSON) " + text).fetchone()
            assert row is not None
            yield statement, row[0]


def _nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


def test_every_statement_names_its_tenant_by_value_but_the_reads_that_find_work(
    captured: Captured, database_url: str
) -> None:
    distributed = set(distributed_tables())
    unrouted: list[str] = []
    planned = 0
    for statement, plan in _plans(database_url, captured):
        planned += 1
        nodes = list(_nodes(plan[0]["Plan"]))
        if statement in CROSS_TENANT_READS:
            kinds = {n["Node Type"] for n in nodes}
            assert not kinds & {"ModifyTable", "LockRows"}, _strip(statement)
            continue
        for node in nodes:
            if node.get("Relation Name") not in distributed or node["Node Type"] == "ModifyTable":
                continue
            conditions = " ".join(
                str(node.get(key, ""))
                for key in ("Index Cond", "Filter", "Recheck Cond", "TID Cond")
            )
            if not BY_VALUE.search(conditions):
                unrouted.append(f"{node['Relation Name']} in: {_strip(statement)[:160]}")
    assert not unrouted, "\n".join(unrouted)
    # The run was representative: every kind of work was seen, recall through its
    # indexes too (statements planned for their values, which are written in).
    assert planned > 80
    assert any(" @@ '" in s for s in captured)
    assert _vector_statement(captured) or not has_pgvector(database_url)
    assert {SWEEP_EXPIRED, EXPIRED_TENANTS, DUE_TENANTS} <= captured.keys()


def test_every_key_of_a_distributed_table_leads_with_the_tenant(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            )
        }
        # Every table is distributed or a reference table (the migrations' own aside).
        assert tables - {"alembic_version"} == set(distributed_tables()) | set(REFERENCE_TABLES)
        for table in REFERENCE_TABLES:
            assert table not in distributed_tables()
        keys = conn.execute(
            """
            SELECT c.conrelid::regclass::text, c.conname, c.contype,
                   (SELECT a.attname FROM pg_attribute AS a
                    WHERE a.attrelid = c.conrelid AND a.attnum = c.conkey[1]) AS first
            FROM pg_constraint AS c
            WHERE c.contype IN ('p', 'u', 'f', 'x')
              AND c.connamespace = 'public'::regnamespace
            """
        ).fetchall()
        unique_indexes = conn.execute(
            """
            SELECT i.indrelid::regclass::text, i.indexrelid::regclass::text,
                   (SELECT a.attname FROM pg_attribute AS a
                    WHERE a.attrelid = i.indrelid AND a.attnum = i.indkey[0]) AS first
            FROM pg_index AS i JOIN pg_class AS t ON t.oid = i.indrelid
            WHERE i.indisunique AND t.relnamespace = 'public'::regnamespace
            """
        ).fetchall()
    distributed = set(distributed_tables())
    checked = [(t, name, first) for t, name, _, first in keys if t in distributed]
    checked += [(t, name, first) for t, name, first in unique_indexes if t in distributed]
    assert len(checked) > len(distributed)  # each has a primary key, and more
    assert [c for c in checked if c[2] != DISTRIBUTION_COLUMN] == []
    # A foreign key names a distributed table, colocated: by the same column first.
    with psycopg.connect(database_url) as conn:
        targets = conn.execute(
            """
            SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint
            WHERE contype = 'f' AND connamespace = 'public'::regnamespace
            """
        ).fetchall()
    assert targets
    assert all(source in distributed and target in distributed for source, target in targets)
