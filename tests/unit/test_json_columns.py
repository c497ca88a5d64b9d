"""JSON columns are read as the standard library reads them, faster."""

from __future__ import annotations

import json

import pytest

from agent_memory.store.sql import json_loads

DOCUMENTS = [
    b'{"memories": [{"key": "tz", "value": "Europe/Lisbon", "importance": 0.5}], "n": 3}',
    b'{"quote": "caf\\u00e9 \\ud83d\\ude00", "tags": [], "empty": {}, "none": null}',
    b"[1.0000000000000002, -0.0, 9007199254740993, 18446744073709551615, true]",
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_a_document_reads_as_the_standard_library_reads_it(document: bytes) -> None:
    assert json_loads(document) == json.loads(document)
    assert json_loads(memoryview(document)) == json.loads(document)


def test_an_escaped_lone_surrogate_a_json_column_may_hold_is_still_read() -> None:
    document = b'{"raw": "\\ud800 left alone"}'
    assert json_loads(memoryview(document)) == {"raw": "\ud800 left alone"}
    assert json_loads(document.decode()) == {"raw": "\ud800 left alone"}


def test_a_number_stored_from_a_double_reads_back_as_that_double() -> None:
    # A Struct's number is a double; PostgreSQL keeps its text, here past 64 bits.
    written = 1.2345678901234568e29
    assert json_loads(f'{{"n": {int(written)}}}'.encode()) == {"n": written}
