"""How the embedded PostgreSQL is started again after its postmaster dies: the pauses
between attempts, and the one-line reason a failed attempt is told with."""

from __future__ import annotations

from agent_memory.store import embedded
from agent_memory.store.embedded import RestartPolicy


def test_the_first_attempt_is_at_once_then_the_pause_doubles_up_to_the_most() -> None:
    policy = RestartPolicy(first_pause=1.0, most_pause=15.0)
    assert [policy.pause(n) for n in range(1, 8)] == [0.0, 1.0, 2.0, 4.0, 8.0, 15.0, 15.0]


def test_a_failed_start_is_told_by_the_servers_last_fatal_line() -> None:
    failed = RuntimeError(
        "pg_ctl failed (exit status 1): waiting for server to start.... stopped waiting\n"
        "pg_ctl: could not start server\n"
        "the server's log (/data/pgdata/log) ends with:\n"
        "2026-01-01 00:00:00.000 UTC [7] LOG:  unrecognized configuration parameter\n"
        '2026-01-01 00:00:00.001 UTC [7] FATAL:  configuration file "/data/pgdata/'
        'postgresql.conf" contains errors\n'
    )
    assert embedded._start_failure(failed) == (
        'configuration file "/data/pgdata/postgresql.conf" contains errors'
    )
    assert embedded._start_failure(RuntimeError("no server\nmore")) == "no server"
    assert embedded._start_failure(OSError()) == "OSError"
