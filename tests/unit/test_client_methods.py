"""The Python client's surface, without a server: every RPC of the contract has a
method named after it on both clients, which sends that RPC; the asyncio client has
the blocking one's methods with the same parameters; and what ``_ops`` checks
before anything is sent."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

from agent_memory_client import AsyncMemoryClient, BlockConflict, MemoryClient, _ops, types
from agent_memory_client._channel import Connection
from agentmemory.v1 import memory_service_pb2
from tests.support import agentmemory_rpcs

RPCS = agentmemory_rpcs()

# Arguments enough to build each request: the required ones by their annotation, and
# what the operations that refuse an empty call need besides.
PLACEHOLDERS: dict[str, Any] = {
    "str": "x",
    "int": 1,
    "Iterable[str]": ["x"],
    "BlockLabelName": "core",
}
BESIDES: dict[str, dict[str, Any]] = {
    "update_memory": {"value": "v"},
    "update_agent_settings": {"memory_enabled": True},
    "update_workspace_settings": {"expiry_slide": timedelta(days=7)},
    "extract_memories": {"session_id": "s"},
    "upsert_memory": {"agent_id": "a"},
    "memorize": {"agent_id": "a"},
    "list_memories": {"agent_id": "a"},
}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Sent(Exception):
    """What a recording client raises instead of calling."""

    def __init__(self, method: str, request: Message) -> None:
        super().__init__(method)
        self.method = method
        self.request = request


class Nowhere:
    """A channel the stubs can be made on; nothing is ever sent through it."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None

    def close(self) -> None:
        pass


class AsyncNowhere(Nowhere):
    async def close(self) -> None:  # type: ignore[override]
        pass


class RecordingClient(MemoryClient):
    def _open(self, connection: Connection) -> Any:
        return Nowhere()

    def _run(self, op: _ops.Op[Any], timeout: float | None) -> Any:
        raise Sent(op.method, op.request)

    def _pages(self, pages: _ops.Pages[Any], timeout: float | None) -> Any:
        raise Sent(pages.method, pages.request)

    def _start_stream(self, stream: _ops.Stream[Any], timeout: float | None) -> Any:
        raise Sent(stream.method, stream.request)


class AsyncRecordingClient(AsyncMemoryClient):
    def _open(self, connection: Connection) -> Any:
        return AsyncNowhere()

    async def _run(self, op: _ops.Op[Any], timeout: float | None) -> Any:  # noqa: ASYNC109
        raise Sent(op.method, op.request)

    def _pages(self, pages: _ops.Pages[Any], timeout: float | None) -> Any:
        raise Sent(pages.method, pages.request)

    def _start_stream(self, stream: _ops.Stream[Any], timeout: float | None) -> Any:
        raise Sent(stream.method, stream.request)


def arguments(method: Callable[..., Any]) -> tuple[list[Any], dict[str, Any]]:
    """Placeholder arguments for every required parameter of ``method``."""
    positional: list[Any] = []
    keywords: dict[str, Any] = dict(BESIDES.get(method.__name__, {}))
    for parameter in list(inspect.signature(method).parameters.values())[1:]:
        if parameter.default is not inspect.Parameter.empty:
            continue
        value = PLACEHOLDERS[str(parameter.annotation)]
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            keywords[parameter.name] = value
        else:
            positional.append(value)
    return positional, keywords


def public_methods(cls: type) -> list[str]:
    return sorted(
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and inspect.isfunction(value)
    )


@pytest.mark.parametrize("rpc", RPCS, ids=lambda m: m.name)
def test_every_rpc_has_a_method_on_both_clients_that_sends_it(rpc: MethodDescriptor) -> None:
    name = snake(rpc.name)
    for cls in (MemoryClient, AsyncMemoryClient):
        assert inspect.isfunction(getattr(cls, name, None)), f"{cls.__name__} has no {name}()"
    with RecordingClient("127.0.0.1:1") as client:
        method = getattr(client, name)
        args, kwargs = arguments(getattr(MemoryClient, name))
        with pytest.raises(Sent) as sync_sent:
            method(*args, **kwargs)

    async def send_async() -> Sent:
        async with AsyncRecordingClient("127.0.0.1:1") as client:
            try:
                answer = getattr(client, name)(*args, **kwargs)
                if inspect.isawaitable(answer):
                    await answer
            except Sent as sent:
                return sent
        raise AssertionError(f"AsyncMemoryClient.{name}() sent nothing")

    async_sent = asyncio.run(send_async())
    for sent in (sync_sent.value, async_sent):
        assert sent.method == rpc.name
        assert sent.request.DESCRIPTOR is rpc.input_type


def _async_return(sync_return: str) -> str:
    """The asyncio client's return annotation for the blocking one's."""
    listing = re.fullmatch(r"Iterator\[(.+)\]", sync_return)
    if listing:
        return f"AsyncGenerator[{listing.group(1)}, None]"
    return {"RecallStream": "AsyncRecallStream", "Self": "Self"}.get(sync_return, sync_return)


def test_neither_client_has_a_method_the_other_lacks() -> None:
    assert public_methods(MemoryClient) == public_methods(AsyncMemoryClient)


