"""The one declaration of every client method: what it takes, sends and returns.

Each public function here returning an :class:`Op`, :class:`Pages` or :class:`Stream`
is an operation. ``scripts/generate_client.py`` writes a method of the same name,
signature (plus ``timeout=``) and docstring onto both clients (``_methods.py``): the
blocking one runs the operation, the asyncio one awaits it. An operation marked
:func:`with_result` also gets a ``<name>_result`` method answering the whole response.
What a method returns is a record of :mod:`agent_memory_client.types` (generated from
the contract by ``scripts/generate_types.py``), never a protobuf message.
A change here is a change of both clients: regenerate with ``make generate``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, TypeVar

from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2
from google.protobuf.message import Message

from agent_memory_client import types
from agent_memory_client._records import Record
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
R = TypeVar("R", bound=Record[Any])
M = TypeVar("M", bound=Message)

BlockLabelName = Literal["core", "archival"]
SourceName = Literal["manual", "auto", "director"]
RunKindName = Literal["scheduled", "chat"]
ArchivalModeName = Literal["tool_only", "auto", "off"]
ConversationViewName = Literal["basic", "full"]
ReExaminableName = Literal["never", "always", "until_resolved"]
ResolutionStatusName = Literal["open", "resolved", "expired"]
Timestamp = timestamp_pb2.Timestamp | datetime

_LABELS = {"core": block_pb2.BLOCK_LABEL_CORE, "archival": block_pb2.BLOCK_LABEL_ARCHIVAL}
_SOURCES = {
    "manual": memory_pb2.MEMORY_SOURCE_MANUAL,
    "auto": memory_pb2.MEMORY_SOURCE_AUTO,
    "director": memory_pb2.MEMORY_SOURCE_DIRECTOR,
}
_RUN_KINDS = {
    "scheduled": memory_pb2.RUN_KIND_SCHEDULED,
    "chat": memory_pb2.RUN_KIND_CHAT,
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
_RE_EXAMINABLE = {
    "never": decision_pb2.RE_EXAMINABLE_NEVER,
    "always": decision_pb2.RE_EXAMINABLE_ALWAYS,
    "until_resolved": decision_pb2.RE_EXAMINABLE_UNTIL_RESOLVED,
}
_RESOLUTION_STATUSES = {
    "open": decision_pb2.RESOLUTION_STATUS_OPEN,
    "resolved": decision_pb2.RESOLUTION_STATUS_RESOLVED,
    "expired": decision_pb2.RESOLUTION_STATUS_EXPIRED,
}


@dataclass(frozen=True, slots=True)
class Op(Generic[T]):
    """One unary call: the service and method, the request, and how to turn the
    response into what the client method returns."""

    service: str
    method: str
    request: Message
    unwrap: Callable[[Any], T]

    def answering(self, response: type[R]) -> Op[R]:
        """The same call, returning its whole response as a ``response`` record."""

        def whole(answer: Any) -> R:
            if not isinstance(answer, response.MESSAGE):
                msg = (
                    f"{self.method} answered {type(answer).__name__}, "
                    f"not {response.MESSAGE.__name__}"
                )
                raise TypeError(msg)
            return response.from_proto(answer)

        return Op(self.service, self.method, self.request, whole)


F = TypeVar("F", bound=Callable[..., Op[Any]])


@dataclass(frozen=True, slots=True)
class Pages(Generic[T]):
    """A listing (AIP-158) the client fetches page after page, yielding ``items`` of
    each response until one has no ``next_page_token``."""

    service: str
    method: str
    request: Message
    items: Callable[[Any], Iterable[T]]

    def page(self, token: str) -> Op[tuple[list[T], str]]:
        """The call for the page at ``token``: its items and the next page's token."""
        request: Any = type(self.request)()
        request.CopyFrom(self.request)
        request.page_token = token
        items = self.items
        return Op(
            self.service,
            self.method,
            request,
            lambda response: (list(items(response)), response.next_page_token),
        )


@dataclass(frozen=True, slots=True)
class Stream(Generic[T]):
    """A call whose answer streams, each message a ``T``."""

    service: str
    method: str
    request: Message


def with_result(response: type[Record[Any]]) -> Callable[[F], F]:
    """Mark an operation whose ``response`` says more than what it returns (whether
    the call created, what it superseded): the clients also get a ``<name>_result``
    method, the same call answering the whole response."""

    def mark(operation: F) -> F:
        return operation

    return mark


def _choice(table: Mapping[str, E], name: str, what: str) -> E:
    try:
        return table[name]
    except KeyError:
        msg = f"{what} must be one of {', '.join(map(repr, table))}, not {name!r}"
        raise ValueError(msg) from None


def _strings(values: Iterable[str], what: str) -> list[str]:
    if isinstance(values, str):  # would be taken letter by letter
        msg = f"{what} takes a list of strings, not a string"
        raise TypeError(msg)
    return list(values)


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


