"""The handlers a server registers for a servicer, made from the contract.

Every method of the service gets a handler, named, kinded and coded as the service's
descriptor says (a method the servicer lacks answers UNIMPLEMENTED). A handler's
behaviour is the servicer's method, which takes the caller and the request:
``async def GetMemory(self, caller: Principal, request)``. Only
:class:`~agent_memory.api.interceptors.ServiceInterceptor` calls it, with the caller it
identified; gRPC and HTTP call the handler the interceptor wraps around it, so no
method runs without a caller, and none reads it from anywhere but its arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

from agent_memory.domain.identity import Principal

# A servicer's method: the caller and the request (or a stream of requests), to the
# response (awaited) or a stream of responses.
Behaviour = Callable[[Principal, Any], Any]


class Registry(Protocol):
    """Where handlers are registered: a ``grpc.aio.Server``, or HTTP's handler table."""

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None: ...

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None: ...


def add_servicer(servicer: object, service: ServiceDescriptor, server: Registry) -> None:
    """Register a handler of ``servicer`` for every method of ``service``."""
    handlers = {m.name: _handler(m, getattr(servicer, m.name, None)) for m in service.methods}
    generic = grpc.method_handlers_generic_handler(service.full_name, handlers)
    server.add_generic_rpc_handlers((generic,))
    server.add_registered_method_handlers(service.full_name, handlers)


_KINDS = {
    # (streams its requests, streams its responses)
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


def _handler(method: MethodDescriptor, behaviour: Behaviour | None) -> grpc.RpcMethodHandler:
    make = _KINDS[method.client_streaming, method.server_streaming]
    return make(
        behaviour or _unimplemented,
        request_deserializer=message_factory.GetMessageClass(method.input_type).FromString,
        response_serializer=message_factory.GetMessageClass(method.output_type).SerializeToString,
    )


def _unimplemented(caller: Principal, request: Any) -> Any:
    """A method of the contract that its servicer does not have yet: the interceptor
    answers UNIMPLEMENTED (tests/e2e/test_server.py covers it)."""
    raise NotImplementedError
