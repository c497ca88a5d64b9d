"""Domain errors to ``google.rpc.Status``: the one place where calls are aborted, for
gRPC and for HTTP alike, and the stand-in for a request a transport could not read."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from agent_memory.domain import errors

ERROR_DOMAIN = "agentmemory.v1"
# Status details travel in trailers, which gRPC caps (8 KiB soft, 16 KiB hard):
# a request with many bad fields reports the first ones and how many more.
MAX_VIOLATIONS = 10
MAX_MESSAGE_CHARS = 1024

_CODES: dict[type[errors.ServiceError], grpc.StatusCode] = {
    errors.InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    errors.NotFound: grpc.StatusCode.NOT_FOUND,
    errors.AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    errors.Conflict: grpc.StatusCode.ABORTED,
    errors.FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
    errors.Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    errors.PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    errors.ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
    errors.Unavailable: grpc.StatusCode.UNAVAILABLE,
    errors.Timeout: grpc.StatusCode.DEADLINE_EXCEEDED,
}


def status_code(error: errors.ServiceError) -> grpc.StatusCode:
    for cls in type(error).__mro__:
        if cls in _CODES:
            return _CODES[cls]
    return grpc.StatusCode.INTERNAL


def _packed(message: error_details_pb2.ErrorInfo | error_details_pb2.BadRequest) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def to_status(error: errors.ServiceError) -> grpc.Status:
    """A rich status: exactly one ErrorInfo, plus BadRequest for invalid arguments."""
    status: grpc.Status = rpc_status.to_status(status_message(error))
    return status


def status_message(error: errors.ServiceError) -> status_pb2.Status:
    """The ``google.rpc.Status`` of :func:`to_status`, as a message (for HTTP)."""
    code = status_code(error)
    details = [
        _packed(
            error_details_pb2.ErrorInfo(
                reason=error.reason, domain=ERROR_DOMAIN, metadata=error.metadata
            )
        )
    ]
    if isinstance(error, errors.InvalidArgument):
        details.append(
            _packed(
                error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(
                            field=v.field, description=v.description, reason=v.reason
                        )
                        for v in error.violations[:MAX_VIOLATIONS]
                    ]
                )
            )
        )
    return status_pb2.Status(code=code.value[0], message=_bounded(error), details=details)


def _bounded(error: errors.ServiceError) -> str:
    """The message, short enough that the status always fits gRPC's trailer limits."""
    if isinstance(error, errors.InvalidArgument) and len(error.violations) > MAX_VIOLATIONS:
        shown = "; ".join(f"{v.field}: {v.description}" for v in error.violations[:MAX_VIOLATIONS])
        return f"{shown}; and {len(error.violations) - MAX_VIOLATIONS} more"[:MAX_MESSAGE_CHARS]
    return error.message[:MAX_MESSAGE_CHARS]


def plain_status(code: grpc.StatusCode, message: str, reason: str) -> grpc.Status:
    status: grpc.Status = rpc_status.to_status(plain_status_message(code, message, reason))
    return status


def plain_status_message(code: grpc.StatusCode, message: str, reason: str) -> status_pb2.Status:
    """A status with one ErrorInfo of ``reason`` and no other detail."""
    return status_pb2.Status(
        code=code.value[0],
        message=message,
        details=[_packed(error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN))],
    )


@dataclass(frozen=True)
class Unreadable:
    """Stands in for a request another transport could not read into its message (HTTP
    JSON, query or path); like :class:`Undecodable`, refused once the caller is known."""

    refusal: errors.InvalidArgument

    def error(self) -> errors.InvalidArgument:
        return self.refusal
