"""How an outage of the database is told in the log: once, in summaries, once more."""

from __future__ import annotations

import logging

import pytest

from agent_memory.store.outage import DatabaseOutage


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_storm_of_failures_makes_a_first_line_summaries_and_a_last_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    outage = DatabaseOutage(summary_seconds=5, clock=clock)
    caplog.set_level(logging.WARNING, logger="agent_memory.store.outage")
    # 12 s of 750 failing calls a second.
    for _ in range(9000):
        outage.failed(ConnectionRefusedError("connection refused\nsecond line"))
        clock.now += 12 / 9000
    assert outage.down
    outage.answered()
    outage.answered()  # nothing more to say
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 4, messages
    assert messages[0].startswith("database unavailable: connection refused;")
    assert "second line" not in messages[0]
    assert all("still unavailable" in m for m in messages[1:3])
    assert "answers again after 12.0s" in messages[3]
    assert "9000 calls refused" in messages[3]
    assert all(r.exc_info is None for r in caplog.records)
    assert not outage.down


def test_each_outage_is_told_on_its_own(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    outage = DatabaseOutage(clock=clock)
    caplog.set_level(logging.WARNING, logger="agent_memory.store.outage")
    outage.failed("first")
    outage.answered()
    outage.failed("second")
    messages = [r.getMessage() for r in caplog.records]
    assert [m.split(":")[0] for m in messages] == [
        "database unavailable",
        "database answers again after 0.0s of outage (1 calls refused meanwhile)",
        "database unavailable",
    ]
