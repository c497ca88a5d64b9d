"""Typed Python client for the agent-memory service.

    from agent_memory_client import MemoryClient

    with MemoryClient("127.0.0.1:50051", api_key=KEY) as memory:
        memory.upsert_memory("timezone", "Europe/Lisbon", agent_id="planner")
        for match in memory.recall("where does the user live?", agent_id="planner"):
            print(f"{match.score:.3f} {match.content}")

Every RPC of the service has a method named after it in snake_case, on both
:class:`MemoryClient` and :class:`AsyncMemoryClient`. Answers are the records of
:mod:`agent_memory_client.types`, frozen dataclasses of plain Python values generated
from the service's contract (``agentmemory.v1``, shipped here), each with its message
at ``.proto``; errors are the typed exceptions of :mod:`agent_memory_client.errors`.
"""

from agent_memory_client._channel import TLS, Connection, connection_from_env
from agent_memory_client._version import __version__
from agent_memory_client.aio import AsyncMemoryClient, AsyncRecallStream
from agent_memory_client.errors import (
    Aborted,
    AgentMemoryError,
    AlreadyExists,
    BlockConflict,
    DeadlineExceeded,
    EtagMismatch,
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ReadOnlyMemory,
    ResourceExhausted,
    RoleForbids,
    SecretInValue,
    ServerError,
    Unauthenticated,
    Unavailable,
)
from agent_memory_client.sync import MemoryClient, RecallStream

__all__ = [
    "TLS",
    "Aborted",
    "AgentMemoryError",
    "AlreadyExists",
    "AsyncMemoryClient",
    "AsyncRecallStream",
    "BlockConflict",
    "Connection",
    "DeadlineExceeded",
    "EtagMismatch",
    "FailedPrecondition",
    "FieldViolation",
    "InvalidArgument",
    "MemoryClient",
    "NotFound",
    "PermissionDenied",
    "ReadOnlyMemory",
    "RecallStream",
    "ResourceExhausted",
    "RoleForbids",
    "SecretInValue",
    "ServerError",
    "Unauthenticated",
    "Unavailable",
    "__version__",
    "connection_from_env",
]
