"""What the store calls an outage: a database that does not answer, never a busy pool."""

from __future__ import annotations

import asyncio

import pytest

from agent_memory.domain.errors import Unavailable
from agent_memory.domain.identity import Principal
from agent_memory.store import database as database_module
from agent_memory.store.database import Database

pytestmark = pytest.mark.integration


def test_a_pool_with_no_free_connection_is_unavailable_but_not_an_outage(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database_module, "CHECKOUT_TIMEOUT_SECONDS", 0.2)

    async def scenario() -> None:
        db = Database(database_url, pool_size=1)
        try:
            async with db.connection(Principal("t", "u")):
                with pytest.raises(Unavailable):
                    await use(db)
            assert not db.outage.down
            assert await db.probe()
        finally:
            await db.close()

    asyncio.run(scenario())


async def use(db: Database) -> None:
    async with db.connection(Principal("t", "u")):
        pass


def test_a_database_that_does_not_answer_is_an_outage_and_calls_are_refused_at_once() -> None:
    async def scenario() -> None:
        db = Database("postgresql://postgres@127.0.0.1:9/nothing", pool_size=1)
        try:
            assert not await db.probe()
            assert db.outage.down
            with pytest.raises(Unavailable) as refused:
                await use(db)
            # Refused before asking the pool, so not after its checkout wait.
            assert refused.value.__cause__ is None
        finally:
            await db.close()

    asyncio.run(scenario())