def _field_mask(
    given: Mapping[str, object], named: Iterable[str] | None
) -> field_mask_pb2.FieldMask:
    """The fields an update changes: those ``given`` (not None), or those ``named``,
    which must include every one given."""
    chosen = [name for name, value in given.items() if value is not None]
    if named is not None:
        paths = _strings(named, "update_mask")
        unnamed = [name for name in chosen if name not in paths]
        if unnamed:
            msg = f"update_mask leaves out {', '.join(unnamed)}, which you gave"
            raise ValueError(msg)
        chosen = paths
    if not chosen:
        msg = "give at least one field to change"
        raise ValueError(msg)
    return field_mask_pb2.FieldMask(paths=chosen)


def _block_key(
    label: BlockLabelName, agent_id: str | None, workspace_id: str | None = None
) -> dict[str, Any]:
    """The block named: the workspace's with ``workspace_id``, the agent's with
    ``agent_id``, else the user's (the server refuses both ids at once)."""
    if workspace_id is not None:
        scope = memory_pb2.SCOPE_WORKSPACE
    elif agent_id is not None:
        scope = memory_pb2.SCOPE_AGENT
    else:
        scope = memory_pb2.SCOPE_USER
    return {
        "label": _choice(_LABELS, label, "label"),
        "scope": scope,
        "agent_id": agent_id or "",
        "workspace_id": workspace_id or "",
    }


def _message(value: M | Record[M]) -> M:
    """A message given as itself or as its record."""
    return value.proto if isinstance(value, Record) else value


def _memory(response: Any) -> types.Memory:
    return types.Memory.from_proto(response.memory)


def _memories(messages: Iterable[memory_pb2.Memory]) -> list[types.Memory]:
    return [types.Memory.from_proto(m) for m in messages]


def _block(response: Any) -> types.Block:
    return types.Block.from_proto(response.block)


def _decision(response: Any) -> types.Decision:
    return types.Decision.from_proto(response.decision)


def _session(response: Any) -> types.ActiveSession:
    return types.ActiveSession.from_proto(response.session)


def _settings(response: Any) -> types.AgentSettings:
    return types.AgentSettings.from_proto(response.settings)


def _removed(response: Any) -> types.ForgetCounts:
    return types.ForgetCounts.from_proto(response.removed)


def _nothing(_: Any) -> None:
    return None


def set_period(message: Any, start: Timestamp | None, end: Timestamp | None) -> None:
    """Set the message's ``valid_start_time`` and ``valid_end_time`` that are given."""
    for name, when in (("valid_start_time", start), ("valid_end_time", end)):
        stamp = timestamp(when)
        if stamp is not None:
            getattr(message, name).CopyFrom(stamp)


# -- memories -------------------------------------------------------------------------


@with_result(types.UpsertMemoryResponse)
def upsert_memory(
    key: str,
    value: str,
    *,
    agent_id: str | None = None,
    workspace_id: str | None = None,
    pinned: bool | None = None,
    importance: int | None = None,
    source: SourceName = "manual",
    expire_time: Timestamp | None = None,
    ttl: timedelta | None = None,
    create_only: bool = False,
    valid_start_time: Timestamp | None = None,
    valid_end_time: Timestamp | None = None,
    note: str | None = None,
) -> Op[types.Memory]:
    """Create or update the memory with this key, of an agent or a workspace;
    ``expire_time`` or ``ttl`` makes it expire (None keeps the stored expiry);
    ``valid_start_time`` and ``valid_end_time`` say when the fact holds in the world
    (each None keeps the stored one); ``note`` is a line for the people who read the
    memory, never shown to a model (None keeps the stored one). With ``create_only``
    an existing key is left alone and the call raises AlreadyExists.
    ``upsert_memory_result`` also says whether the call created the memory."""
    request = memory_service_pb2.UpsertMemoryRequest(
        owner=owner(agent_id, workspace_id),
        key=key,
        value=value,
        source=_choice(_SOURCES, source, "source"),
        create_only=create_only,
    )
    if pinned is not None:
        request.pinned = pinned
    if importance is not None:
        request.importance = importance
    if note is not None:
        request.note = note
    set_expiration(request, expire_time, ttl)
    set_period(request, valid_start_time, valid_end_time)
    return Op("MemoryService", "UpsertMemory", request, _memory)


def list_agents(*, page_size: int = 100) -> Pages[types.OwnerSummary]:
    """Every agent of the tenant that holds a memory or has settings, by id, with
    its count of current memories and its last activity, fetching page after page."""
    request = memory_service_pb2.ListAgentsRequest(page_size=page_size)
    return Pages(
        "MemoryService",
        "ListAgents",
        request,
        lambda r: map(types.OwnerSummary.from_proto, r.agents),
    )


def list_workspaces(*, page_size: int = 100) -> Pages[types.OwnerSummary]:
    """Every workspace of the tenant that holds a memory, by id, with its count of
    current memories and its last activity, fetching page after page."""
    request = memory_service_pb2.ListWorkspacesRequest(page_size=page_size)
    return Pages(
        "MemoryService",
        "ListWorkspaces",
        request,
        lambda r: map(types.OwnerSummary.from_proto, r.workspaces),
    )


def get_caller() -> Op[types.Caller]:
    """Who this client's key stands for: tenant, user, role and key id."""
    request = memory_service_pb2.GetCallerRequest()
    return Op("MemoryService", "GetCaller", request, lambda r: types.Caller.from_proto(r.caller))


