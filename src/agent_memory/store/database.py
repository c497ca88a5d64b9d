"""The async engine and the unit of work that every use case runs in."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import psycopg
from opentelemetry.trace import TracerProvider
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, create_async_engine

from agent_memory.domain.errors import Timeout, Unavailable

log = logging.getLogger(__name__)


def sqlalchemy_url(url: str) -> str:
    """Accept plain ``postgresql://`` URLs and pin the psycopg 3 driver."""
    parsed = make_url(url)
    if parsed.drivername in {"postgresql", "postgres", "postgresql+psycopg2"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername != "postgresql+psycopg":
        raise ValueError(
            f"unsupported database URL scheme {parsed.drivername!r}: use postgresql://"
        )
    return parsed.render_as_string(hide_password=False)


class Database:
    """Owns the connection pool. ``transaction()`` is the unit of work."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = 10,
        statement_timeout_ms: int = 10_000,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        connect_args: dict[str, Any] = {
            "options": f"-c statement_timeout={statement_timeout_ms}",
            "application_name": "agent-memory",
        }
        self.engine: AsyncEngine = create_async_engine(
            sqlalchemy_url(url),
            pool_size=pool_size,
            max_overflow=pool_size,
            # No pre-ping: it costs a round trip per call. A connection that died
            # with its server fails once as UNAVAILABLE and is discarded; the pool
            # then connects afresh.
            pool_timeout=5,
            connect_args=connect_args,
        )
        if tracer_provider is not None:
            _trace_statements(self.engine, tracer_provider)
        self._returning: set[asyncio.Future[None]] = set()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """One transaction: committed when the block ends, rolled back when it raises.

        Raises:
            Unavailable: the database could not be reached or dropped the connection.
            Timeout: a statement ran past the statement timeout.
        """
        with _database_errors():
            conn = await self._checkout()
            try:
                async with (
                    AsyncSession(bind=conn, expire_on_commit=False) as session,
                    session.begin(),
                ):
                    yield session
            finally:
                await asyncio.shield(conn.close())

    @asynccontextmanager
    async def reads(self) -> AsyncIterator[AsyncSession]:
        """A session for a run of independent reads; nothing is committed.

        After a failed read the caller rolls back and goes on: the next statement
        starts a fresh transaction on the same connection.

        Raises:
            Unavailable, Timeout: as for :meth:`transaction`.
        """
        with _database_errors():
            conn = await self._checkout()
            try:
                async with AsyncSession(bind=conn, expire_on_commit=False) as session:
                    yield session
            finally:
                await asyncio.shield(conn.close())

    async def _checkout(self) -> AsyncConnection:
        """A pooled connection, opened even if the caller is cancelled meanwhile.

        A connection cancelled half-way through opening escaped the pool and lived
        on until garbage collection; shielded, it finishes opening and goes back.
        """
        conn = self.engine.connect()
        opening = asyncio.ensure_future(conn.start())
        try:
            await asyncio.shield(opening)
        except asyncio.CancelledError:
            returning = asyncio.ensure_future(self._give_back(opening, conn))
            self._returning.add(returning)
            returning.add_done_callback(self._returning.discard)
            raise
        return conn

    @staticmethod
    async def _give_back(opening: asyncio.Future[AsyncConnection], conn: AsyncConnection) -> None:
        with contextlib.suppress(Exception):
            await opening
            await conn.close()

    async def close(self) -> None:
        await asyncio.gather(*self._returning, return_exceptions=True)
        await self.engine.dispose()


def _trace_statements(engine: AsyncEngine, tracer_provider: TracerProvider) -> None:
    """A span per SQL statement, only when tracing is on: no cost otherwise."""
    from opentelemetry.instrumentation.sqlalchemy.engine import EngineTracer
    from opentelemetry.metrics import get_meter
    from opentelemetry.trace import get_tracer

    tracer = get_tracer("agent_memory.store", tracer_provider=tracer_provider)
    meter = get_meter("agent_memory.store")
    counter = meter.create_up_down_counter("db.client.connections.usage")
    EngineTracer(tracer, engine.sync_engine, counter)


@contextmanager
def _database_errors() -> Iterator[None]:
    """Driver and pool failures as the service's errors."""
    try:
        yield
    except sa_exc.OperationalError as exc:
        if isinstance(exc.orig, psycopg.errors.QueryCanceled):
            raise Timeout(
                "the query ran past the server's statement timeout", reason="STATEMENT_TIMEOUT"
            ) from exc
        log.warning("database unavailable: %s", exc.orig or exc)
        raise Unavailable("the database is unavailable; retry later") from exc
    except (sa_exc.InterfaceError, sa_exc.TimeoutError) as exc:
        log.warning("database unavailable: %s", getattr(exc, "orig", None) or exc)
        raise Unavailable("the database is unavailable; retry later") from exc
    except sa_exc.DBAPIError as exc:
        if exc.connection_invalidated:
            raise Unavailable("the database connection was lost; retry later") from exc
        raise
    except (ConnectionError, OSError, TimeoutError) as exc:
        raise Unavailable("the database is unavailable; retry later") from exc
