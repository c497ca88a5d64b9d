"""Each column says once what statements do with it, and the statements follow."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_memory.api.convert import UPDATABLE_MEMORY_FIELDS
from agent_memory.domain.memory import Memory
from agent_memory.store import memory_sql
from agent_memory.store.columns import (
    FULL,
    OUTPUT,
    PATCHED,
    compact,
    declared,
    insert_values,
    named,
    output,
    patched,
)
from agent_memory.store.models import Base, ConversationRow, DecisionRow, MemoryRow

TABLES = {t.name: t for t in Base.metadata.sorted_tables}
ROWS = {m.class_.__tablename__: m.class_ for m in Base.registry.mappers}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_column_declares_what_statements_do_with_it(table: str) -> None:
    missing = [c.name for c in TABLES[table].columns if declared(c) is None]
    assert missing == [], f"{table}: give these columns info=policy(...): {missing}"


@pytest.mark.parametrize("table", sorted(ROWS))
def test_no_write_is_cut_to_a_column_length(table: str) -> None:
    # A cast to varchar(n) shortens a longer value without an error; the column's own
    # check refuses it instead.
    values = insert_values(ROWS[table])
    assert "VARCHAR" not in values.upper()
    assert "NUMERIC(" not in values.upper()


def test_the_update_mask_accepts_exactly_the_patchable_columns() -> None:
    assert set(named(MemoryRow, PATCHED)) == set(UPDATABLE_MEMORY_FIELDS)
    # A column that may be empty is cleared by its own flag.
    assert "%(clear_expire_time)s" in patched(MemoryRow, "m")


# A value of each Python type a memory column holds, different from the column's
# default, so that reading it or not shows in the record.
_SAMPLES: dict[type, Any] = {
    str: "s",
    bool: True,
    int: 7,
    float: 0.5,
    uuid.UUID: uuid.UUID(int=1),
    datetime: datetime(2026, 3, 12, tzinfo=UTC),
    list: ["t"],
    object: {"m": 1},  # JSON
}
# Columns whose values are one of a few: the owner's scope, and a memory's source.
_CHOSEN: dict[str, Any] = {"scope": "agent", "source": "manual", "hold_reason": "credential"}


def sample_row() -> dict[str, Any]:
    """A value for every column a memory statement returns, chosen by its type."""
    columns = MemoryRow.__table__.columns
    return {
        name: _CHOSEN.get(name, _SAMPLES[columns[name].type.python_type])
        for name in named(MemoryRow, OUTPUT)
    }


def test_every_returned_column_of_a_memory_reaches_the_record() -> None:
    row = sample_row()
    row["id"] = uuid.uuid4()
    returned = named(MemoryRow, OUTPUT)
    whole = memory_sql.memory_from_row(row)
    for column in returned:
        less = {k: v for k, v in row.items() if k != column}
        try:
            partial = memory_sql.memory_from_row(less)
        except (KeyError, TypeError):  # a required column
            continue
        assert partial != whole, f"memory_from_row does not read {column!r}"
    # And the record has no field the columns do not fill (the owner is two columns,
    # the groundings a table of their own, and whether it is embedded is read from its
    # vector's columns and the model recall runs).
    fields = {f.name for f in dataclasses.fields(Memory)} - {"owner", "groundings", "embedded"}
    assert memory_sql.memory_from_row({**row, "embedded": True}) != whole
    assert fields <= set(returned)


def test_a_large_column_is_read_only_in_the_full_view() -> None:
    assert "NULL::JSONB AS messages" in output(ConversationRow, "")
    assert "NULL" not in output(ConversationRow, "", full=True)
    assert named(DecisionRow, FULL) == ("result",)


def test_a_compacted_statement_keeps_its_literals_and_drops_spare_whitespace() -> None:
    statement = """
    SELECT a ,  b
    FROM ( SELECT 'two  spaces, (kept)' AS a, 'it''s' AS b ) AS t
    WHERE a <> ' '"""
    assert compact(statement) == (
        "SELECT a,b FROM(SELECT 'two  spaces, (kept)' AS a,'it''s' AS b)AS t WHERE a <> ' '"
    )


@pytest.mark.parametrize(
    "statement",
    ["SELECT a -- the first\nFROM t", "SELECT /* a */ a FROM t", "SELECT $$ a  b $$", "SELECT 'a"],
)
def test_a_statement_compact_cannot_read_is_refused(statement: Any) -> None:
    # A line's comment would take in the rest of the statement once its lines are joined.
    with pytest.raises(ValueError, match="comment, a dollar quote or an unclosed literal"):
        compact(statement)


def test_the_prompt_read_without_archival_is_short_enough_to_be_parsed_once() -> None:
    """What compacting it is for: psycopg caches the parse of statements up to this many
    bytes; a column more in the read must not take it past."""
    import psycopg._queries

    from agent_memory.store import prompts

    limit = getattr(psycopg._queries, "MAX_CACHED_STATEMENT_LENGTH", 4096)
    for statement in prompts._PLAIN.values():
        assert len(statement.encode()) <= limit, len(statement.encode())
