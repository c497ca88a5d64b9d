"""The HTTP side on real uvicorn over loopback, with small handlers standing in for the
service: what it does with streams, health and the panel's files, whatever the
service answers."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, field_mask_pb2

from agent_memory.api.interceptors import ServiceInterceptor
from agent_memory.config import Settings
from agent_memory.domain.identity import Principal, Role
from agent_memory.http.app import HttpServer, http_app
from agent_memory.http.routes import Route, routes
from agent_memory.http.transcoder import (
    HTTP_STATUS,
    HttpCallContext,
    Transcoder,
    allow_header,
    body_mask,
    infers_mask,
)
from agentmemory.v1 import memory_service_pb2, recall_service_pb2

RECALL = "/agentmemory.v1.RecallService/Recall"


class Loop:
    """An event loop in a thread, as the server runs its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class Served:
    """The HTTP app over ``handlers`` on a free loopback port."""

    def __init__(self, handlers: dict[str, grpc.RpcMethodHandler], answers: bool = True) -> None:
        self.loop = Loop()

        async def admit(method: str, metadata: Any) -> None:
            return None

        transcoder = Transcoder(handlers, admit=admit, max_message_bytes=1 << 20)

        async def database_answers() -> bool:
            return answers

        async def start() -> HttpServer:
            server = HttpServer(http_app(transcoder, database_answers), "127.0.0.1:0", Settings())
            await server.start()
            return server

        self.server: HttpServer = self.loop.run(start())
        self.base = f"http://{self.server.address}"

    def close(self) -> None:
        self.loop.run(self.server.stop())
        self.loop.close()


def every_route_answering(
    stream: grpc.RpcMethodHandler | None = None,
) -> dict[str, grpc.RpcMethodHandler]:
    async def empty(request: Any, context: Any) -> Any:
        raise AssertionError("not called in these tests")

    handlers = {r.grpc_path: grpc.unary_unary_rpc_method_handler(empty) for r in routes()}
    if stream is not None:
        handlers[RECALL] = stream
    return handlers


def recall_over_http(recall: Any) -> httpx.Response:
    """POST /v1/recall to the app over ``recall`` as the Recall handler."""
    served = Served(every_route_answering(grpc.unary_stream_rpc_method_handler(recall)))
    try:
        return httpx.post(f"{served.base}/v1/recall", json={}, timeout=10)
    finally:
        served.close()


@pytest.fixture
def released() -> Iterator[tuple[asyncio.Event, Served]]:
    """A Recall that sends one line, then waits to be released before the second."""
    release = asyncio.Event()

    async def recall(request: Any, context: Any) -> AsyncIterator[Any]:
        yield recall_service_pb2.RecallResponse(content="first", score=0.9)
        await release.wait()
        yield recall_service_pb2.RecallResponse(content="second", score=0.5)

    served = Served(every_route_answering(grpc.unary_stream_rpc_method_handler(recall)))
    yield release, served
    served.loop.loop.call_soon_threadsafe(release.set)
    served.close()


def test_each_streamed_line_reaches_the_caller_before_the_next_is_produced(
    released: tuple[asyncio.Event, Served],
) -> None:
    release, served = released
    with httpx.stream("POST", f"{served.base}/v1/recall", json={}, timeout=10) as response:
        assert response.headers["content-type"] == "application/x-ndjson"
        lines = response.iter_lines()
        # Were lines held back until the stream ends, this would wait for ever: the
        # second line is produced only once the first has been read.
        assert json.loads(next(lines)) == {"content": "first", "score": 0.9}
        served.loop.loop.call_soon_threadsafe(release.set)
        assert json.loads(next(lines)) == {"content": "second", "score": 0.5}
        assert list(lines) == []


