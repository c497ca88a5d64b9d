"""What the records of :mod:`agent_memory_client.types` share: the message each keeps
one attribute away, enums that survive a newer server's values, and the conversions
of the well-known types (``Timestamp`` to an aware UTC ``datetime``, ``Duration`` to a
``timedelta``, ``Struct`` to a ``dict``) both ways."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any, ClassVar, Generic, Self, TypeVar, cast, overload

from google.protobuf import duration_pb2, json_format, struct_pb2, timestamp_pb2
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


class Record(Generic[M]):
    """A message of the contract as a frozen dataclass of plain Python values.

    ``proto`` is the message it was read from, or, for a record made by hand or by
    ``dataclasses.replace``, one built from its fields. Treat it as read-only: the
    record does not follow changes made to it.
    """

    # Not a dataclass field, so that equality, repr, replace() and asdict() see only
    # the message's own fields.
    __slots__ = ("_message",)
    _message: M

    MESSAGE: ClassVar[type[Message]]

    @classmethod
    def from_proto(cls, message: M) -> Self:
        """The record of ``message``, keeping it as :attr:`proto`."""
        raise NotImplementedError

    def _to_proto(self) -> M:
        raise NotImplementedError

    def _kept(self, message: M) -> Self:
        object.__setattr__(self, "_message", message)
        return self

    @property
    def proto(self) -> M:
        """The record as its protobuf message."""
        try:
            return self._message
        except AttributeError:
            return self._kept(self._to_proto())._message

    def __repr__(self) -> str:
        """The fields that differ from their defaults, as the protobuf text format
        shows a message: ``OwnerSummary(id='coder', memory_count=3)``."""
        shown = []
        for each in dataclasses.fields(cast(Any, self)):
            value = getattr(self, each.name)
            if each.default_factory is not dataclasses.MISSING:
                default = each.default_factory()
            else:
                default = each.default
            if value != default:
                shown.append(f"{each.name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


class ProtoEnum(Enum):
    """An enum of the contract, its members named without the enum's prefix
    (``MemorySource.MANUAL`` for ``MEMORY_SOURCE_MANUAL``), valued as on the wire.

    A number this client does not know (a newer server's) reads as a member named
    ``UNRECOGNIZED_<number>`` instead of failing the whole answer.
    """

    @classmethod
    def _missing_(cls, value: object) -> Self | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        member = object.__new__(cls)
        member._name_ = f"UNRECOGNIZED_{value}"
        member._value_ = value
        # Kept, so that the same number reads as the same member (equal, and `is`).
        found = cls._value2member_map_.setdefault(value, member)
        assert isinstance(found, cls)
        return found

    @property
    def number(self) -> Any:
        """The value as a message field takes it. Typed ``Any``: the message stubs
        type an enum field as the generated wrapper class, which no ``int`` is to a
        type checker."""
        return self._value_

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self._name_}"


def datetime_of(stamp: timestamp_pb2.Timestamp) -> datetime:
    """A ``Timestamp`` as an aware UTC ``datetime`` (to the microsecond)."""
    return stamp.ToDatetime(tzinfo=UTC)


@overload
def timestamp_of(when: datetime) -> timestamp_pb2.Timestamp: ...


@overload
def timestamp_of(when: None) -> None: ...


def timestamp_of(when: datetime | None) -> timestamp_pb2.Timestamp | None:
    """An aware ``datetime`` as a ``Timestamp``; a naive one is refused rather than
    guessed at."""
    if when is None:
        return None
    if when.tzinfo is None:
        msg = "a datetime in a record must carry its time zone"
        raise ValueError(msg)
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(when)
    return stamp


def timedelta_of(duration: duration_pb2.Duration) -> timedelta:
    """A ``Duration`` as a ``timedelta`` (to the microsecond)."""
    return duration.ToTimedelta()


@overload
def duration_of(span: timedelta) -> duration_pb2.Duration: ...


@overload
def duration_of(span: None) -> None: ...


def duration_of(span: timedelta | None) -> duration_pb2.Duration | None:
    """A ``timedelta`` as a ``Duration``."""
    if span is None:
        return None
    duration = duration_pb2.Duration()
    duration.FromTimedelta(span)
    return duration


def dict_of(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A ``Struct`` as JSON-like Python values (numbers are floats, as in JSON)."""
    found: dict[str, Any] = json_format.MessageToDict(struct)
    return found


@overload
def struct_of(values: dict[str, Any]) -> struct_pb2.Struct: ...


@overload
def struct_of(values: None) -> None: ...


def struct_of(values: dict[str, Any] | None) -> struct_pb2.Struct | None:
    """JSON-like Python values as a ``Struct``."""
    if values is None:
        return None
    struct = struct_pb2.Struct()
    struct.update(values)
    return struct
