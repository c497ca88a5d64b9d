"""A hot standby for the reads that may be a little behind.

Recall, RenderPrompt and the listings can run on a streaming replica of the primary
(``--database-read-url``). Nothing is written there: those reads return what they
would mark as used, and the caller marks it on the primary. The standby is asked,
at most every ``CHECK_SECONDS``, whether it is one (``pg_is_in_recovery()``) and how
far its replay lags behind what it has received; while it does not answer, is not a
standby, or lags past the bound, reads go to the primary, and one log line says so
each time that changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any, LiteralString

import psycopg
from psycopg_pool import AsyncConnectionPool

from agent_memory.domain.errors import Unavailable
from agent_memory.store.sql import Connection, database_errors
from agent_memory.tasks import cancel_and_wait

log = logging.getLogger(__name__)

CHECK_SECONDS = 1.0
CHECKOUT_TIMEOUT_SECONDS = 2.0
# Replay lag: none while the standby has replayed all it received; else how long ago
# the last transaction it replayed committed on the primary.
_STATE: LiteralString = """
SELECT pg_is_in_recovery() AS recovering,
       CASE WHEN pg_last_wal_receive_lsn() IS NULL
              OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
            ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())
       END::float8 AS lag
"""


class Standby:
    """The standby's pool, and whether reads may go there now."""

    def __init__(
        self, url: str, *, pool_size: int, max_lag_seconds: float, kwargs: dict[str, Any]
    ) -> None:
        self.where = url
        self._max_lag = max_lag_seconds
        self._pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            url,
            connection_class=psycopg.AsyncConnection[Any],
            kwargs=kwargs,
            min_size=0,
            max_size=pool_size,
            open=False,
            timeout=CHECKOUT_TIMEOUT_SECONDS,
            name="agent-memory-standby",
        )
        self._usable = False
        self._said = ""  # why reads go where they go, as last logged
        self._checked = -float("inf")
        self._checking: asyncio.Task[None] | None = None

    async def usable(self) -> bool:
        """Whether reads may go to the standby now, as last checked (the first time,
        checked now); a check older than ``CHECK_SECONDS`` starts another in the
        background."""
        if self._checked == -float("inf"):
            await self.check()
            return self._usable
        if time.monotonic() - self._checked >= CHECK_SECONDS and (
            self._checking is None or self._checking.done()
        ):
            self._checking = asyncio.get_running_loop().create_task(self.check())
        return self._usable

    async def check(self) -> None:
        """Ask the standby whether it is one and how far it lags; say when that changes."""
        self._checked = time.monotonic()
        try:
            async with self.connection() as conn:
                cursor = await conn.execute(_STATE)
                row = await cursor.fetchone()
        except Unavailable as exc:
            self._set(False, f"the standby does not answer ({exc.__cause__ or exc})")
            return
        assert row is not None
        if not row["recovering"]:
            self._set(False, "the read database is not a standby (pg_is_in_recovery() is false)")
        elif row["lag"] > self._max_lag:
            self._set(
                False, f"the standby lags {row['lag']:.1f} s, past the bound of {self._max_lag:g} s"
            )
        else:
            self._set(True, "")

    def failed(self, exc: BaseException) -> None:
        """A read on the standby failed to reach it: reads go to the primary until the
        next check finds it answering."""
        self._checked = time.monotonic()
        self._set(False, f"the standby does not answer ({exc.__cause__ or exc})")

    def _set(self, usable: bool, why: str) -> None:
        if usable and not self._usable:
            log.info("reads that may lag go to the standby at %s", self.where.split("@")[-1])
        elif not usable and why.split(" (")[0] != self._said.split(" (")[0]:
            log.warning("%s: reads go to the primary", why)
        self._usable = usable
        self._said = why

    async def checkout(self) -> Connection:
        """A standby connection, to hand back with :meth:`putconn`.

        Raises: Unavailable — none could be had."""
        with database_errors():
            if self._pool.closed:
                await self._pool.open(wait=False)
            return await self._pool.getconn()

    async def putconn(self, conn: Connection) -> None:
        await asyncio.shield(self._pool.putconn(conn))

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A standby connection for the block. Raises: Unavailable — none could be had,
        or it failed."""
        conn = await self.checkout()
        try:
            with database_errors():
                yield conn
        finally:
            await self.putconn(conn)

    def pool_stats(self) -> dict[str, int]:
        """psycopg_pool's counters of the standby's pool."""
        return self._pool.get_stats()

    async def close(self) -> None:
        if self._checking is not None:
            await cancel_and_wait(self._checking)
        await self._pool.close()
