"""An instant reaches the contract exactly: a response's Timestamp is the one protobuf's
own conversion gives, to the microsecond, whatever the instant's offset, across the whole
range a Timestamp holds, so a time sent back as a precondition matches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from google.protobuf import timestamp_pb2
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.api.convert import timestamp

OFFSETS = st.integers(min_value=-14 * 60, max_value=14 * 60).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
# The instants every offset can hold (a year-1 instant east of UTC is year 0 in UTC).
INSTANTS = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=OFFSETS
)


def protobufs(value: datetime) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value.astimezone(UTC))
    return ts


@given(INSTANTS)
def test_an_instant_is_the_timestamp_protobuf_makes_of_it(value: datetime) -> None:
    assert timestamp(value) == protobufs(value)


def test_the_ends_of_the_range_and_the_epoch() -> None:
    for value in (
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    ):
        assert timestamp(value) == protobufs(value)


def test_an_instant_without_an_offset_is_read_as_local_time() -> None:
    naive = datetime(2026, 3, 29, 2, 30)
    assert timestamp(naive) == protobufs(naive)
    assert timestamp(None) is None
