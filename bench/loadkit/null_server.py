"""The framework's ceiling: ``grpc.aio`` servers registering the service's generated
servicers, every method answering at once (Recall: 10 empty messages), in as many
processes on one port (SO_REUSEPORT) as the service runs workers, with the service's
server options and event loop and, as the service does, start-up's objects frozen out
of the garbage collector's sight."""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import queue
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from multiprocessing.queues import Queue
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from agent_memory.app.server import run_serving, server_options
from agent_memory.config import Settings
from agentmemory.v1 import (
    block_service_pb2,
    block_service_pb2_grpc,
    decision_service_pb2,
    decision_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    recall_service_pb2,
    recall_service_pb2_grpc,
)

STREAM_ITEMS = 10
_SERVICES: tuple[tuple[Any, str, type, Callable[[Any, grpc.aio.Server], None]], ...] = (
    (
        memory_service_pb2,
        "MemoryService",
        memory_service_pb2_grpc.MemoryServiceServicer,
        memory_service_pb2_grpc.add_MemoryServiceServicer_to_server,
    ),
    (
        block_service_pb2,
        "BlockService",
        block_service_pb2_grpc.BlockServiceServicer,
        block_service_pb2_grpc.add_BlockServiceServicer_to_server,
    ),
    (
        recall_service_pb2,
        "RecallService",
        recall_service_pb2_grpc.RecallServiceServicer,
        recall_service_pb2_grpc.add_RecallServiceServicer_to_server,
    ),
    (
        decision_service_pb2,
        "DecisionService",
        decision_service_pb2_grpc.DecisionServiceServicer,
        decision_service_pb2_grpc.add_DecisionServiceServicer_to_server,
    ),
)


def _unary(response: type[Message]) -> Callable[..., Awaitable[Message]]:
    async def answer(self: object, request: Message, context: object) -> Message:
        return response()

    return answer


def _stream(response: type[Message]) -> Callable[..., AsyncIterator[Message]]:
    async def answer(self: object, request: Message, context: object) -> AsyncIterator[Message]:
        for _ in range(STREAM_ITEMS):
            yield response()

    return answer


def null_servicer(service: ServiceDescriptor, base: type) -> object:
    """A servicer whose every method answers at once with an empty response."""
    methods: dict[str, object] = {}
    for method in service.methods:
        response = message_factory.GetMessageClass(method.output_type)
        methods[method.name] = _stream(response) if method.server_streaming else _unary(response)
    servicer: object = type(f"Null{service.name}", (base,), methods)()
    return servicer


async def _serve(port: int, ready: Callable[[int], None]) -> None:
    server = grpc.aio.server(options=[*server_options(Settings()), ("grpc.so_reuseport", 1)])
    for module, name, base, add in _SERVICES:
        add(null_servicer(module.DESCRIPTOR.services_by_name[name], base), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    gc.collect()
    gc.freeze()
    ready(bound)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(0)


def _process(port: int, ready: Queue[int]) -> None:
    run_serving(_serve(port, ready.put))


def serve_null(processes: int) -> None:
    """Serve until SIGTERM from ``processes`` processes sharing one port; prints
    ``null server serving on 127.0.0.1:PORT`` once all accept calls."""
    with socket.socket() as reserved:
        reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        reserved.bind(("127.0.0.1", 0))
        port = reserved.getsockname()[1]
        context = multiprocessing.get_context("spawn")
        ready: Queue[int] = context.Queue()
        children = [context.Process(target=_process, args=(port, ready)) for _ in range(processes)]
        for child in children:
            child.start()
        for _ in children:
            try:
                ready.get(timeout=60)
            except queue.Empty:
                raise SystemExit("a null server process did not start") from None
    print(f"null server serving on 127.0.0.1:{port}", flush=True)
    stopping = [False]

    def stop(signum: int, frame: object) -> None:
        stopping[0] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping[0] and all(c.is_alive() for c in children):
        time.sleep(0.2)
    for child in children:
        child.terminate()
    for child in children:
        child.join(10)
