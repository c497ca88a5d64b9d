"""Proto <-> domain conversion for BlockService."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf import timestamp_pb2

from agent_memory.api.convert import check_timestamp, timestamp
from agent_memory.domain.blocks import (
    ANY_ETAG,
    Block,
    BlockKey,
    BlockLabel,
    BlockScope,
    BlockVersion,
    ExpectedUpdatedAt,
    ScopeFilter,
    block_key,
    expected_from_etag,
    list_filter,
)
from agent_memory.domain.errors import FieldViolation, check
from agentmemory.v1 import block_pb2, memory_pb2

_LABELS_OUT: dict[BlockLabel, block_pb2.BlockLabel] = {
    BlockLabel.CORE: block_pb2.BLOCK_LABEL_CORE,
    BlockLabel.ARCHIVAL: block_pb2.BLOCK_LABEL_ARCHIVAL,
}
_LABELS: dict[int, BlockLabel] = {v: k for k, v in _LABELS_OUT.items()}
_SCOPES_OUT: dict[BlockScope, memory_pb2.Scope] = {
    BlockScope.USER: memory_pb2.SCOPE_USER,
    BlockScope.AGENT: memory_pb2.SCOPE_AGENT,
    BlockScope.WORKSPACE: memory_pb2.SCOPE_WORKSPACE,
}
_SCOPES: dict[int, BlockScope] = {v: k for k, v in _SCOPES_OUT.items()}
_FILTERS: dict[int, ScopeFilter] = {
    block_pb2.BLOCK_SCOPE_FILTER_UNSPECIFIED: ScopeFilter.ALL,
    block_pb2.BLOCK_SCOPE_FILTER_USER: ScopeFilter.USER,
    block_pb2.BLOCK_SCOPE_FILTER_AGENT: ScopeFilter.AGENT,
    block_pb2.BLOCK_SCOPE_FILTER_ALL: ScopeFilter.ALL,
    block_pb2.BLOCK_SCOPE_FILTER_WORKSPACE: ScopeFilter.WORKSPACE,
}

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def key_from_proto(label: int, scope: int, agent_id: str, workspace_id: str = "") -> BlockKey:
    """The block a request names; a scope left unset with an agent id is the agent's,
    with a workspace id alone the workspace's.

    Raises: InvalidArgument — no usable label or scope, or a bad agent or workspace id."""
    if scope == memory_pb2.SCOPE_UNSPECIFIED and agent_id:
        scope = memory_pb2.SCOPE_AGENT
    elif scope == memory_pb2.SCOPE_UNSPECIFIED and workspace_id:
        scope = memory_pb2.SCOPE_WORKSPACE
    return block_key(_LABELS.get(label), _SCOPES.get(scope), agent_id, workspace_id)


def request_key(request: Any) -> BlockKey:
    """The block a GetBlock, WriteBlock, DeleteBlock or ListBlockVersions request names.

    Raises: InvalidArgument — see :func:`key_from_proto`."""
    return key_from_proto(request.label, request.scope, request.agent_id, request.workspace_id)


def filter_from_proto(scope_filter: int, agent_id: str, workspace_id: str = "") -> ScopeFilter:
    """The scopes a ListBlocks request lists; left unset with a workspace id alone, the
    workspace's.

    Raises: InvalidArgument — an unknown filter or a bad agent or workspace id."""
    if scope_filter == block_pb2.BLOCK_SCOPE_FILTER_UNSPECIFIED and workspace_id and not agent_id:
        scope_filter = block_pb2.BLOCK_SCOPE_FILTER_WORKSPACE
    return list_filter(_FILTERS.get(scope_filter), agent_id, workspace_id)


def precondition(request: Any) -> ExpectedUpdatedAt | str | None:
    """What a WriteBlock or DeleteBlock request expects of the block: the write time
    its ``expected_updated_at`` or its ``etag`` names, :data:`ANY_ETAG` (the block as
    it is now), or ``None`` when it names none.

    Raises:
        InvalidArgument: a time out of range, an etag not of a block, or the two
            naming different writes.
    """
    by_time = expected_from_proto(
        request.expected_updated_at, request.HasField("expected_updated_at")
    )
    if not request.HasField("etag"):
        return by_time
    if request.etag.strip() == ANY_ETAG:
        by_etag: ExpectedUpdatedAt | str = ANY_ETAG
    else:
        by_etag = expected_from_etag(request.etag)
    if by_time is not None and by_time != by_etag:
        check(
            [
                FieldViolation(
                    "etag", "names another write than expected_updated_at; send one", "CONTRADICTS"
                )
            ]
        )
    return by_etag


def expected_from_proto(value: timestamp_pb2.Timestamp, present: bool) -> ExpectedUpdatedAt | None:
    """The precondition a write or delete carries; ``None`` when none was sent.

    Stored times are whole microseconds, so a time with leftover nanoseconds is
    kept as one that can never match rather than rounded onto one that might.

    Raises:
        InvalidArgument: the Timestamp is outside its valid range.
    """
    if not present:
        return None
    check_timestamp(value, "expected_updated_at")
    micros, leftover_nanos = divmod(value.nanos, 1000)
    if leftover_nanos:
        return ExpectedUpdatedAt(None)
    return ExpectedUpdatedAt(_EPOCH + timedelta(seconds=value.seconds, microseconds=micros))


def _key_fields(key: BlockKey) -> dict[str, Any]:
    return {
        "label": _LABELS_OUT[key.label],
        "scope": _SCOPES_OUT[key.scope],
        "agent_id": key.agent_id,
        "workspace_id": key.workspace_id,
    }


def content_to_proto(key: BlockKey, content: str) -> block_pb2.Block:
    """The block's key and content alone: what an export's block record carries."""
    return block_pb2.Block(**_key_fields(key), content=content)


def block_to_proto(block: Block) -> block_pb2.Block:
    return block_pb2.Block(
        **_key_fields(block.key),
        content=block.content,
        char_count=block.char_count,
        entry_count=block.entry_count,
        updated_at=timestamp(block.updated_at),
        version=block.version,
        created_at=timestamp(block.created_at),
        indexed_line_count=block.indexed_line_count,
        etag=block.etag,
    )


def version_to_proto(version: BlockVersion) -> block_pb2.BlockVersion:
    return block_pb2.BlockVersion(
        version=version.version,
        content=version.content,
        writer_user_id=version.writer_user_id,
        written_at=timestamp(version.written_at),
        char_count=version.char_count,
    )
