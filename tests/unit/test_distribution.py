"""The distribution plan: which tables Citus spreads by tenant, in what order."""

from __future__ import annotations

import re

from agent_memory.store.distribution import (
    ANCHOR,
    CROSS_TENANT_READS,
    REFERENCE_TABLES,
    Distribution,
    distributed_tables,
)
from agent_memory.store.models import Base


def test_the_anchor_comes_first_and_a_table_after_those_its_keys_name() -> None:
    order = distributed_tables()
    assert order[0] == ANCHOR
    assert len(order) == len(set(order))
    for table in Base.metadata.sorted_tables:
        if table.name not in order:
            continue
        for key in table.foreign_keys:
            assert order.index(key.column.table.name) < order.index(table.name), table.name


def test_every_table_is_distributed_or_a_reference_table() -> None:
    names = {t.name for t in Base.metadata.sorted_tables}
    assert names == set(distributed_tables()) | set(REFERENCE_TABLES)
    assert not set(distributed_tables()) & set(REFERENCE_TABLES)


def test_the_reads_across_tenants_only_read() -> None:
    for statement in CROSS_TENANT_READS:
        words = statement.upper().split()
        assert words[0] in ("SELECT", "WITH"), statement
        # A query with a WITH may still write (a data-modifying CTE) or lock; the words
        # as SQL reads them, so that "AS (UPDATE" and compacted text hide none.
        keywords = set(re.findall(r"[A-Z_]+", statement.upper()))
        assert not {"INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE"} & set(words), statement
        writes = {"INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE", "SHARE", "LOCK"}
        assert not writes & keywords, statement
        assert "FOR UPDATE" not in statement.upper()


def test_a_distribution_says_what_it_did() -> None:
    done = Distribution(["memories", "blocks"], ["api_keys"], [])
    assert done.describe() == (
        "distributed by tenant_id: memories, blocks; reference tables: api_keys"
    )
    assert Distribution([], [], ["memories"]).describe() == (
        "every table already distributed or a reference table (1)"
    )
