"""The HTTP side on real uvicorn over loopback, with small handlers standing in for the
service: what it does with streams, health and the panel's files, whatever the
service answers."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import httpx
import pytest

from agent_memory.api.interceptors import ServiceInterceptor
from agent_memory.config import Settings
from agent_memory.domain.identity import Principal, Role
from agent_memory.http.app import HttpServer, http_app
from agent_memory.http.routes import routes
from agent_memory.http.transcoder import HTTP_STATUS, HttpCallContext, Transcoder
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