@pytest.mark.parametrize("name", public_methods(MemoryClient))
def test_the_async_client_has_the_same_method_with_the_same_signature(name: str) -> None:
    blocking = inspect.signature(getattr(MemoryClient, name))
    awaited = inspect.signature(getattr(AsyncMemoryClient, name))
    assert list(awaited.parameters) == list(blocking.parameters)
    for parameter in blocking.parameters.values():
        twin = awaited.parameters[parameter.name]
        assert (twin.kind, twin.default) == (parameter.kind, parameter.default), parameter.name
        if (name, parameter.name) == ("update_block", "change"):
            # The asyncio client's change may also be a coroutine function.
            assert twin.annotation.startswith(f"{parameter.annotation} | ")
        else:
            assert twin.annotation == parameter.annotation, parameter.name
    assert awaited.return_annotation == _async_return(blocking.return_annotation)
    answers_later = awaited.return_annotation.startswith(("AsyncGenerator", "AsyncRecall"))
    assert inspect.iscoroutinefunction(getattr(AsyncMemoryClient, name)) is not answers_later


@pytest.mark.parametrize("name", public_methods(MemoryClient))
def test_no_method_answers_a_protobuf_message(name: str) -> None:
    """Answers are records of ``agent_memory_client.types``, never messages."""
    returns = str(inspect.signature(getattr(MemoryClient, name)).return_annotation)
    assert "_pb2" not in returns, returns


# -- what an operation checks before sending --------------------------------------------


def test_update_memory_changes_the_fields_given_or_named() -> None:
    given = _ops.update_memory("m-1", value="v", pinned=False, etag='W/"3"')
    request = given.request
    assert isinstance(request, memory_service_pb2.UpdateMemoryRequest)
    assert list(request.update_mask.paths) == ["value", "pinned"]
    assert (request.memory.value, request.memory.pinned, request.etag) == ("v", False, 'W/"3"')

    cleared = _ops.update_memory("m-1", update_mask=["expire_time", "tags"]).request
    assert isinstance(cleared, memory_service_pb2.UpdateMemoryRequest)
    assert list(cleared.update_mask.paths) == ["expire_time", "tags"]
    assert not cleared.memory.HasField("expire_time")
    assert not cleared.HasField("etag")

    with pytest.raises(ValueError, match="at least one field"):
        _ops.update_memory("m-1")
    with pytest.raises(ValueError, match="leaves out value"):
        _ops.update_memory("m-1", value="v", update_mask=["tags"])
    with pytest.raises(TypeError, match="not a string"):
        _ops.update_memory("m-1", tags="urgent")
    with pytest.raises(ValueError, match="time zone"):
        _ops.update_memory("m-1", expire_time=datetime(2030, 1, 1))


def test_choices_are_checked_before_sending() -> None:
    with pytest.raises(ValueError, match="exactly one of session_id"):
        _ops.extract_memories("a", transcript="t")
    with pytest.raises(ValueError, match="re_examinable must be one of"):
        _ops.register_card_type("t", re_examinable="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="resolution_status must be one of"):
        _ops.resolve_decision("d", "done")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one field"):
        _ops.update_agent_settings("a")
    with pytest.raises(ValueError, match="at least one field"):
        _ops.update_workspace_settings("w")


def test_a_page_is_the_first_request_with_its_token() -> None:
    pages = _ops.list_memory_events("m-1", page_size=2)
    op = pages.page("next")
    assert isinstance(op.request, memory_service_pb2.ListMemoryEventsRequest)
    assert (op.request.memory_id, op.request.page_size, op.request.page_token) == (
        "m-1",
        2,
        "next",
    )
    assert isinstance(pages.request, memory_service_pb2.ListMemoryEventsRequest)
    assert pages.request.page_token == ""
    answer = memory_service_pb2.ListMemoryEventsResponse(next_page_token="after")
    assert op.unwrap(answer) == ([], "after")


def test_a_result_twin_answers_the_whole_response_of_its_rpc_only() -> None:
    op = _ops.upsert_memory("k", "v", agent_id="a")
    whole = op.answering(types.UpsertMemoryResponse)
    answer = memory_service_pb2.UpsertMemoryResponse(created=True)
    record = whole.unwrap(answer)
    assert isinstance(record, types.UpsertMemoryResponse)
    assert record.created
    assert record.proto is answer
    assert (whole.method, whole.request) == (op.method, op.request)
    with pytest.raises(TypeError, match="not UpsertMemoryResponse"):
        whole.unwrap(memory_service_pb2.GetMemoryResponse())


@pytest.mark.parametrize(
    "sent", ["2026-04-30T16:20:00.123456Z", "2026-04-30T16:20:00.123456"], ids=["utc", "naive"]
)
def test_a_block_conflict_time_is_timezone_aware(sent: str) -> None:
    conflict = BlockConflict(
        grpc.StatusCode.ABORTED,
        "stale",
        reason="BLOCK_CONFLICT",
        metadata={"current_updated_at": sent},
    )
    assert conflict.current_updated_at == datetime(2026, 4, 30, 16, 20, 0, 123456, tzinfo=UTC)


def test_a_slide_is_sent_as_a_duration_and_named_in_the_mask() -> None:
    op = _ops.update_agent_settings("a", expiry_slide=timedelta(days=7))
    assert op.request.settings.expiry_slide.ToTimedelta() == timedelta(days=7)
    assert list(op.request.update_mask.paths) == ["expiry_slide"]
    # Zero turns it off: named in the mask, so that it is changed.
    off = _ops.update_workspace_settings("w", expiry_slide=timedelta(0))
    assert off.request.settings.expiry_slide.ToTimedelta() == timedelta(0)
    assert list(off.request.update_mask.paths) == ["expiry_slide"]