def get_memory(
    memory_id: str = "",
    *,
    key: str | None = None,
    agent_id: str | None = None,
    workspace_id: str | None = None,
    as_of_time: Timestamp | None = None,
) -> Op[types.Memory]:
    """A memory by id, or by its ``key`` and owner (``agent_id`` or
    ``workspace_id``) instead; NotFound when absent. With ``as_of_time``, the
    memory as it was then."""
    request = memory_service_pb2.GetMemoryRequest(id=memory_id, as_of_time=timestamp(as_of_time))
    if key is not None:
        request.owner.CopyFrom(owner(agent_id, workspace_id))
        request.key = key
    return Op("MemoryService", "GetMemory", request, _memory)


def update_memory(
    memory_id: str,
    *,
    key: str | None = None,
    value: str | None = None,
    pinned: bool | None = None,
    importance: int | None = None,
    expire_time: Timestamp | None = None,
    tags: Iterable[str] | None = None,
    update_mask: Iterable[str] | None = None,
    etag: str | None = None,
    valid_start_time: Timestamp | None = None,
    valid_end_time: Timestamp | None = None,
    note: str | None = None,
    held_for_review: bool | None = None,
) -> Op[types.Memory]:
    """Change some fields of a memory: those given (not None), or those
    ``update_mask`` names, where a field named but not given is cleared
    (``expire_time``: it stops expiring; ``tags``: none left; ``valid_start_time``
    or ``valid_end_time``: the fact's period is open at that end; ``note``: none).
    ``held_for_review=False`` approves a memory held for review (it reaches prompts and
    recall again); True holds one. Only manual memories change key, value or importance
    (else ReadOnlyMemory). With ``etag``, only if the memory has not changed since
    (else EtagMismatch)."""
    memory = memory_pb2.Memory(id=memory_id)
    if key is not None:
        memory.key = key
    if value is not None:
        memory.value = value
    if pinned is not None:
        memory.pinned = pinned
    if importance is not None:
        memory.importance = importance
    expires = timestamp(expire_time)
    if expires is not None:
        memory.expire_time.CopyFrom(expires)
    if tags is not None:
        memory.tags.extend(_strings(tags, "tags"))
    if note is not None:
        memory.note = note
    if held_for_review is not None:
        memory.held_for_review = held_for_review
    set_period(memory, valid_start_time, valid_end_time)
    given = {
        "key": key,
        "value": value,
        "pinned": pinned,
        "importance": importance,
        "expire_time": expire_time,
        "tags": tags,
        "valid_start_time": valid_start_time,
        "valid_end_time": valid_end_time,
        "note": note,
        "held_for_review": held_for_review,
    }
    request = memory_service_pb2.UpdateMemoryRequest(
        memory=memory, update_mask=_field_mask(given, update_mask)
    )
    if etag is not None:
        request.etag = etag
    return Op("MemoryService", "UpdateMemory", request, _memory)


def pin_memory(memory_id: str, pinned: bool = True) -> Op[types.Memory]:
    """Pin a memory of any source, or with ``pinned=False`` unpin it."""
    request = memory_service_pb2.PinMemoryRequest(id=memory_id, pinned=pinned)
    return Op("MemoryService", "PinMemory", request, _memory)


def delete_memory(memory_id: str, *, etag: str | None = None) -> Op[None]:
    """Delete a memory; with ``etag``, only if it has not changed since."""
    request = memory_service_pb2.DeleteMemoryRequest(id=memory_id)
    if etag is not None:
        request.etag = etag
    return Op("MemoryService", "DeleteMemory", request, _nothing)


def _list_memories_request(
    agent_id: str | None,
    workspace_id: str | None,
    page_size: int,
    show_expired: bool,
    show_superseded: bool,
    filter: str,
    order_by: str,
    page_token: str = "",
    as_of_time: Timestamp | None = None,
) -> memory_service_pb2.ListMemoriesRequest:
    return memory_service_pb2.ListMemoriesRequest(
        owner=owner(agent_id, workspace_id),
        page_size=page_size,
        page_token=page_token,
        show_expired=show_expired,
        show_superseded=show_superseded,
        filter=filter,
        order_by=order_by,
        as_of_time=timestamp(as_of_time),
    )


def list_memories(
    *,
    agent_id: str | None = None,
    workspace_id: str | None = None,
    page_size: int = 100,
    show_expired: bool = False,
    show_superseded: bool = False,
    filter: str = "",
    order_by: str = "",
    as_of_time: Timestamp | None = None,
) -> Pages[types.Memory]:
    """Every memory of an agent or a workspace, fetching page after page; with
    ``show_expired`` also those that expired and are not deleted yet, with
    ``show_superseded`` also those another memory superseded. ``filter`` (AIP-160,
    e.g. ``'text:"deploy" (source = manual OR pinned = true)'``; AND, OR, NOT and
    parentheses, OR binding tighter than AND) keeps those that match; ``order_by``
    (fields of ``key``, ``importance``, ``created_at`` and ``updated_at`` separated
    by commas, each optionally followed by ``desc``) orders them. With
    ``as_of_time``, the memories as they were then."""
    request = _list_memories_request(
        agent_id,
        workspace_id,
        page_size,
        show_expired,
        show_superseded,
        filter,
        order_by,
        as_of_time=as_of_time,
    )
    return Pages("MemoryService", "ListMemories", request, lambda r: _memories(r.memories))


