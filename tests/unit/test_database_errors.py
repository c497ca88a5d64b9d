"""How driver failures leave the store: as the service's errors, with the right status."""

from __future__ import annotations

import psycopg
import pytest

from agent_memory.domain.errors import ResourceExhausted, ServiceError, Timeout, Unavailable
from agent_memory.store.sql import database_errors


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (psycopg.errors.ProgramLimitExceeded("index row size exceeds maximum"), ResourceExhausted),
        (psycopg.errors.QueryCanceled("canceling statement"), Timeout),
        (psycopg.OperationalError("server closed the connection"), Unavailable),
    ],
)
def test_a_driver_failure_becomes_the_service_error_that_says_whether_to_retry(
    raised: Exception, expected: type[ServiceError]
) -> None:
    with pytest.raises(expected), database_errors():
        raise raised


def test_a_value_too_large_for_the_database_is_not_an_outage() -> None:
    # ProgramLimitExceeded is an OperationalError to psycopg, but retrying never helps.
    assert issubclass(psycopg.errors.ProgramLimitExceeded, psycopg.OperationalError)
    with pytest.raises(ServiceError) as info, database_errors():
        raise psycopg.errors.ProgramLimitExceeded("too big")
    assert not isinstance(info.value, Unavailable)
    assert info.value.reason == "VALUE_TOO_LARGE_FOR_DATABASE"
