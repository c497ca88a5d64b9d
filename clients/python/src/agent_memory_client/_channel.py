"""How both clients reach the service: the address, TLS, credentials, the default
deadline, and retries decided by the contract.

Retries are gRPC's own (a service config ``retryPolicy``), given to exactly the
methods whose ``idempotency_level`` in the protos is ``NO_SIDE_EFFECTS`` or
``IDEMPOTENT``, and only on ``UNAVAILABLE``: a new RPC marked safe to repeat is
retried without a change here, and nothing else ever runs twice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor

from agent_memory_client._version import __version__
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

DEFAULT_SERVER = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 30.0
DEFAULT_ATTEMPTS = 4
MAX_ATTEMPTS = 5  # gRPC caps a retry policy's attempts at 5

# Service name (as the client methods name it) -> its descriptor and stub class.
SERVICES: dict[str, tuple[ServiceDescriptor, Any]] = {
    "MemoryService": (
        memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"],
        memory_service_pb2_grpc.MemoryServiceStub,
    ),
    "BlockService": (
        block_service_pb2.DESCRIPTOR.services_by_name["BlockService"],
        block_service_pb2_grpc.BlockServiceStub,
    ),
    "RecallService": (
        recall_service_pb2.DESCRIPTOR.services_by_name["RecallService"],
        recall_service_pb2_grpc.RecallServiceStub,
    ),
    "DecisionService": (
        decision_service_pb2.DESCRIPTOR.services_by_name["DecisionService"],
        decision_service_pb2_grpc.DecisionServiceStub,
    ),
}

_SAFE_TO_REPEAT = {
    descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS,
    descriptor_pb2.MethodOptions.IDEMPOTENT,
}


def safe_to_repeat(method: MethodDescriptor) -> bool:
    """Whether the contract marks ``method`` as safe to send again."""
    return method.GetOptions().idempotency_level in _SAFE_TO_REPEAT


def method_named(name: str) -> tuple[str, MethodDescriptor]:
    """The service and descriptor of the RPC called ``name`` (``"ListLearnings"``)."""
    for service, (descriptor, _) in SERVICES.items():
        method = descriptor.methods_by_name.get(name)
        if method is not None:
            return service, method
    msg = f"the service has no RPC named {name!r}"
    raise ValueError(msg)


def service_config(attempts: int) -> str:
    """The channel's service config: retry on UNAVAILABLE, with exponential backoff,
    for every method safe to repeat; no retry at all below two attempts."""
    names = [
        {"service": descriptor.full_name, "method": method.name}
        for descriptor, _ in SERVICES.values()
        for method in descriptor.methods
        if safe_to_repeat(method)
    ]
    configs: list[dict[str, Any]] = []
    if attempts >= 2:
        configs.append(
            {
                "name": names,
                "retryPolicy": {
                    "maxAttempts": min(attempts, MAX_ATTEMPTS),
                    "initialBackoff": "0.1s",
                    "maxBackoff": "2s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        )
    return json.dumps({"methodConfig": configs})


def _read(value: bytes | str | os.PathLike[str] | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    return Path(value).read_bytes()


@dataclass(frozen=True)
class TLS:
    """TLS settings. Without ``root_certificates`` the system's roots are trusted.

    Each certificate or key is PEM bytes or the path of a PEM file. Give
    ``certificate_chain`` and ``private_key`` when the server asks for client
    certificates, and ``server_name`` when the certificate names another host than
    the one dialled.
    """

    root_certificates: bytes | str | os.PathLike[str] | None = None
    certificate_chain: bytes | str | os.PathLike[str] | None = None
    private_key: bytes | str | os.PathLike[str] | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.root_certificates),
            private_key=_read(self.private_key),
            certificate_chain=_read(self.certificate_chain),
        )


@dataclass(frozen=True)
class Connection:
    """Everything a client needs to open its channel and sign its calls."""

    target: str = DEFAULT_SERVER
    api_key: str | None = None
    tenant_id: str | None = None
    user_id: str | None = None
    tls: TLS | None = None
    timeout: float = DEFAULT_TIMEOUT
    attempts: int = DEFAULT_ATTEMPTS
    options: Sequence[tuple[str, Any]] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.api_key is not None and (self.tenant_id or self.user_id):
            msg = "give api_key= or the local mode's tenant_id=/user_id=, not both"
            raise ValueError(msg)
        if not self.timeout > 0:
            msg = f"timeout must be a number of seconds above 0, not {self.timeout!r}"
            raise ValueError(msg)
        if self.attempts < 1:
            msg = f"attempts must be at least 1, not {self.attempts!r}"
            raise ValueError(msg)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The credentials every call carries."""
        if self.api_key is not None:
            return (("authorization", f"Bearer {self.api_key}"),)
        local = (("x-tenant-id", self.tenant_id), ("x-user-id", self.user_id))
        return tuple((k, v) for k, v in local if v)

    def channel_arguments(self) -> list[tuple[str, Any]]:
        arguments: list[tuple[str, Any]] = [
            ("grpc.enable_retries", 1),
            ("grpc.service_config", service_config(self.attempts)),
            ("grpc.primary_user_agent", f"agent-memory-client/{__version__}"),
        ]
        if self.tls is not None and self.tls.server_name:
            arguments.append(("grpc.ssl_target_name_override", self.tls.server_name))
        return arguments + list(self.options)


def connection_from_env(environ: Mapping[str, str] | None = None, **overrides: Any) -> Connection:
    """A :class:`Connection` from ``MEMORY_SERVER``, ``MEMORY_API_KEY`` and
    ``MEMORY_TLS_CA`` (a PEM file: speak TLS and trust it), then ``overrides``."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {"target": env.get("MEMORY_SERVER") or DEFAULT_SERVER}
    if env.get("MEMORY_API_KEY"):
        values["api_key"] = env["MEMORY_API_KEY"]
    if env.get("MEMORY_TLS_CA"):
        values["tls"] = TLS(root_certificates=env["MEMORY_TLS_CA"])
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Connection(**values)