def list_memories_page(
    *,
    agent_id: str | None = None,
    workspace_id: str | None = None,
    page_size: int = 100,
    page_token: str = "",
    show_expired: bool = False,
    show_superseded: bool = False,
    filter: str = "",
    order_by: str = "",
    as_of_time: Timestamp | None = None,
) -> Op[types.ListMemoriesResponse]:
    """One page of :meth:`list_memories`, as the server answers it: the memories,
    ``next_page_token`` and ``total_size`` (how many match across all pages)."""
    request = _list_memories_request(
        agent_id,
        workspace_id,
        page_size,
        show_expired,
        show_superseded,
        filter,
        order_by,
        page_token,
        as_of_time,
    )
    return Op("MemoryService", "ListMemories", request, types.ListMemoriesResponse.from_proto)


@with_result(types.MemorizeResponse)
def memorize(
    content: str,
    *,
    agent_id: str | None = None,
    workspace_id: str | None = None,
    tags: Iterable[str] = (),
    memory_key: str = "",
    confidence: float | None = None,
    expire_time: Timestamp | None = None,
    ttl: timedelta | None = None,
    conversation: memory_pb2.Conversation | types.Conversation | None = None,
    groundings: Iterable[memory_pb2.Grounding | types.Grounding] = (),
    supersedes: Iterable[str] = (),
    valid_start_time: Timestamp | None = None,
    valid_end_time: Timestamp | None = None,
) -> Op[types.Memory]:
    """Store a fact the agent decided to keep (source MEMORIZE); ``supersedes``
    names memories of the same owner that it updates or contradicts (ending their
    periods), ``valid_start_time`` and ``valid_end_time`` when the fact holds. The
    ``conversation`` and its ``groundings`` may be messages or records.
    ``memorize_result`` also says whether the call created the memory, and gives the
    memories it superseded as stored."""
    request = memory_service_pb2.MemorizeRequest(
        owner=owner(agent_id, workspace_id),
        content=content,
        tags=list(tags),
        memory_key=memory_key,
        groundings=[_message(g) for g in groundings],
        conversation=_message(conversation) if conversation is not None else None,
        supersedes=list(supersedes),
    )
    if confidence is not None:
        request.confidence = confidence
    set_expiration(request, expire_time, ttl)
    set_period(request, valid_start_time, valid_end_time)
    return Op("MemoryService", "Memorize", request, _memory)


def record_learning(content: str, *, chain_agent_ids: Iterable[str]) -> Op[types.Memory]:
    """Store a director learning on the first agent of the chain (source DIRECTOR)."""
    request = memory_service_pb2.RecordLearningRequest(
        chain_agent_ids=_strings(chain_agent_ids, "chain_agent_ids"), content=content
    )
    return Op("MemoryService", "RecordLearning", request, _memory)


def list_learnings(
    *, chain_agent_ids: Iterable[str], limit: int | None = None
) -> Op[list[types.Memory]]:
    """The newest learnings of every agent of the chain, newest first (at most
    ``limit``; None: the server's default, 20)."""
    request = memory_service_pb2.ListLearningsRequest(
        chain_agent_ids=_strings(chain_agent_ids, "chain_agent_ids"), limit=limit or 0
    )
    return Op("MemoryService", "ListLearnings", request, lambda r: _memories(r.memories))


def list_memory_events(memory_id: str, *, page_size: int = 100) -> Pages[types.MemoryEvent]:
    """A memory's audit history, oldest first, fetching page after page; it outlives
    the memory's deletion."""
    request = memory_service_pb2.ListMemoryEventsRequest(memory_id=memory_id, page_size=page_size)
    return Pages(
        "MemoryService",
        "ListMemoryEvents",
        request,
        lambda r: map(types.MemoryEvent.from_proto, r.events),
    )


def get_agent_settings(agent_id: str) -> Op[types.AgentSettings]:
    """An agent's memory settings; the defaults (all off) when never written."""
    request = memory_service_pb2.GetAgentSettingsRequest(agent_id=agent_id)
    return Op("MemoryService", "GetAgentSettings", request, _settings)


def update_agent_settings(
    agent_id: str,
    *,
    memory_enabled: bool | None = None,
    active_memory_enabled: bool | None = None,
    review_decisions: bool | None = None,
    expiry_slide: timedelta | None = None,
) -> Op[types.AgentSettings]:
    """Turn an agent's switches on or off and set how far a use moves the expiry of
    its memories (``expiry_slide``, ``timedelta(0)`` turns it off): those given (not
    None) change, the others stay as they are."""
    given = {
        "memory_enabled": memory_enabled,
        "active_memory_enabled": active_memory_enabled,
        "review_decisions": review_decisions,
        "expiry_slide": expiry_slide,
    }
    settings = memory_pb2.AgentSettings(agent_id=agent_id)
    for name, value in given.items():
        if isinstance(value, timedelta):
            getattr(settings, name).FromTimedelta(value)
        elif value is not None:
            setattr(settings, name, value)
    request = memory_service_pb2.UpdateAgentSettingsRequest(
        settings=settings, update_mask=_field_mask(given, None)
    )
    return Op("MemoryService", "UpdateAgentSettings", request, _settings)


