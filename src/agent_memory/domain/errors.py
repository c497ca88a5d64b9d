"""Transport-free errors. The API layer maps each class to one gRPC status code.

Every error carries a stable UPPER_SNAKE ``reason`` that clients can branch on,
and optional string ``metadata`` (never secrets, never stored values).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class FieldViolation:
    """One bad field of a request: the field's path and what is wrong with it."""

    field: str
    description: str
    reason: str = "INVALID_FIELD"


class ServiceError(Exception):
    """Base of every error the service raises on purpose."""

    default_reason = "ERROR"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        self.metadata: dict[str, str] = dict(metadata or {})


class InvalidArgument(ServiceError):
    """The request is malformed; ``violations`` say which fields and why."""

    default_reason = "INVALID_ARGUMENT"

    def __init__(
        self,
        violations: Sequence[FieldViolation],
        *,
        message: str | None = None,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        self.violations = list(violations)
        text = message or "; ".join(f"{v.field}: {v.description}" for v in self.violations)
        super().__init__(text or "invalid request", reason=reason, metadata=metadata)


class NotFound(ServiceError):
    default_reason = "NOT_FOUND"


class AlreadyExists(ServiceError):
    default_reason = "ALREADY_EXISTS"


class Conflict(ServiceError):
    """A precondition on the stored state (etag, timestamp) no longer holds."""

    default_reason = "CONFLICT"


class FailedPrecondition(ServiceError):
    default_reason = "FAILED_PRECONDITION"


class Unauthenticated(ServiceError):
    default_reason = "UNAUTHENTICATED"


class PermissionDenied(ServiceError):
    default_reason = "PERMISSION_DENIED"


class ResourceExhausted(ServiceError):
    default_reason = "RESOURCE_EXHAUSTED"


class Timeout(ServiceError):
    """The work took longer than the server allows (a statement timeout)."""

    default_reason = "TIMEOUT"


class Unavailable(ServiceError):
    """The database cannot be reached; the call may be retried."""

    default_reason = "DATABASE_UNAVAILABLE"


def check(violations: list[FieldViolation]) -> None:
    """Raise :class:`InvalidArgument` when any violation was collected."""
    if violations:
        raise InvalidArgument(violations)


@contextmanager
def under(prefix: str) -> Iterator[None]:
    """Field violations raised inside the block, their paths under ``prefix`` (a rule
    written for a request's top-level fields, applied to a nested message).

    Raises:
        InvalidArgument: as raised inside, every field path prefixed.
    """
    try:
        yield
    except InvalidArgument as exc:
        violations = [replace(v, field=f"{prefix}{v.field}") for v in exc.violations]
        raise InvalidArgument(violations, reason=exc.reason, metadata=exc.metadata) from None
