"""Every kind of handler passes the service interceptor, over real gRPC.

The contract has unary and server-streaming RPCs only; an RPC that streams its
requests (client- or bidirectional streaming) added later must not run for a caller
without credentials either. A server with the real interceptor and two such handlers
under the agentmemory prefix shows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import grpc
import grpc.aio
import pytest
from google.protobuf.wrappers_pb2 import StringValue

from agent_memory.api.interceptors import ServiceInterceptor
from agent_memory.domain.errors import Unauthenticated
from agent_memory.domain.identity import Principal, Role

SERVICE = "agentmemory.v1.FutureService"
UPLOAD = f"/{SERVICE}/Upload"  # client streaming
CHAT = f"/{SERVICE}/Chat"  # bidirectional streaming
GOOD = (("authorization", "Bearer good"),)


async def identify(metadata: Sequence[tuple[str, str | bytes]]) -> Principal:
    if ("authorization", "Bearer good") not in metadata:
        raise Unauthenticated("no valid credentials", reason="MISSING_CREDENTIALS")
    return Principal(tenant_id="t", user_id="u", role=Role.ORCHESTRATOR)


async def upload(caller: Principal, requests: AsyncIterator[StringValue]) -> StringValue:
    texts = [r.value async for r in requests]
    return StringValue(value=f"{caller.user_id}:{'+'.join(texts)}")


async def chat(
    caller: Principal, requests: AsyncIterator[StringValue]
) -> AsyncIterator[StringValue]:
    async for r in requests:
        yield StringValue(value=f"{caller.user_id}:{r.value}")


def handlers() -> grpc.GenericRpcHandler:
    codecs = {
        "request_deserializer": StringValue.FromString,
        "response_serializer": StringValue.SerializeToString,
    }
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Upload": grpc.stream_unary_rpc_method_handler(upload, **codecs),
            "Chat": grpc.stream_stream_rpc_method_handler(chat, **codecs),
        },
    )


async def scenario() -> dict[str, object]:
    server = grpc.aio.server(interceptors=[ServiceInterceptor(identify)])
    server.add_generic_rpc_handlers((handlers(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    seen: dict[str, object] = {}
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            codecs = {
                "request_serializer": StringValue.SerializeToString,
                "response_deserializer": StringValue.FromString,
            }
            up = channel.stream_unary(UPLOAD, **codecs)
            talk = channel.stream_stream(CHAT, **codecs)
            words = [StringValue(value="a"), StringValue(value="b")]
            for name, call in (
                ("upload", lambda md, sent: up(iter(sent), metadata=md, timeout=10)),
                ("chat", lambda md, sent: _drain(talk(iter(sent), metadata=md, timeout=10))),
            ):
                # Refused before any request is read, so none is sent: a client still
                # writing when the call ends would race the refusal.
                try:
                    await call((), [])
                except grpc.aio.AioRpcError as exc:
                    seen[f"{name} without credentials"] = exc.code()
                seen[name] = await call(GOOD, words)
    finally:
        await server.stop(None)
    return seen


async def _drain(stream: grpc.aio.StreamStreamCall) -> list[str]:
    return [r.value async for r in stream]


@pytest.mark.parametrize("name", ["upload", "chat"])
def test_a_request_streaming_rpc_needs_credentials_like_any_other(name: str) -> None:
    seen = asyncio.run(scenario())
    assert seen[f"{name} without credentials"] is grpc.StatusCode.UNAUTHENTICATED
    answer = seen[name]
    # With credentials it runs, and the servicer sees the caller.
    if name == "upload":
        assert isinstance(answer, StringValue)
        assert answer.value == "u:a+b"
    else:
        assert answer == ["u:a", "u:b"]