def _workspace_settings(response: Any) -> types.WorkspaceSettings:
    return types.WorkspaceSettings.from_proto(response.settings)


def get_workspace_settings(workspace_id: str) -> Op[types.WorkspaceSettings]:
    """A workspace's memory settings; the defaults (all off) when never written."""
    request = memory_service_pb2.GetWorkspaceSettingsRequest(workspace_id=workspace_id)
    return Op("MemoryService", "GetWorkspaceSettings", request, _workspace_settings)


def update_workspace_settings(
    workspace_id: str, *, expiry_slide: timedelta | None = None
) -> Op[types.WorkspaceSettings]:
    """Set how far a use moves the expiry of the workspace's memories
    (``timedelta(0)`` turns it off); None leaves it as it is."""
    given = {"expiry_slide": expiry_slide}
    settings = memory_pb2.WorkspaceSettings(workspace_id=workspace_id)
    if expiry_slide is not None:
        settings.expiry_slide.FromTimedelta(expiry_slide)
    request = memory_service_pb2.UpdateWorkspaceSettingsRequest(
        settings=settings, update_mask=_field_mask(given, None)
    )
    return Op("MemoryService", "UpdateWorkspaceSettings", request, _workspace_settings)


def extract_memories(
    agent_id: str,
    *,
    transcript: str,
    session_id: str | None = None,
    chain_id: str | None = None,
    workspace_id: str | None = None,
    queued: bool = False,
) -> Op[types.ExtractMemoriesResponse]:
    """Run one automatic extraction pass over a finished run's transcript, of a
    single run (``session_id``) or a chain of runs (``chain_id``): ``.outcome``,
    ``.written``, ``.dropped``, ``.usage``. With ``queued`` the pass runs later:
    read it with ``get_extraction_job(.job_id)``."""
    if (session_id is None) == (chain_id is None):
        msg = "give exactly one of session_id= or chain_id="
        raise ValueError(msg)
    request = memory_service_pb2.ExtractMemoriesRequest(
        agent_id=agent_id, transcript=transcript, queued=queued
    )
    if session_id is not None:
        request.session_id = session_id
    else:
        request.chain_id = chain_id or ""
    if workspace_id is not None:
        request.workspace_id = workspace_id
    return Op("MemoryService", "ExtractMemories", request, types.ExtractMemoriesResponse.from_proto)


def get_usage(
    *,
    synthetic_session_id_prefix: str = "",
    start_time: Timestamp | None = None,
    end_time: Timestamp | None = None,
) -> Op[types.GetUsageResponse]:
    """Recorded model usage (``.records``, oldest first) and its totals, of the
    synthetic session ids with this prefix, from ``start_time`` until before
    ``end_time``."""
    request = memory_service_pb2.GetUsageRequest(
        synthetic_session_id_prefix=synthetic_session_id_prefix,
        start_time=timestamp(start_time),
        end_time=timestamp(end_time),
    )
    return Op("MemoryService", "GetUsage", request, types.GetUsageResponse.from_proto)


def get_active_session(agent_id: str) -> Op[types.ActiveSession]:
    """The model session the agent's next run resumes, with its runs since the last
    reset and the reset warning."""
    request = memory_service_pb2.GetActiveSessionRequest(agent_id=agent_id)
    return Op("MemoryService", "GetActiveSession", request, _session)


def record_run_session(
    agent_id: str,
    *,
    run_id: str,
    session_id_before: str = "",
    session_id_after: str = "",
    kind: RunKindName = "scheduled",
    render_time: Timestamp | None = None,
) -> Op[types.ActiveSession]:
    """Record a finished run with the session id it resumed and the one it ended
    with (empty when it failed); the same run again changes nothing. ``kind`` says
    what started it: only scheduled runs count toward the reset warning.
    ``render_time`` (its prompt's render's ``render_time``) is kept with the run, so
    the prompt can be rendered again as it was. Answers the agent's active session
    after it."""
    request = memory_service_pb2.RecordRunSessionRequest(
        agent_id=agent_id,
        run_id=run_id,
        session_id_before=session_id_before,
        session_id_after=session_id_after,
        kind=_choice(_RUN_KINDS, kind, "kind"),
        render_time=timestamp(render_time),
    )
    return Op("MemoryService", "RecordRunSession", request, _session)


def list_agent_runs(agent_id: str, *, page_size: int = 100) -> Pages[types.AgentRun]:
    """Every recorded run of the agent, newest first: what started it, and the
    session ids before and after it."""
    request = memory_service_pb2.ListAgentRunsRequest(agent_id=agent_id, page_size=page_size)
    return Pages(
        "MemoryService", "ListAgentRuns", request, lambda r: map(types.AgentRun.from_proto, r.runs)
    )


def reset_active_session(agent_id: str) -> Op[types.ActiveSession]:
    """Start the agent's next run clean: its session id is cleared and the runs
    since the last reset count from now."""
    request = memory_service_pb2.ResetActiveSessionRequest(agent_id=agent_id)
    return Op("MemoryService", "ResetActiveSession", request, _session)


