"""How every repository talks to PostgreSQL: fixed SQL through psycopg, rows as dicts.

Statements are fixed text with named parameters, so psycopg prepares each one on a
connection the first time it runs there and PostgreSQL plans it once. A statement
names the columns it returns (a column a migration adds changes no prepared
statement's result). Driver failures leave here as the service's errors.

JSON and JSONB columns are read with orjson: a rendered prompt's whole state comes back
as one JSON document, and the standard library took about a tenth of a render's CPU
to read it.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any, LiteralString

import orjson
import psycopg
from psycopg.rows import DictRow
from psycopg.types.json import set_json_loads
from psycopg_pool import PoolTimeout

from agent_memory.domain.errors import Conflict, ResourceExhausted, Timeout, Unavailable

log = logging.getLogger(__name__)

Row = DictRow
Params = Mapping[str, Any]
Connection = psycopg.AsyncConnection[DictRow]


def json_loads(data: bytes | bytearray | memoryview | str) -> Any:
    """A JSON value from the database, by orjson, or by the standard library where orjson
    refuses the text (an escaped lone surrogate, which a ``json`` column may hold).

    orjson reads an integer past 64 bits as the nearest double. Every number the
    service stores came through protobuf's ``double`` (a Struct's number), whose text
    PostgreSQL keeps: the double read back is the one written."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(bytes(data) if isinstance(data, memoryview) else data)


# Every connection of the process, the service's pools and its tools' alike.
set_json_loads(json_loads)


@contextmanager
def database_errors() -> Iterator[None]:
    """Driver and pool failures as the service's errors; anything else passes through.

    Raises:
        Timeout: a statement ran past the statement timeout.
        Conflict: PostgreSQL gave up a transaction (a deadlock or serialization failure).
        ResourceExhausted: a value is past what PostgreSQL can store or index.
        Unavailable: the database could not be reached or dropped the connection.
    """
    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        raise Timeout(
            "the query ran past the server's statement timeout", reason="STATEMENT_TIMEOUT"
        ) from exc
    except psycopg.errors.ProgramLimitExceeded as exc:
        # A value past what PostgreSQL can hold or index: the request's, so retrying
        # the same call would never help.
        raise ResourceExhausted(
            "a value is too large for the database to store or index; send less",
            reason="VALUE_TOO_LARGE_FOR_DATABASE",
        ) from exc
    except psycopg.errors.TransactionRollback as exc:
        raise Conflict(
            "a concurrent change got in the way; retry", reason="CONCURRENT_WRITE"
        ) from exc
    except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout, OSError) as exc:
        raise Unavailable("the database is unavailable; retry later") from exc


async def fetch_one(conn: Connection, query: LiteralString, params: Params) -> Row | None:
    with database_errors():
        cursor = await conn.execute(query, params)
        return await cursor.fetchone()


async def fetch_all(conn: Connection, query: LiteralString, params: Params) -> list[Row]:
    with database_errors():
        cursor = await conn.execute(query, params)
        return await cursor.fetchall()


# For a statement whose order only an index can give cheaply: sorting is ruled out while
# it is planned, so PostgreSQL walks the index (an approximate nearest-neighbour one)
# rather than reading and sorting everything its estimates took to be few.
_WITHOUT_SORTS: tuple[LiteralString, ...] = (
    "SET LOCAL enable_sort = off",
    "SET LOCAL enable_incremental_sort = off",
)


async def fetch_all_planned(
    conn: Connection, query: LiteralString, params: Params, *, by_index: bool = False
) -> list[Row]:
    """:func:`fetch_all` with the values written into the statement (psycopg quotes them,
    on the client), so that PostgreSQL plans it for these values, as it does not a
    statement it has prepared: for a statement whose best plan depends on how many rows
    the values select (an index that pays for a large owner and not for a small one).
    Never prepared: each text is planned once and let go. With ``by_index``, in a
    transaction of its own that rules sorting out (see ``_WITHOUT_SORTS``); on a
    connection already in a transaction, the rule lasts as long as that one.
    """
    with database_errors():
        text = psycopg.AsyncClientCursor(conn).mogrify(query, params).encode()
        if not by_index:
            cursor = await conn.execute(text, prepare=False)
            return await cursor.fetchall()
        async with conn.transaction():
            for setting in _WITHOUT_SORTS:
                await conn.execute(setting, prepare=False)
            cursor = await conn.execute(text, prepare=False)
            return await cursor.fetchall()


async def execute(conn: Connection, query: LiteralString, params: Params) -> int:
    """Run a statement; returns how many rows it changed."""
    with database_errors():
        cursor = await conn.execute(query, params)
        return cursor.rowcount


def as_uuid(value: Any) -> uuid.UUID:
    """A UUID from a column (already one) or from JSON (its text)."""
    return value if isinstance(value, uuid.UUID) else uuid.UUID(value)


def as_time(value: Any) -> datetime:
    """A timestamp from a column (already one) or from JSON (ISO 8601 text)."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)


def as_optional_time(value: Any) -> datetime | None:
    return None if value is None else as_time(value)
