"""The PostgreSQL store: one psycopg connection pool, and units of work over it.

Connections are in autocommit mode: a use case that is one statement runs without
BEGIN and COMMIT, and a connection goes back to the pool with nothing to roll
back, so psycopg keeps its prepared statements. ``transaction()`` wraps a block
in BEGIN ... COMMIT for use cases of several statements.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, LiteralString

import psycopg
from opentelemetry.trace import TracerProvider
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from sqlalchemy.engine import make_url

from agent_memory.domain.errors import Unavailable
from agent_memory.domain.history import DEFAULT_HISTORY, check_as_of
from agent_memory.domain.identity import Principal
from agent_memory.domain.indexing import WAITING_BOUND, IndexingStatus
from agent_memory.domain.paging import PageKeyring
from agent_memory.store.active_sessions import PgSessions
from agent_memory.store.agents import PgAgents, PgWorkspaces
from agent_memory.store.blocks import PgBlocks
from agent_memory.store.conversations import PgConversations
from agent_memory.store.decisions import PgDecisions
from agent_memory.store.events import PgEvents
from agent_memory.store.forget import PgForget
from agent_memory.store.indexing import INDEXING_OVERVIEW, PgIndexQueue, indexing_status
from agent_memory.store.jobs import PgJobQueue, PgJobs
from agent_memory.store.keys import PgKeys
from agent_memory.store.memories import PgExpirySweep, PgMemories
from agent_memory.store.outage import DatabaseOutage
from agent_memory.store.page_keys import KeyringCache, PgPageKeys
from agent_memory.store.prompts import PgPrompts
from agent_memory.store.recall import PgRecall
from agent_memory.store.repositories import AdminTx, Clock, Store, Tx
from agent_memory.store.sql import Connection, database_errors, fetch_one
from agent_memory.store.standby import Standby
from agent_memory.store.transfer import PgTransfer
from agent_memory.store.usage import PgUsage
from agent_memory.store.vector_indexes import IndexedRows
from agent_memory.store.vector_indexes import ensure as ensure_vector_indexes
from agent_memory.store.vectors import PGVECTOR_INSTALLED
from agent_memory.telemetry.tracing import RedactingTracerProvider

# The pool warns at every failed reconnection, several lines each: the database's
# outages are told by DatabaseOutage instead, once and then in summaries.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

# How long a caller waits for a free connection before the call is UNAVAILABLE.
CHECKOUT_TIMEOUT_SECONDS = 5.0
# Callers whose last write is remembered, at most, before the old ones are let go.
_WRITERS_KEPT = 100_000
# A health probe that takes longer than this finds the database unavailable.
PROBE_TIMEOUT_SECONDS = 3.0

_NOW: LiteralString = "SELECT clock_timestamp() AS now"


def sqlalchemy_url(url: str) -> str:
    """The URL for SQLAlchemy (Alembic): plain ``postgresql://`` pinned to psycopg 3."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres", "postgresql+psycopg2"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername != "postgresql+psycopg":
        raise ValueError(
            f"unsupported database URL scheme {parsed.drivername!r}: use postgresql://"
        )
    return parsed.render_as_string(hide_password=False)


def libpq_url(url: str) -> str:
    """The URL for psycopg: ``postgresql://`` whatever driver the URL named."""
    return sqlalchemy_url(url).replace("postgresql+psycopg://", "postgresql://", 1)


def connection_kwargs(
    statement_timeout_ms: int, application_name: str = "agent-memory"
) -> dict[str, Any]:
    """How every connection of the service is set up (the benchmark's baseline too)."""
    return {
        "autocommit": True,
        "row_factory": dict_row,
        # Every statement is fixed text with parameters, written to be served by one plan
        # (lookups by key, optional filters checked on the rows the key narrowed):
        # prepare it on first use and plan it once per connection.
        "prepare_threshold": 0,
        # An approximate (HNSW) index walked for one owner's rows goes on until it has
        # found enough of them (pgvector 0.8+; a setting of its own, harmless without it).
        "options": (
            f"-c statement_timeout={statement_timeout_ms} -c TimeZone=UTC"
            " -c plan_cache_mode=force_generic_plan -c hnsw.iterative_scan=relaxed_order"
        ),
        "application_name": application_name,
    }