def forget_agent(agent_id: str, *, validate_only: bool = False) -> Op[types.ForgetCounts]:
    """Forget an agent in the caller's tenant: its memories, blocks, settings,
    sessions, decisions and extraction passes. Answers what went, by kind; with
    ``validate_only``, what would go, and nothing changes."""
    request = memory_service_pb2.ForgetAgentRequest(agent_id=agent_id, validate_only=validate_only)
    return Op("MemoryService", "ForgetAgent", request, _removed)


def forget_workspace(workspace_id: str, *, validate_only: bool = False) -> Op[types.ForgetCounts]:
    """Forget a workspace in the caller's tenant, as ``forget_agent`` an agent."""
    request = memory_service_pb2.ForgetWorkspaceRequest(
        workspace_id=workspace_id, validate_only=validate_only
    )
    return Op("MemoryService", "ForgetWorkspace", request, _removed)


def forget_user(*, validate_only: bool = False) -> Op[types.ForgetCounts]:
    """Forget the caller's own user: its blocks of every scope, with their versions
    and archival lines."""
    request = memory_service_pb2.ForgetUserRequest(validate_only=validate_only)
    return Op("MemoryService", "ForgetUser", request, _removed)


def get_conversation(conversation_id: str, *, provider: str = "") -> Op[types.Conversation]:
    """The conversation snapshot Memorize kept, messages and raw events included;
    an empty ``provider`` is the one Memorize files a snapshot without one under."""
    request = memory_service_pb2.GetConversationRequest(
        provider=provider, conversation_id=conversation_id
    )
    return Op(
        "MemoryService",
        "GetConversation",
        request,
        lambda r: types.Conversation.from_proto(r.conversation),
    )


def list_conversations(
    *, view: ConversationViewName = "basic", page_size: int = 100
) -> Pages[types.Conversation]:
    """Every conversation snapshot of the tenant, most recently updated first,
    fetching page after page; ``view="full"`` brings messages and raw events too,
    the default only their counts."""
    request = memory_service_pb2.ListConversationsRequest(
        view=_choice(_CONVERSATION_VIEWS, view, "view"), page_size=page_size
    )
    return Pages(
        "MemoryService",
        "ListConversations",
        request,
        lambda r: map(types.Conversation.from_proto, r.conversations),
    )


def get_extraction_job(job_id: str) -> Op[types.ExtractionJob]:
    """A queued extraction pass by the ``job_id`` ExtractMemories answered: its
    state, and once done what it wrote, dropped and cost."""
    request = memory_service_pb2.GetExtractionJobRequest(job_id=job_id)
    return Op(
        "MemoryService",
        "GetExtractionJob",
        request,
        lambda r: types.ExtractionJob.from_proto(r.job),
    )


# -- blocks ---------------------------------------------------------------------------


def get_block(
    label: BlockLabelName,
    *,
    agent_id: str | None = None,
    user_id: str | None = None,
    workspace_id: str | None = None,
    as_of_time: Timestamp | None = None,
) -> Op[types.Block]:
    """The user's block, with ``agent_id`` the agent's, or with ``workspace_id`` the
    workspace's (shared by the tenant's users); NotFound when absent. An orchestrator
    may read another user's with ``user_id``. With ``as_of_time``, the block as it
    was then."""
    request = block_service_pb2.GetBlockRequest(
        **_block_key(label, agent_id, workspace_id),
        user_id=user_id or "",
        as_of_time=timestamp(as_of_time),
    )
    return Op("BlockService", "GetBlock", request, _block)


def delete_block(
    label: BlockLabelName,
    *,
    agent_id: str | None = None,
    expected_updated_at: Timestamp | None = None,
    etag: str | None = None,
    workspace_id: str | None = None,
) -> Op[None]:
    """Delete a block (with ``workspace_id``, the workspace's) with its versions and
    archival lines; NotFound when absent. With ``expected_updated_at`` or ``etag`` (the
    block's, as read), only if nobody wrote it since (else BlockConflict)."""
    request = block_service_pb2.DeleteBlockRequest(
        **_block_key(label, agent_id, workspace_id),
        expected_updated_at=timestamp(expected_updated_at),
    )
    if etag is not None:
        request.etag = etag
    return Op("BlockService", "DeleteBlock", request, _nothing)


def list_blocks(
    *,
    agent_id: str | None = None,
    user_id: str | None = None,
    workspace_id: str | None = None,
) -> Op[list[types.Block]]:
    """The user's blocks, and with ``agent_id`` the agent's too; with ``workspace_id``
    the workspace's (alone, or after the user's and the agent's with ``agent_id``). An
    orchestrator may read another user's with ``user_id``."""
    scope = block_pb2.BLOCK_SCOPE_FILTER_USER
    if agent_id is not None:
        scope = block_pb2.BLOCK_SCOPE_FILTER_ALL
    elif workspace_id is not None:
        scope = block_pb2.BLOCK_SCOPE_FILTER_WORKSPACE
    request = block_service_pb2.ListBlocksRequest(
        scope_filter=scope,
        agent_id=agent_id or "",
        user_id=user_id or "",
        workspace_id=workspace_id or "",
    )
    return Op(
        "BlockService", "ListBlocks", request, lambda r: list(map(types.Block.from_proto, r.blocks))
    )


