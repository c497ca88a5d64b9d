"""Domain errors to ``google.rpc.Status``: the one place where calls are aborted."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from agent_memory.domain import errors

ERROR_DOMAIN = "agentmemory.v1"

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
                        for v in error.violations
                    ]
                )
            )
        )
    status: grpc.Status = rpc_status.to_status(
        status_pb2.Status(code=code.value[0], message=error.message, details=details)
    )
    return status


def plain_status(code: grpc.StatusCode, message: str, reason: str) -> grpc.Status:
    status: grpc.Status = rpc_status.to_status(
        status_pb2.Status(
            code=code.value[0],
            message=message,
            details=[_packed(error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN))],
        )
    )
    return status