def test_a_failure_after_the_first_line_ends_the_stream_with_an_error_line() -> None:
    async def recall(request: Any, context: Any) -> AsyncIterator[Any]:
        yield recall_service_pb2.RecallResponse(content="first", score=0.9)
        await context.abort(grpc.StatusCode.UNAVAILABLE, "the database went away")

    response = recall_over_http(recall)
    assert response.status_code == 200
    first, last = (json.loads(line) for line in response.text.splitlines())
    assert first["content"] == "first"
    assert last == {"error": {"code": 14, "message": "the database went away"}}


def test_a_failure_before_the_first_line_is_the_status_of_its_code() -> None:
    async def recall(request: Any, context: Any) -> AsyncIterator[Any]:
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, "not yours")
        yield recall_service_pb2.RecallResponse()

    response = recall_over_http(recall)
    assert response.status_code == 403
    assert response.json() == {"code": 7, "message": "not yours"}


def test_an_unexpected_error_is_a_500_status_without_its_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def recall(request: Any, context: Any) -> AsyncIterator[Any]:
        raise RuntimeError("secret internals")
        yield  # pragma: no cover

    response = recall_over_http(recall)
    assert response.status_code == 500
    assert response.json()["code"] == grpc.StatusCode.INTERNAL.value[0]
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "secret internals" not in response.text
    assert "secret internals" in caplog.text


@pytest.mark.parametrize(("answers", "status"), [(True, 200), (False, 503)])
def test_healthz_follows_the_database(answers: bool, status: int) -> None:
    served = Served(every_route_answering(), answers=answers)
    try:
        response = httpx.get(f"{served.base}/healthz", timeout=10)
    finally:
        served.close()
    assert response.status_code == status
    assert response.json() == {"status": "SERVING" if answers else "NOT_SERVING"}


def test_the_panel_is_served_with_a_policy_that_allows_nothing_from_elsewhere() -> None:
    served = Served(every_route_answering())
    try:
        page = httpx.get(f"{served.base}/", timeout=10)
        missing = httpx.get(f"{served.base}/panel/nothing.js", timeout=10)
    finally:
        served.close()
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy
    assert "connect-src 'self'" in policy
    assert "http" not in policy  # no other origin is named
    assert missing.status_code == 404


def test_every_grpc_code_has_an_http_status_of_its_class() -> None:
    assert set(HTTP_STATUS) == set(grpc.StatusCode)
    assert HTTP_STATUS[grpc.StatusCode.OK] == 200
    for code, status in HTTP_STATUS.items():
        if code is not grpc.StatusCode.OK:
            assert 400 <= status < 600, code