def write_block(
    label: BlockLabelName,
    content: str,
    *,
    agent_id: str | None = None,
    expected_updated_at: Timestamp | None = None,
    etag: str | None = None,
    workspace_id: str | None = None,
) -> Op[types.Block]:
    """Replace a block's content (with ``workspace_id``, the workspace's, which the
    tenant's users share), compare-and-set: ``expected_updated_at`` is the
    ``updated_at`` last read (or ``etag`` the ``etag`` last read; ``"*"``: the block
    as it is now), or neither to create a block that must not exist yet. Raises
    BlockConflict (with the block's current ``updated_at`` and etag) when stale."""
    request = block_service_pb2.WriteBlockRequest(
        **_block_key(label, agent_id, workspace_id),
        content=content,
        expected_updated_at=timestamp(expected_updated_at),
    )
    if etag is not None:
        request.etag = etag
    return Op("BlockService", "WriteBlock", request, _block)


def list_block_versions(
    label: BlockLabelName,
    *,
    agent_id: str | None = None,
    page_size: int = 100,
    user_id: str | None = None,
    workspace_id: str | None = None,
) -> Pages[types.BlockVersion]:
    """The kept versions of the user's block (with ``agent_id``, the agent's; with
    ``workspace_id``, the workspace's), newest first, fetching page after page;
    NotFound when the block is absent. An orchestrator may read another user's with
    ``user_id``."""
    request = block_service_pb2.ListBlockVersionsRequest(
        **_block_key(label, agent_id, workspace_id), page_size=page_size, user_id=user_id or ""
    )
    return Pages(
        "BlockService",
        "ListBlockVersions",
        request,
        lambda r: map(types.BlockVersion.from_proto, r.versions),
    )


# -- recall and prompts ---------------------------------------------------------------


def recall(
    query: str,
    *,
    agent_id: str | None = None,
    workspace_id: str | None = None,
    limit: int | None = None,
    min_score: float | None = None,
    include_memories: bool = False,
    as_of_time: Timestamp | None = None,
) -> Stream[types.RecallResponse]:
    """Archival lines (and with ``include_memories`` memories, of the agent and
    of ``workspace_id``) ranked for ``query``, streamed best first; matches
    scoring under ``min_score`` are left out. With ``as_of_time``, what there was
    then, ranked by words."""
    request = recall_service_pb2.RecallRequest(
        query=query,
        agent_id=agent_id or "",
        limit=limit or 0,
        include_memories=include_memories,
        as_of_time=timestamp(as_of_time),
    )
    if workspace_id is not None:
        request.workspace_id = workspace_id
    if min_score is not None:
        request.min_score = min_score
    return Stream("RecallService", "Recall", request)


def get_recall_status() -> Op[types.RecallStatus]:
    """How the server ranks recall: by words, or by words and meaning (and the
    model). A block's ``indexed_line_count`` says how many of its lines have a
    vector yet."""
    request = recall_service_pb2.GetRecallStatusRequest()
    return Op(
        "RecallService",
        "GetRecallStatus",
        request,
        lambda r: types.RecallStatus.from_proto(r.status),
    )


def render_prompt(
    agent_id: str,
    *,
    workspace_id: str | None = None,
    user_message: str = "",
    persona: str = "",
    archival_mode: ArchivalModeName | None = None,
    archival_limit: int | None = None,
    archival_min_score: float | None = None,
    include_user_core: bool | None = None,
    include_agent_core: bool | None = None,
    include_recent_decisions: bool | None = None,
    recent_decisions_limit: int | None = None,
    include_workspace_core: bool | None = None,
    count_tokens: bool = False,
    as_of_time: Timestamp | None = None,
) -> Op[types.RenderPromptResponse]:
    """The memory part of the agent's system prompt for this run. The recent
    decisions are included as ``include_recent_decisions`` says, or, when it is
    None, as the agent's ``review_decisions`` setting says; with ``workspace_id``,
    the workspace's core block unless ``include_workspace_core`` is False; the
    user's and the agent's core blocks unless ``include_user_core`` or
    ``include_agent_core`` is False. ``archival_min_score`` is the floor of an
    archival reminder in AUTO mode; ``count_tokens`` counts each section's tokens.
    With ``as_of_time`` (a past render's ``render_time``), the prompt as it was
    then: the same bytes that render gave."""
    policy = recall_pb2.MemoryPolicy(
        archival_limit=archival_limit or 0, recent_decisions_limit=recent_decisions_limit or 0
    )
    for name, given in (
        ("archival_min_score", archival_min_score),
        ("include_user_core", include_user_core),
        ("include_agent_core", include_agent_core),
        ("include_recent_decisions", include_recent_decisions),
        ("include_workspace_core", include_workspace_core),
    ):
        if given is not None:
            setattr(policy, name, given)
    if archival_mode is not None:
        policy.archival_mode = _choice(_ARCHIVAL_MODES, archival_mode, "archival_mode")
    request = recall_service_pb2.RenderPromptRequest(
        agent_id=agent_id,
        user_message=user_message,
        persona=persona,
        memory_policy=policy,
        count_tokens=count_tokens,
        as_of_time=timestamp(as_of_time),
    )
    if workspace_id is not None:
        request.workspace_id = workspace_id
    return Op("RecallService", "RenderPrompt", request, types.RenderPromptResponse.from_proto)


