"""What each client method sends and what it returns, shared by the sync and the
async client: a method builds an :class:`Op`, and the client runs it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeVar

from google.protobuf import duration_pb2, timestamp_pb2
from google.protobuf.message import Message

from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    decision_pb2,
    decision_service_pb2,
    memory_pb2,
    memory_service_pb2,
    recall_pb2,
    recall_service_pb2,
)

T = TypeVar("T")
E = TypeVar("E")

BlockLabelName = Literal["core", "archival"]
SourceName = Literal["manual", "auto", "director"]
ArchivalModeName = Literal["tool_only", "auto", "off"]
ConversationViewName = Literal["basic", "full"]
Timestamp = timestamp_pb2.Timestamp | datetime

_LABELS = {"core": block_pb2.BLOCK_LABEL_CORE, "archival": block_pb2.BLOCK_LABEL_ARCHIVAL}
_SOURCES = {
    "manual": memory_pb2.MEMORY_SOURCE_MANUAL,
    "auto": memory_pb2.MEMORY_SOURCE_AUTO,
    "director": memory_pb2.MEMORY_SOURCE_DIRECTOR,
}
_CONVERSATION_VIEWS = {
    "basic": memory_pb2.CONVERSATION_VIEW_BASIC,
    "full": memory_pb2.CONVERSATION_VIEW_FULL,
}
_ARCHIVAL_MODES = {
    "tool_only": recall_pb2.ARCHIVAL_MODE_TOOL_ONLY,
    "auto": recall_pb2.ARCHIVAL_MODE_AUTO,
    "off": recall_pb2.ARCHIVAL_MODE_OFF,
}


@dataclass(frozen=True, slots=True)
class Op(Generic[T]):
    """One unary call: the service and method, the request, and how to turn the
    response into what the client method returns."""

    service: str
    method: str
    request: Message
    unwrap: Callable[[Any], T]


def _choice(table: Mapping[str, E], name: str, what: str) -> E:
    try:
        return table[name]
    except KeyError:
        msg = f"{what} must be one of {', '.join(map(repr, table))}, not {name!r}"
        raise ValueError(msg) from None


def owner(agent_id: str | None, workspace_id: str | None) -> memory_pb2.MemoryOwner:
    """The memory owner: exactly one of an agent or a workspace."""
    if (agent_id is None) == (workspace_id is None):
        msg = "give exactly one of agent_id= or workspace_id="
        raise ValueError(msg)
    if agent_id is not None:
        return memory_pb2.MemoryOwner(agent_id=agent_id)
    return memory_pb2.MemoryOwner(workspace_id=workspace_id)


def timestamp(value: Timestamp | None) -> timestamp_pb2.Timestamp | None:
    if value is None or isinstance(value, timestamp_pb2.Timestamp):
        return value
    if value.tzinfo is None:
        msg = "a datetime sent to the service must carry its time zone"
        raise ValueError(msg)
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


def set_expiration(request: Any, expire_time: Timestamp | None, ttl: timedelta | None) -> None:
    """Fill the request's ``expiration`` oneof from at most one of the two."""
    if expire_time is not None and ttl is not None:
        msg = "give expire_time= or ttl=, not both"
        raise ValueError(msg)
    if expire_time is not None:
        request.expire_time.CopyFrom(timestamp(expire_time))
    elif ttl is not None:
        duration = duration_pb2.Duration()
        duration.FromTimedelta(ttl)
        request.ttl.CopyFrom(duration)


def _block_key(label: BlockLabelName, agent_id: str | None) -> dict[str, Any]:
    scope = memory_pb2.SCOPE_AGENT if agent_id is not None else memory_pb2.SCOPE_USER
    return {
        "label": _choice(_LABELS, label, "label"),
        "scope": scope,
        "agent_id": agent_id or "",
    }


def _memory(response: Any) -> memory_pb2.Memory:
    memory: memory_pb2.Memory = response.memory
    return memory


def _block(response: Any) -> block_pb2.Block:
    block: block_pb2.Block = response.block
    return block


def upsert_memory(
    key: str,
    value: str,
    *,
    agent_id: str | None,
    workspace_id: str | None,
    pinned: bool | None,
    importance: int | None,
    source: SourceName,
    expire_time: Timestamp | None = None,
    ttl: timedelta | None = None,
) -> Op[memory_pb2.Memory]:
    request = memory_service_pb2.UpsertMemoryRequest(
        owner=owner(agent_id, workspace_id),
        key=key,
        value=value,
        source=_choice(_SOURCES, source, "source"),
    )
    if pinned is not None:
        request.pinned = pinned
    if importance is not None:
        request.importance = importance
    set_expiration(request, expire_time, ttl)
    return Op("MemoryService", "UpsertMemory", request, _memory)


def get_memory(memory_id: str) -> Op[memory_pb2.Memory]:
    request = memory_service_pb2.GetMemoryRequest(id=memory_id)
    return Op("MemoryService", "GetMemory", request, _memory)


def list_memories_page(
    owner_: memory_pb2.MemoryOwner,
    page_size: int,
    page_token: str,
    show_expired: bool = False,
    show_superseded: bool = False,
) -> Op[memory_service_pb2.ListMemoriesResponse]:
    request = memory_service_pb2.ListMemoriesRequest(
        owner=owner_,
        page_size=page_size,
        page_token=page_token,
        show_expired=show_expired,
        show_superseded=show_superseded,
    )
    return Op("MemoryService", "ListMemories", request, lambda r: r)


def pin_memory(memory_id: str, pinned: bool) -> Op[memory_pb2.Memory]:
    request = memory_service_pb2.PinMemoryRequest(id=memory_id, pinned=pinned)
    return Op("MemoryService", "PinMemory", request, _memory)


