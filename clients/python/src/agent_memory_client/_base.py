"""What the sync and the async client share: settings, stubs, requests for any RPC
by name, and opening a stream. Each transport (``_transport.py``) opens its own kind
of channel and runs the calls."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Self

from google.protobuf.message import Message

from agent_memory_client import _ops, types
from agent_memory_client._channel import (
    SERVICES,
    TLS,
    Connection,
    connection_from_env,
    method_named,
)


class ClientBase:
    """Settings and stubs; see :class:`~agent_memory_client.MemoryClient`."""

    def __init__(
        self,
        target: str | None = None,
        *,
        api_key: str | None = None,
        tenant_id: str | None = None,
        user_id: str | None = None,
        tls: bool | TLS = False,
        timeout: float | None = None,
        attempts: int | None = None,
        options: Iterable[tuple[str, Any]] = (),
        connection: Connection | None = None,
    ) -> None:
        self.connection = connection or connection_from_env(
            {},
            target=target,
            api_key=api_key,
            tenant_id=tenant_id,
            user_id=user_id,
            tls=tls,
            timeout=timeout,
            attempts=attempts,
            options=tuple(options),
        )
        self._channel = self._open(self.connection)
        self._stubs = {name: stub(self._channel) for name, (_, stub) in SERVICES.items()}

    def _open(self, connection: Connection) -> Any:
        raise NotImplementedError

    @classmethod
    def from_env(cls, **overrides: Any) -> Self:
        """A client of ``MEMORY_SERVER`` with ``MEMORY_API_KEY`` (or the local mode's
        ``MEMORY_TENANT_ID`` / ``MEMORY_USER_ID``) and ``MEMORY_TLS_CA``, as the
        ``agent-memory`` commands read them; keyword arguments win."""
        return cls(connection=connection_from_env(None, **overrides))

    @staticmethod
    def _any_rpc(rpc: str, request: Message) -> _ops.Op[Any]:
        service, method = method_named(rpc)
        if method.server_streaming:
            msg = f"{rpc} streams its answer; use recall()"
            raise ValueError(msg)
        if request.DESCRIPTOR is not method.input_type:
            msg = f"{rpc} takes {method.input_type.name}, not {request.DESCRIPTOR.name}"
            raise TypeError(msg)
        return _ops.Op(service, rpc, request, types.record_of)

    def _start_stream(self, stream: _ops.Stream[Any], timeout: float | None) -> Any:
        """Open a streaming call; the stub of either kind of channel answers it."""
        method = getattr(self._stubs[stream.service], stream.method)
        return method(
            stream.request,
            timeout=self.connection.deadline(timeout),
            metadata=self.connection.metadata,
        )