# -- decisions ------------------------------------------------------------------------


@with_result(types.RegisterCardTypeResponse)
def register_card_type(
    name: str,
    *,
    re_examinable: ReExaminableName = "never",
    actions: Iterable[str] = (),
    decision_actions: Iterable[str] = (),
) -> Op[types.CardType]:
    """Register a kind of decision card, or replace the one of this name: whether
    its decisions may be re-examined, the words a re-examination may suggest
    (``actions``) and those a decision may take (``decision_actions``); empty allows
    any uppercase word."""
    card_type = decision_pb2.CardType(
        name=name,
        re_examinable=_choice(_RE_EXAMINABLE, re_examinable, "re_examinable"),
        actions=_strings(actions, "actions"),
        decision_actions=_strings(decision_actions, "decision_actions"),
    )
    request = decision_service_pb2.RegisterCardTypeRequest(card_type=card_type)
    return Op(
        "DecisionService",
        "RegisterCardType",
        request,
        lambda r: types.CardType.from_proto(r.card_type),
    )


@with_result(types.RecordDecisionResponse)
def record_decision(
    agent_id: str,
    *,
    run_id: str,
    card_type: str,
    action: str,
    summary: str,
    result: Mapping[str, Any] | None = None,
) -> Op[types.Decision]:
    """Record one run's decision, OPEN, on a registered card type: its ``action`` in
    one uppercase word, a one-line ``summary`` and the run's structured ``result``
    (JSON-like values). The same run again with the same decision changes nothing."""
    decision = decision_pb2.Decision(
        run_id=run_id, agent_id=agent_id, card_type=card_type, action=action, summary=summary
    )
    if result is not None:
        decision.result.update(result)
    request = decision_service_pb2.RecordDecisionRequest(decision=decision)
    return Op("DecisionService", "RecordDecision", request, _decision)


def get_decision(decision_id: str) -> Op[types.Decision]:
    """One decision with its full result; NotFound when absent."""
    request = decision_service_pb2.GetDecisionRequest(decision_id=decision_id)
    return Op("DecisionService", "GetDecision", request, _decision)


@with_result(types.ListRecentDecisionsResponse)
def list_recent_decisions(
    agent_id: str,
    *,
    limit: int | None = None,
    include_result: bool = False,
    card_type: str = "",
) -> Op[list[types.Decision]]:
    """The agent's newest decisions first (of ``card_type`` only, when given), each
    with its ``compact`` line, and with ``include_result`` its full result.
    ``list_recent_decisions_result`` also gives the server time the lines' ages are
    measured from (``.as_of``)."""
    request = decision_service_pb2.ListRecentDecisionsRequest(
        agent_id=agent_id, limit=limit or 0, include_result=include_result, card_type=card_type
    )
    return Op(
        "DecisionService",
        "ListRecentDecisions",
        request,
        lambda r: list(map(types.Decision.from_proto, r.decisions)),
    )


def resolve_decision(
    decision_id: str, resolution_status: ResolutionStatusName = "resolved"
) -> Op[types.Decision]:
    """Set where a decision stands (``"resolved"``, ``"expired"`` or back to
    ``"open"``); its result never changes."""
    request = decision_service_pb2.ResolveDecisionRequest(
        decision_id=decision_id,
        resolution_status=_choice(_RESOLUTION_STATUSES, resolution_status, "resolution_status"),
    )
    return Op("DecisionService", "ResolveDecision", request, _decision)


@with_result(types.RecordReexaminationResponse)
def record_reexamination(
    decision_id: str,
    *,
    run_id: str,
    conviction_score: int,
    notes: str,
    suggested_action: str,
) -> Op[types.Reexamination]:
    """Record a later run's fresh read on a decision: a ``conviction_score`` from 0
    (invalidated) to 100 (confirmed), one sentence of ``notes`` and an advisory
    ``suggested_action``. The decision itself never changes."""
    request = decision_service_pb2.RecordReexaminationRequest(
        parent_decision_id=decision_id,
        run_id=run_id,
        conviction_score=conviction_score,
        notes=notes,
        suggested_action=suggested_action,
    )
    return Op(
        "DecisionService",
        "RecordReexamination",
        request,
        lambda r: types.Reexamination.from_proto(r.reexamination),
    )


def list_reexaminations(decision_id: str) -> Op[list[types.Reexamination]]:
    """A decision's re-examinations, its conviction history, oldest first."""
    request = decision_service_pb2.ListReexaminationsRequest(parent_decision_id=decision_id)
    return Op(
        "DecisionService",
        "ListReexaminations",
        request,
        lambda r: list(map(types.Reexamination.from_proto, r.reexaminations)),
    )


def render_reexamination_prompt(
    decision_id: str,
) -> Op[types.RenderReexaminationPromptResponse]:
    """The prompt of a fresh run that re-examines a decision (``.prompt``), with the
    words its suggested action may take (``.allowed_actions``, empty for any)."""
    request = decision_service_pb2.RenderReexaminationPromptRequest(decision_id=decision_id)
    return Op(
        "DecisionService",
        "RenderReexaminationPrompt",
        request,
        types.RenderReexaminationPromptResponse.from_proto,
    )
