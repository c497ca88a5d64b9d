"""What the store's integration tests share: a migrated database per module, a caller
of a tenant of its own, a way to run a scenario on a store that is closed after, and
the two stores every case of the contract (``test_store_contract*.py``) runs on."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from agent_memory.domain.identity import Principal
from agent_memory.store import migrate
from agent_memory.store.database import Database
from agent_memory.store.repositories import Store
from tests.fakes import FakeStore

S = TypeVar("S", bound=Store)
Body = Callable[[Store], Awaitable[None]]
T = TypeVar("T")


@pytest.fixture(scope="module")
def store_url(create_database: Callable[[], str]) -> str:
    """A database of the module's own, migrated to the head."""
    url = create_database()
    migrate.upgrade(url)
    return url


@pytest.fixture(params=["postgres", "in-memory"])
def make_store(request: pytest.FixtureRequest, store_url: str) -> Callable[[], Store]:
    """Each store of the contract: PostgreSQL, and the in-memory one of ``tests/fakes.py``."""
    if request.param == "in-memory":
        return FakeStore
    return lambda: Database(store_url, pool_size=4)


@pytest.fixture
def scenario(make_store: Callable[[], Store]) -> Callable[[Body], None]:
    """Run a contract case on each store."""

    def run(body: Body) -> None:
        run_on(make_store, body)

    return run


@pytest.fixture
def caller() -> Principal:
    """A tenant of this test alone."""
    return Principal(f"tenant-{uuid.uuid4().hex[:10]}", "alice")


def run_on(make_store: Callable[[], S], body: Callable[[S], Awaitable[T]]) -> T:
    """Run ``body`` on a new store on an event loop of its own; a database's pool is
    closed after."""

    async def go() -> T:
        store = make_store()
        try:
            return await body(store)
        finally:
            if isinstance(store, Database):
                await store.close()

    return asyncio.run(go())


def on_database(url: str, body: Callable[[Database], Awaitable[T]], pool_size: int = 4) -> T:
    """Run ``body`` on a :class:`Database` of ``url`` with a pool of ``pool_size``."""
    return run_on(lambda: Database(url, pool_size=pool_size), body)
