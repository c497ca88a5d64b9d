"""What the extraction worker's loop says when its poll fails: an outage is left to the
outage log, anything else is logged, at most once a minute, without SQL values."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agent_memory.config import Settings
from agent_memory.domain.errors import Timeout, Unavailable
from agent_memory.service.extraction_worker import ExtractionWorkers


class FailingStore:
    """A store whose every look at the job queue fails with ``error``."""

    def __init__(self, error: Exception, polls: int) -> None:
        self.error = error
        self.polls = 0
        self.wanted = polls
        self.enough = asyncio.Event()

    @asynccontextmanager
    async def admin(self) -> AsyncIterator[Any]:
        self.polls += 1
        if self.polls >= self.wanted:
            self.enough.set()
        raise self.error
        yield  # pragma: no cover


async def run_polls(store: FailingStore) -> None:
    workers = ExtractionWorkers(
        store,  # type: ignore[arg-type]
        extraction=None,  # type: ignore[arg-type]
        settings=Settings(extraction_poll_seconds=0.001),
    )
    workers.start()
    try:
        async with asyncio.timeout(30):
            await store.enough.wait()
    finally:
        await workers.stop()


def test_a_poll_past_the_statement_timeout_is_logged_once_a_minute(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = FailingStore(Timeout("the query ran past the statement timeout"), polls=20)
    with caplog.at_level(logging.ERROR, logger="agent_memory.service.extraction_worker"):
        asyncio.run(run_polls(store))
    failures = [r for r in caplog.records if "extraction worker failed" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].exc_info is not None


def test_an_outage_is_left_to_the_outage_log(caplog: pytest.LogCaptureFixture) -> None:
    store = FailingStore(Unavailable("the database is unavailable; retry later"), polls=20)
    with caplog.at_level(logging.DEBUG, logger="agent_memory.service.extraction_worker"):
        asyncio.run(run_polls(store))
    assert not caplog.records
