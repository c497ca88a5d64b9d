"""Domain errors to rich gRPC statuses (status.py)."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from agent_memory.domain import errors
from agent_memory.status import ERROR_DOMAIN, plain_status, to_status

DETAILS_KEY = "grpc-status-details-bin"


def decoded(status: grpc.Status) -> status_pb2.Status:
    [blob] = [value for key, value in status.trailing_metadata if key == DETAILS_KEY]
    return status_pb2.Status.FromString(blob)


def infos_of(rich: status_pb2.Status) -> list[error_details_pb2.ErrorInfo]:
    found = []
    for detail in rich.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            found.append(info)
    return found


def bad_requests_of(rich: status_pb2.Status) -> list[error_details_pb2.BadRequest]:
    found = []
    for detail in rich.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            found.append(bad)
    return found


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (errors.NotFound("gone"), grpc.StatusCode.NOT_FOUND),
        (errors.AlreadyExists("taken"), grpc.StatusCode.ALREADY_EXISTS),
        (errors.Conflict("stale"), grpc.StatusCode.ABORTED),
        (errors.FailedPrecondition("read only"), grpc.StatusCode.FAILED_PRECONDITION),
        (errors.Unauthenticated("who"), grpc.StatusCode.UNAUTHENTICATED),
        (errors.PermissionDenied("no"), grpc.StatusCode.PERMISSION_DENIED),
        (errors.ResourceExhausted("full"), grpc.StatusCode.RESOURCE_EXHAUSTED),
        (errors.Unavailable("down"), grpc.StatusCode.UNAVAILABLE),
        (errors.ServiceError("unclassified"), grpc.StatusCode.INTERNAL),
        (
            errors.InvalidArgument([errors.FieldViolation("key", "bad")]),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ],
)
def test_each_error_class_maps_to_its_code(
    error: errors.ServiceError, code: grpc.StatusCode
) -> None:
    status = to_status(error)
    assert status.code is code
    rich = decoded(status)
    assert rich.code == code.value[0]
    assert rich.message == error.message
    assert status.details == error.message


def test_a_subclass_maps_like_its_parent() -> None:
    class KeyGone(errors.NotFound):
        pass

    assert to_status(KeyGone("gone")).code is grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (errors.NotFound("gone"), "NOT_FOUND"),
        (errors.AlreadyExists("taken"), "ALREADY_EXISTS"),
        (errors.Conflict("stale"), "CONFLICT"),
        (errors.FailedPrecondition("ro"), "FAILED_PRECONDITION"),
        (errors.Unauthenticated("who"), "UNAUTHENTICATED"),
        (errors.PermissionDenied("no"), "PERMISSION_DENIED"),
        (errors.ResourceExhausted("full"), "RESOURCE_EXHAUSTED"),
        (errors.Unavailable("down"), "DATABASE_UNAVAILABLE"),
        (errors.InvalidArgument([]), "INVALID_ARGUMENT"),
    ],
)
def test_default_reason_is_carried_in_exactly_one_error_info(
    error: errors.ServiceError, reason: str
) -> None:
    [info] = infos_of(decoded(to_status(error)))
    assert info.reason == reason
    assert info.domain == ERROR_DOMAIN
    assert dict(info.metadata) == {}


def test_explicit_reason_and_metadata_are_carried() -> None:
    error = errors.Conflict(
        "memory changed",
        reason="ETAG_MISMATCH",
        metadata={"memory_id": "m-1", "current_etag": 'W/"3"'},
    )
    rich = decoded(to_status(error))
    [info] = infos_of(rich)
    assert info.reason == "ETAG_MISMATCH"
    assert dict(info.metadata) == {"memory_id": "m-1", "current_etag": 'W/"3"'}
    assert bad_requests_of(rich) == []
    assert len(rich.details) == 1


def test_invalid_argument_carries_every_field_violation() -> None:
    error = errors.InvalidArgument(
        [
            errors.FieldViolation("key", "must not be empty", "REQUIRED"),
            errors.FieldViolation("value", "too long", "TOO_LONG"),
            errors.FieldViolation("importance", "out of range"),
        ],
        reason="BAD_MEMORY",
        metadata={"hint": "x"},
    )
    status = to_status(error)
    assert status.code is grpc.StatusCode.INVALID_ARGUMENT
    rich = decoded(status)
    [info] = infos_of(rich)
    assert info.reason == "BAD_MEMORY"
    assert dict(info.metadata) == {"hint": "x"}
    [bad] = bad_requests_of(rich)
    assert [(v.field, v.description, v.reason) for v in bad.field_violations] == [
        ("key", "must not be empty", "REQUIRED"),
        ("value", "too long", "TOO_LONG"),
        ("importance", "out of range", "INVALID_FIELD"),
    ]
    assert len(rich.details) == 2
    assert "key: must not be empty" in rich.message


def test_invalid_argument_message_defaults_from_the_violations() -> None:
    error = errors.InvalidArgument([errors.FieldViolation("page_size", "must not be negative")])
    assert decoded(to_status(error)).message == "page_size: must not be negative"


def test_check_raises_only_when_something_was_collected() -> None:
    errors.check([])
    with pytest.raises(errors.InvalidArgument) as raised:
        errors.check([errors.FieldViolation("id", "bad", "INVALID_ID")])
    assert to_status(raised.value).code is grpc.StatusCode.INVALID_ARGUMENT


def test_non_ascii_message_survives() -> None:
    error = errors.NotFound("clé «ü» \U0001f600 introuvable")
    assert decoded(to_status(error)).message == error.message


def test_plain_status_has_one_error_info() -> None:
    status = plain_status(grpc.StatusCode.INTERNAL, "internal error", "INTERNAL")
    assert status.code is grpc.StatusCode.INTERNAL
    rich = decoded(status)
    assert rich.message == "internal error"
    [info] = infos_of(rich)
    assert info.reason == "INTERNAL"
    assert info.domain == ERROR_DOMAIN
    assert len(rich.details) == 1
