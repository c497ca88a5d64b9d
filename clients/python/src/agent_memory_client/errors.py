"""Typed errors: every failed call raises an :class:`AgentMemoryError` subclass chosen
by the status's ``ErrorInfo`` reason when the client knows it, else by its code.

The service puts exactly one ``google.rpc.ErrorInfo`` (a stable ``reason``, the
``agentmemory.v1`` domain, and ``metadata``) on every error it raises, plus
``google.rpc.BadRequest`` field violations on ``INVALID_ARGUMENT``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar

import grpc
from google.rpc import error_details_pb2, status_pb2

__all__ = [
    "Aborted",
    "AgentMemoryError",
    "AlreadyExists",
    "BlockConflict",
    "DeadlineExceeded",
    "EtagMismatch",
    "FailedPrecondition",
    "FieldViolation",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ReadOnlyMemory",
    "ResourceExhausted",
    "RoleForbids",
    "SecretInValue",
    "ServerError",
    "Unauthenticated",
    "Unavailable",
    "error_from_status",
]

_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One field of the request the service refused, and why."""

    field: str
    description: str
    reason: str = ""


class AgentMemoryError(Exception):
    """A call the service (or the transport) refused.

    Attributes:
        code: the gRPC status code.
        message: the status message, in words.
        reason: the ErrorInfo reason (``BLOCK_CONFLICT``, ``ROLE_FORBIDS``, ...);
            empty when the status carried none (a transport failure).
        metadata: the ErrorInfo metadata.
        field_violations: the BadRequest violations of an invalid argument.
    """

    code_of: ClassVar[grpc.StatusCode | None] = None

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        field_violations: Iterable[FieldViolation] = (),
    ) -> None:
        super().__init__(f"{code.name}: {message}" + (f" [{reason}]" if reason else ""))
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata: dict[str, str] = dict(metadata or {})
        self.field_violations = tuple(field_violations)


class InvalidArgument(AgentMemoryError):
    """The request broke a rule of the contract; ``field_violations`` say which."""

    code_of = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(AgentMemoryError):
    code_of = grpc.StatusCode.NOT_FOUND


class AlreadyExists(AgentMemoryError):
    code_of = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(AgentMemoryError):
    code_of = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(AgentMemoryError):
    """No key, a revoked or unknown key, or malformed local-mode identity headers."""

    code_of = grpc.StatusCode.UNAUTHENTICATED


class ResourceExhausted(AgentMemoryError):
    code_of = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(AgentMemoryError):
    code_of = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(AgentMemoryError):
    """A concurrent write won; re-read and try again."""

    code_of = grpc.StatusCode.ABORTED


class Unavailable(AgentMemoryError):
    """The service or its database did not answer (already retried when safe)."""

    code_of = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(AgentMemoryError):
    code_of = grpc.StatusCode.DEADLINE_EXCEEDED


class ServerError(AgentMemoryError):
    """Any other status: INTERNAL, UNKNOWN, UNIMPLEMENTED, CANCELLED, DATA_LOSS, ..."""


class BlockConflict(Aborted):
    """A compare-and-set block write or delete whose expected ``updated_at`` is stale.

    Nothing was written. ``current_updated_at`` is the block's ``updated_at`` now
    (None when the block does not exist), ``current_version`` its version (0 when
    absent), ``current_etag`` its etag ("" when absent) and ``exists`` whether it
    exists.
    """

    @property
    def current_etag(self) -> str:
        return self.metadata.get("current_etag", "")

    @property
    def exists(self) -> bool:
        return self.metadata.get("exists") == "true"

    @property
    def current_version(self) -> int:
        raw = self.metadata.get("current_version", "0")
        return int(raw) if raw.isdigit() else 0

    @property
    def current_updated_at(self) -> datetime | None:
        raw = self.metadata.get("current_updated_at", "")
        if not raw:
            return None
        found = datetime.fromisoformat(raw)
        # The service sends UTC; a time without an offset is read as UTC, never as local.
        return found if found.tzinfo is not None else found.replace(tzinfo=UTC)


class EtagMismatch(Aborted):
    """A memory changed since the ``etag`` given was read; ``current_etag`` is its
    etag now."""

    @property
    def current_etag(self) -> str:
        return self.metadata.get("current_etag", "")


class ReadOnlyMemory(FailedPrecondition):
    """The memory was captured automatically: only ``pinned`` can change, and it can
    be deleted."""


class SecretInValue(InvalidArgument):
    """A value looked like a credential (a key, a token, a password), so nothing was
    stored."""


class RoleForbids(PermissionDenied):
    """The key's role does not allow the call: ``role`` is the role held,
    ``required_role`` the one needed."""

    @property
    def role(self) -> str:
        return self.metadata.get("role", "")

    @property
    def required_role(self) -> str:
        return self.metadata.get("required_role", "")


_BY_REASON: dict[str, type[AgentMemoryError]] = {
    "BLOCK_CONFLICT": BlockConflict,
    "ETAG_MISMATCH": EtagMismatch,
    "READ_ONLY_MEMORY": ReadOnlyMemory,
    "SECRET_IN_VALUE": SecretInValue,
    "ROLE_FORBIDS": RoleForbids,
}

_BY_CODE: dict[grpc.StatusCode, type[AgentMemoryError]] = {
    cls.code_of: cls
    for cls in (
        InvalidArgument,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        Unauthenticated,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        Unavailable,
        DeadlineExceeded,
    )
    if cls.code_of is not None
}


def error_from_status(
    code: grpc.StatusCode,
    message: str,
    trailing_metadata: Iterable[tuple[str, str | bytes]] | None,
) -> AgentMemoryError:
    """The typed error of a failed call, from its code, message and trailers."""
    reason, metadata, violations = "", {}, []
    for key, value in trailing_metadata or ():
        if key != _DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status()
        try:
            status.ParseFromString(value)
        except Exception:
            break
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            bad = error_details_pb2.BadRequest()
            if detail.Unpack(info):
                reason, metadata = info.reason, dict(info.metadata)
            elif detail.Unpack(bad):
                violations = [
                    FieldViolation(v.field, v.description, v.reason) for v in bad.field_violations
                ]
    cls = _BY_REASON.get(reason)
    if cls is None or cls.code_of is not code:
        cls = _BY_CODE.get(code, ServerError)
    return cls(code, message, reason=reason, metadata=metadata, field_violations=violations)


def error_from_rpc(error: grpc.RpcError) -> AgentMemoryError:
    """The typed error of a ``grpc.RpcError`` (sync) or ``grpc.aio.AioRpcError``."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    return error_from_status(code or grpc.StatusCode.UNKNOWN, details or "", trailers)