def delete_memory(memory_id: str, etag: str | None) -> Op[None]:
    request = memory_service_pb2.DeleteMemoryRequest(id=memory_id)
    if etag is not None:
        request.etag = etag
    return Op("MemoryService", "DeleteMemory", request, lambda _: None)


def memorize(
    content: str,
    *,
    agent_id: str | None,
    workspace_id: str | None,
    tags: Iterable[str],
    memory_key: str,
    confidence: float | None,
    expire_time: Timestamp | None = None,
    ttl: timedelta | None = None,
    conversation: memory_pb2.Conversation | None = None,
    groundings: Iterable[memory_pb2.Grounding] = (),
    supersedes: Iterable[str] = (),
) -> Op[memory_pb2.Memory]:
    request = memory_service_pb2.MemorizeRequest(
        owner=owner(agent_id, workspace_id),
        content=content,
        tags=list(tags),
        memory_key=memory_key,
        groundings=list(groundings),
        conversation=conversation,
        supersedes=list(supersedes),
    )
    if confidence is not None:
        request.confidence = confidence
    set_expiration(request, expire_time, ttl)
    return Op("MemoryService", "Memorize", request, _memory)


def get_conversation(conversation_id: str, provider: str) -> Op[memory_pb2.Conversation]:
    request = memory_service_pb2.GetConversationRequest(
        provider=provider, conversation_id=conversation_id
    )
    return Op("MemoryService", "GetConversation", request, lambda r: r.conversation)


def list_conversations_page(
    view: ConversationViewName, page_size: int, page_token: str
) -> Op[memory_service_pb2.ListConversationsResponse]:
    request = memory_service_pb2.ListConversationsRequest(
        view=_choice(_CONVERSATION_VIEWS, view, "view"),
        page_size=page_size,
        page_token=page_token,
    )
    return Op("MemoryService", "ListConversations", request, lambda r: r)


def get_extraction_job(job_id: str) -> Op[memory_pb2.ExtractionJob]:
    request = memory_service_pb2.GetExtractionJobRequest(job_id=job_id)
    return Op("MemoryService", "GetExtractionJob", request, lambda r: r.job)


def get_block(label: BlockLabelName, agent_id: str | None) -> Op[block_pb2.Block]:
    request = block_service_pb2.GetBlockRequest(**_block_key(label, agent_id))
    return Op("BlockService", "GetBlock", request, _block)


def write_block(
    label: BlockLabelName,
    content: str,
    agent_id: str | None,
    expected_updated_at: Timestamp | None,
) -> Op[block_pb2.Block]:
    request = block_service_pb2.WriteBlockRequest(
        **_block_key(label, agent_id),
        content=content,
        expected_updated_at=timestamp(expected_updated_at),
    )
    return Op("BlockService", "WriteBlock", request, _block)


def list_blocks(agent_id: str | None) -> Op[list[block_pb2.Block]]:
    scope = block_pb2.BLOCK_SCOPE_FILTER_USER
    if agent_id is not None:
        scope = block_pb2.BLOCK_SCOPE_FILTER_ALL
    request = block_service_pb2.ListBlocksRequest(scope_filter=scope, agent_id=agent_id or "")
    return Op("BlockService", "ListBlocks", request, lambda r: list(r.blocks))


def recall(
    query: str,
    agent_id: str | None,
    limit: int | None,
    include_memories: bool,
    workspace_id: str | None = None,
    min_score: float | None = None,
) -> recall_service_pb2.RecallRequest:
    request = recall_service_pb2.RecallRequest(
        query=query,
        agent_id=agent_id or "",
        limit=limit or 0,
        include_memories=include_memories,
    )
    if workspace_id is not None:
        request.workspace_id = workspace_id
    if min_score is not None:
        request.min_score = min_score
    return request


def get_recall_status() -> Op[recall_pb2.RecallStatus]:
    request = recall_service_pb2.GetRecallStatusRequest()
    return Op("RecallService", "GetRecallStatus", request, lambda r: r.status)


def render_prompt(
    agent_id: str,
    *,
    workspace_id: str | None,
    user_message: str,
    persona: str,
    archival_mode: ArchivalModeName | None,
    archival_limit: int | None,
    include_recent_decisions: bool,
) -> Op[recall_service_pb2.RenderPromptResponse]:
    policy = recall_pb2.MemoryPolicy(
        archival_limit=archival_limit or 0,
        include_recent_decisions=include_recent_decisions,
    )
    if archival_mode is not None:
        policy.archival_mode = _choice(_ARCHIVAL_MODES, archival_mode, "archival_mode")
    request = recall_service_pb2.RenderPromptRequest(
        agent_id=agent_id, user_message=user_message, persona=persona, memory_policy=policy
    )
    if workspace_id is not None:
        request.workspace_id = workspace_id
    return Op("RecallService", "RenderPrompt", request, lambda r: r)


def list_recent_decisions(agent_id: str, limit: int | None) -> Op[list[decision_pb2.Decision]]:
    request = decision_service_pb2.ListRecentDecisionsRequest(agent_id=agent_id, limit=limit or 0)
    return Op("DecisionService", "ListRecentDecisions", request, lambda r: list(r.decisions))


def render_reexamination_prompt(
    decision_id: str,
) -> Op[decision_service_pb2.RenderReexaminationPromptResponse]:
    request = decision_service_pb2.RenderReexaminationPromptRequest(decision_id=decision_id)
    return Op("DecisionService", "RenderReexaminationPrompt", request, lambda r: r)