def test_a_caller_admitted_from_the_headers_is_not_identified_again() -> None:
    identified: list[object] = []
    principal = Principal(tenant_id="t", user_id="u", role=Role.ORCHESTRATOR)

    async def identify(metadata: Any) -> Principal:
        identified.append(metadata)
        return principal

    async def behaviour(caller: Principal, request: Any) -> str:
        return caller.tenant_id

    interceptor = ServiceInterceptor(identify)
    method = "/agentmemory.v1.MemoryService/GetMemory"

    async def continuation(details: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(behaviour)

    async def call(context: Any) -> str:
        details = type("Details", (), {"method": method, "invocation_metadata": ()})()
        handler = await interceptor.intercept_service(continuation, details)
        answer: str = await handler.unary_unary(memory_service_pb2.GetMemoryRequest(), context)
        return answer

    admitted = HttpCallContext([("authorization", "Bearer k")], principal)
    assert asyncio.run(call(admitted)) == "t"
    assert identified == []

    # A call with no admitted caller (as gRPC's context) is identified as ever.
    class GrpcLikeContext:
        def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
            return (("authorization", "Bearer k"),)

    assert asyncio.run(call(GrpcLikeContext())) == "t"
    assert len(identified) == 1


def route_of(verb: str, template: str) -> Route:
    return next(r for r in routes() if (r.verb, r.template) == (verb, template))


def test_allow_names_each_method_once_with_head_beside_get() -> None:
    assert allow_header(["GET", "POST", "GET"]) == "GET, HEAD, POST"
    assert allow_header(["delete", "patch", "get"]) == "DELETE, GET, HEAD, PATCH"
    assert allow_header(["POST"]) == "POST"


def test_the_partial_updates_whose_body_is_the_resource_take_their_mask_from_it() -> None:
    inferring = {(r.verb, r.template) for r in routes() if infers_mask(r)}
    assert inferring == {
        ("patch", "/v1/memories/{memory.id}"),
        ("patch", "/v1/agents/{settings.agent_id}/settings"),
        ("patch", "/v1/workspaces/{settings.workspace_id}/settings"),
    }


def test_a_body_without_a_mask_names_the_fields_it_holds_that_the_mask_takes() -> None:
    update = route_of("patch", "/v1/memories/{memory.id}")
    body = {
        "id": "00000000-0000-4000-8000-000000000000",  # the path's
        "pinned": False,
        "importance": 0,
        "tags": [],
        "expire_time": "2030-01-01T00:00:00Z",  # a proto name as well as a JSON one
        "createdAt": "2020-01-01T00:00:00Z",  # output only
        "etag": 'W/"3"',  # output only
        "confidence": 0.5,  # no path of the mask: left as it is
        "metadata": {"a": 1},
    }
    assert body_mask(update, body) == ["pinned", "importance", "tags", "expire_time"]
    settings = route_of("patch", "/v1/agents/{settings.agent_id}/settings")
    sent = {"agentId": "coder", "memoryEnabled": False, "expirySlide": "0s", "updatedAt": "x"}
    assert body_mask(settings, sent) == ["memory_enabled", "expiry_slide"]
    assert body_mask(update, {}) == []


def nested_update_route() -> Route:
    """PATCH /v1/things/{thing.id} of a contract whose mask has no rule: a Thing holds
    an Inner message, which the mask may name field by field."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="things.proto",
        package="things",
        syntax="proto3",
        dependency=["google/protobuf/field_mask.proto"],
    )
    kinds = descriptor_pb2.FieldDescriptorProto

    def add(message: Any, name: str, kind: int, type_name: str = "") -> None:
        json_name = re.sub(r"_(\w)", lambda m: m[1].upper(), name)
        number = len(message.field) + 1
        field = message.field.add(
            name=name, json_name=json_name, number=number, type=kind, label=kinds.LABEL_OPTIONAL
        )
        if type_name:
            field.type_name = type_name

    inner = proto.message_type.add(name="Inner")
    add(inner, "depth", kinds.TYPE_INT32)
    thing = proto.message_type.add(name="Thing")
    add(thing, "id", kinds.TYPE_STRING)
    add(thing, "inner_part", kinds.TYPE_MESSAGE, ".things.Inner")
    add(thing, "title", kinds.TYPE_STRING)
    request = proto.message_type.add(name="UpdateThingRequest")
    add(request, "thing", kinds.TYPE_MESSAGE, ".things.Thing")
    add(request, "update_mask", kinds.TYPE_MESSAGE, ".google.protobuf.FieldMask")
    service = proto.service.add(name="Things")
    service.method.add(
        name="UpdateThing", input_type=".things.UpdateThingRequest", output_type=".things.Thing"
    )
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(field_mask_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(proto.SerializeToString())
    method = pool.FindServiceByName("things.Things").methods_by_name["UpdateThing"]
    return Route(
        method=method,
        verb="patch",
        template="/v1/things/{thing.id}",
        body="thing",
        variables=("thing.id",),
        pattern=re.compile(r"/v1/things/([^/]+?)\Z"),
    )


def test_without_a_rule_a_nested_message_is_named_field_by_field() -> None:
    route = nested_update_route()
    assert infers_mask(route)
    body = {"id": "t1", "title": "", "innerPart": {"depth": 0}}
    assert body_mask(route, body) == ["title", "inner_part.depth"]
    # An empty object is the message itself.
    assert body_mask(route, {"inner_part": {}}) == ["inner_part"]