class PgClock(Clock):
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    async def now(self) -> datetime:
        row = await fetch_one(self._conn, _NOW, {})
        assert row is not None
        now: datetime = row["now"]
        return now


def _tx(
    conn: Connection,
    principal: Principal,
    index_model: str | None,
    *,
    indexed: IndexedRows,
    standby: bool = False,
    as_of: datetime | None = None,
    history: timedelta = DEFAULT_HISTORY,
) -> Tx:
    """``indexed``: the database's count of each model's indexed rows, shared by every
    unit of work (a new one would ask the catalogue again). ``as_of``: memories, blocks
    and renders read as they were then."""
    return Tx(
        memories=PgMemories(conn, principal, index_model, as_of=as_of),
        events=PgEvents(conn, principal),
        conversations=PgConversations(conn, principal),
        agents=PgAgents(conn, principal),
        workspaces=PgWorkspaces(conn, principal),
        blocks=PgBlocks(conn, principal, index_model, as_of=as_of, kept=history),
        sessions=PgSessions(conn, principal),
        decisions=PgDecisions(conn, principal),
        usage=PgUsage(conn, principal),
        jobs=PgJobs(conn, principal),
        recall=PgRecall(conn, principal, marks=not standby, indexed=indexed, as_of=as_of),
        prompts=PgPrompts(conn, principal, marks=not standby, indexed=indexed, as_of=as_of),
        clock=PgClock(conn),
        forget=PgForget(conn, principal),
        transfer=PgTransfer(conn, principal),
        standby=standby,
        as_of=as_of,
    )


