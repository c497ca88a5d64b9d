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
    private_key: bytes | str | os.PathLike[str] | None = field(default=None, repr=False)
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
    api_key: str | None = field(default=None, repr=False)
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
        for name in ("api_key", "tenant_id", "user_id"):
            value = getattr(self, name)
            # Metadata values travel as HTTP/2 header values: visible ASCII only.
            if value is not None and not (value.isascii() and value.isprintable()):
                msg = f"{name} must be printable ASCII"
                raise ValueError(msg)
            if value is not None and any(c.isspace() for c in value):
                msg = f"{name} must not contain spaces"
                raise ValueError(msg)
        self.deadline(self.timeout)
        if self.attempts < 1:
            msg = f"attempts must be at least 1, not {self.attempts!r}"
            raise ValueError(msg)

    def deadline(self, timeout: float | None) -> float:
        """The deadline, in seconds, of a call given ``timeout`` (None: the default)."""
        seconds = self.timeout if timeout is None else timeout
        if not (isinstance(seconds, int | float) and seconds > 0):
            msg = f"timeout must be a number of seconds above 0, not {seconds!r}"
            raise ValueError(msg)
        return float(seconds)

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
            ("grpc.primary_user_agent", f"agent-memory-grpc-client/{__version__}"),
        ]
        if self.tls is not None and self.tls.server_name:
            arguments.append(("grpc.ssl_target_name_override", self.tls.server_name))
        return arguments + list(self.options)


def connection_from_env(environ: Mapping[str, str] | None = None, **overrides: Any) -> Connection:
    """A :class:`Connection` from ``MEMORY_SERVER``, ``MEMORY_API_KEY`` (or, for a
    server in the local mode, ``MEMORY_TENANT_ID`` and ``MEMORY_USER_ID``) and
    ``MEMORY_TLS_CA`` (a PEM file: speak TLS and trust it), then ``overrides``;
    ``tls=True`` means TLS with the system's roots."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {"target": env.get("MEMORY_SERVER") or DEFAULT_SERVER}
    for name in ("api_key", "tenant_id", "user_id"):
        if env.get(f"MEMORY_{name.upper()}"):
            values[name] = env[f"MEMORY_{name.upper()}"]
    if env.get("MEMORY_TLS_CA"):
        values["tls"] = TLS(root_certificates=env["MEMORY_TLS_CA"])
    values.update({k: v for k, v in overrides.items() if v is not None})
    if values.get("tls") is True:
        values["tls"] = TLS()
    elif values.get("tls") is False:
        values.pop("tls")
    return Connection(**values)