class Database(Store):
    """Owns the connection pool; every unit of work borrows one connection from it.

    Raises (from every unit of work):
        Unavailable: no connection could be had, or the database dropped it.
        Timeout: a statement ran past the statement timeout.
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        statement_timeout_ms: int = 10_000,
        tracer_provider: TracerProvider | None = None,
        index_model: str | None = None,
        read_url: str | None = None,
        standby_max_lag_seconds: float = 5.0,
        read_your_writes_seconds: float = 5.0,
        history: timedelta = DEFAULT_HISTORY,
    ) -> None:
        """``history``: how far back as-of reads reach (what is older is pruned).
        ``index_model``: the model recall runs (the embedder's), whose vectors count
        as a block's indexed lines; ``None`` when recall is lexical. ``read_url``: a
        hot standby of ``url`` for the reads that may lag (see :meth:`reading`)."""
        self._tracer_provider = tracer_provider
        self._history = history
        self._index_model = index_model
        self._indexed = IndexedRows()
        self._url = libpq_url(url)
        self._probe_conn: psycopg.AsyncConnection[Any] | None = None
        # Set while the last probe found no database: calls are refused at once then,
        # instead of each waiting out the pool's checkout timeout.
        self._unreachable = False
        # Every failure to reach the database is reported here, which logs it sparingly.
        self.outage = DatabaseOutage()
        self._pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
            libpq_url(url),
            connection_class=psycopg.AsyncConnection[Any],
            kwargs=connection_kwargs(statement_timeout_ms),
            min_size=1,
            max_size=pool_size,
            open=False,
            timeout=CHECKOUT_TIMEOUT_SECONDS,
            configure=self._trace if tracer_provider is not None else None,
            name="agent-memory",
        )
        self._returning: set[asyncio.Future[None]] = set()
        self._standby = (
            Standby(
                libpq_url(read_url),
                pool_size=pool_size,
                max_lag_seconds=standby_max_lag_seconds,
                kwargs=connection_kwargs(statement_timeout_ms, "agent-memory-reads"),
            )
            if read_url
            else None
        )
        self._read_your_writes = read_your_writes_seconds
        # When each caller last wrote (monotonic), while a standby serves reads.
        self._writes: dict[tuple[str, str], float] = {}
        self._page_keys = KeyringCache(self._load_page_keys)

    @asynccontextmanager
    async def transaction(self, principal: Principal) -> AsyncIterator[Tx]:
        async with self._connection() as conn, conn.transaction():
            yield _tx(
                conn, principal, self._index_model, indexed=self._indexed, history=self._history
            )

    @asynccontextmanager
    async def connection(self, principal: Principal) -> AsyncIterator[Tx]:
        async with self._connection() as conn:
            yield _tx(
                conn, principal, self._index_model, indexed=self._indexed, history=self._history
            )

    def wrote(self, principal: Principal) -> None:
        if self._standby is None:
            return
        now = time.monotonic()
        if len(self._writes) > _WRITERS_KEPT:
            self._writes = {
                k: t for k, t in self._writes.items() if now - t < self._read_your_writes
            }
        self._writes[(principal.tenant_id, principal.user_id)] = now

    @asynccontextmanager
    async def reading(
        self, principal: Principal, *, as_of: datetime | None = None
    ) -> AsyncIterator[Tx]:
        if as_of is not None:
            check_as_of(as_of, now=datetime.now(UTC), kept=self._history)
            # An instant a little ahead of this clock (another replica's, within the
            # skew allowed) is read once it has passed, so that reading it again later
            # answers the same.
            ahead = (as_of - datetime.now(UTC)).total_seconds()
            if ahead > 0:
                await asyncio.sleep(ahead)
            # The past is read where its history is whole: on the primary.
            async with self._connection() as primary:
                yield _tx(
                    primary,
                    principal,
                    self._index_model,
                    indexed=self._indexed,
                    history=self._history,
                    as_of=as_of,
                )
            return
        standby = self._standby
        wrote = self._writes.get((principal.tenant_id, principal.user_id)) if standby else None
        recent = wrote is not None and time.monotonic() - wrote < self._read_your_writes
        conn = None
        if standby is not None and not recent and await standby.usable():
            try:
                conn = await standby.checkout()
            except Unavailable as exc:
                standby.failed(exc)  # this read, and the next ones, on the primary
        if conn is None or standby is None:
            async with self.connection(principal) as tx:
                yield tx
            return
        try:
            with database_errors():
                yield _tx(
                    conn,
                    principal,
                    self._index_model,
                    standby=True,
                    indexed=self._indexed,
                    history=self._history,
                )
        except Unavailable as exc:
            standby.failed(exc)
            raise
        finally:
            await standby.putconn(conn)

    @asynccontextmanager
    async def admin(self) -> AsyncIterator[AdminTx]:
        async with self._connection() as conn:
            yield AdminTx(
                keys=PgKeys(conn),
                job_queue=PgJobQueue(conn),
                expiry=PgExpirySweep(conn),
                index=PgIndexQueue(conn),
                page_keys=PgPageKeys(conn),
            )

    async def page_keyring(self, *, knowing: int = 0) -> PageKeyring:
        return await self._page_keys.get(knowing=knowing)

    async def _load_page_keys(self) -> PageKeyring:
        async with self.admin() as tx:
            return await tx.page_keys.load()

    async def ping(self) -> None:
        """One round trip. Raises: Unavailable, Timeout."""
        async with self._connection() as conn:
            await fetch_one(conn, _NOW, {})

    async def probe(self) -> bool:
        """Whether the database answers now, asked on a connection of its own (a busy
        pool does not make a healthy database look down). Reports to :attr:`outage`."""
        try:
            async with asyncio.timeout(PROBE_TIMEOUT_SECONDS):
                if self._probe_conn is None or self._probe_conn.closed:
                    self._probe_conn = await psycopg.AsyncConnection.connect(
                        self._url,
                        autocommit=True,
                        connect_timeout=max(2, int(PROBE_TIMEOUT_SECONDS)),
                        application_name="agent-memory-health",
                    )
                await self._probe_conn.execute("SELECT 1")
                if (self._unreachable or self.outage.down) and not self._pool.closed:
                    # The pool's idle connections may be from before the outage, and
                    # dead: replaced before calls are let through again, so that the
                    # first calls after it do not find them and report a new one. (A
                    # pool no call has opened yet holds none, and cannot be checked.)
                    await self._pool.check()
        except (psycopg.Error, OSError, TimeoutError) as exc:
            await self._close_probe()
            self._unreachable = True
            self.outage.failed(exc if str(exc) else "no answer in time")
            return False
        self._unreachable = False
        self.outage.answered()
        return True

    async def _close_probe(self) -> None:
        conn, self._probe_conn = self._probe_conn, None
        if conn is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error, OSError):
                await conn.close()

    async def vector_indexes(self, model: str, dimensions: int) -> list[str]:
        with database_errors():
            return await ensure_vector_indexes(self._url, model, dimensions)

    async def has_pgvector(self) -> bool:
        """Whether pgvector is installed in the database (recall can compare embeddings)."""
        async with self._connection() as conn:
            row = await fetch_one(conn, PGVECTOR_INSTALLED, {})
        return bool(row and row["installed"])

    def pool_stats(self) -> dict[str, dict[str, int]]:
        """psycopg_pool's counters of each pool, by name: ``primary``, and ``standby``
        when reads have one."""
        stats = {"primary": self._pool.get_stats()}
        if self._standby is not None:
            stats["standby"] = self._standby.pool_stats()
        return stats

    async def indexing_overview(self, model: str) -> IndexingStatus:
        """How indexing stands across every tenant: what waits for a vector (counted up
        to a bound, each kind), and the workers of ``model`` heard from lately.
        Raises: Unavailable, Timeout."""
        async with self._connection() as conn:
            row = await fetch_one(conn, INDEXING_OVERVIEW, {"model": model, "bound": WAITING_BOUND})
        assert row is not None  # one row, always
        return indexing_status(row)

    def connections_in_use(self) -> int:
        stats = self._pool.get_stats()
        return int(stats.get("pool_size", 0)) - int(stats.get("pool_available", 0))

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Connection]:
        try:
            if self._unreachable:
                raise Unavailable("the database is unavailable; retry later")
            with database_errors():
                if self._pool.closed:
                    await self._pool.open()
                # The pool hands a connection back itself when the caller is
                # cancelled while it waits for one (psycopg_pool 3.3).
                conn = await self._pool.getconn()
                try:
                    yield conn
                finally:
                    await self._put_back(conn)
        except Unavailable as exc:
            # A pool with no free connection is busy, not down: only a database that
            # does not answer is an outage.
            if not isinstance(exc.__cause__, PoolTimeout):
                self.outage.failed(exc.__cause__ or exc)
            raise

    async def _put_back(self, conn: Connection) -> None:
        """Hand ``conn`` back to the pool, also when the caller is cancelled meanwhile:
        the return runs to its end in a task of its own (it may wait for the pool's
        lock, which the pool's own maintenance holds across its waits, or roll back a
        transaction left open)."""
        returning = asyncio.ensure_future(self._pool.putconn(conn))
        self._returning.add(returning)
        returning.add_done_callback(self._returning.discard)
        await asyncio.shield(returning)

    async def _trace(self, conn: Connection) -> None:
        """A span per SQL statement, only when tracing is on: no cost otherwise."""
        from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

        # Statements are traced as their text (values are placeholders), never with
        # their parameters, and a failed one without its error's message.
        assert self._tracer_provider is not None
        # Its signature names the row type of a plain connection; ours yield dicts.
        PsycopgInstrumentor.instrument_connection(  # type: ignore[type-var]
            conn,
            tracer_provider=RedactingTracerProvider(self._tracer_provider),
            enable_commenter=False,
        )

    async def close(self) -> None:
        if self._standby is not None:
            await self._standby.close()
        await self._close_probe()
        await asyncio.gather(*self._returning, return_exceptions=True)
        await self._pool.close()
