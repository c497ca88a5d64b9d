import datetime

from agentmemory.v1 import memory_pb2 as _memory_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.api import field_info_pb2 as _field_info_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class UpsertMemoryRequest(_message.Message):
    __slots__ = ("owner", "key", "value", "pinned", "importance", "source", "expire_time", "ttl", "create_only", "valid_start_time", "valid_end_time", "note")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    CREATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    VALID_START_TIME_FIELD_NUMBER: _ClassVar[int]
    VALID_END_TIME_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    owner: _memory_pb2.MemoryOwner
    key: str
    value: str
    pinned: bool
    importance: int
    source: _memory_pb2.MemorySource
    expire_time: _timestamp_pb2.Timestamp
    ttl: _duration_pb2.Duration
    create_only: bool
    valid_start_time: _timestamp_pb2.Timestamp
    valid_end_time: _timestamp_pb2.Timestamp
    note: str
    def __init__(self, owner: _Optional[_Union[_memory_pb2.MemoryOwner, _Mapping]] = ..., key: _Optional[str] = ..., value: _Optional[str] = ..., pinned: _Optional[bool] = ..., importance: _Optional[int] = ..., source: _Optional[_Union[_memory_pb2.MemorySource, str]] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., create_only: _Optional[bool] = ..., valid_start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., note: _Optional[str] = ...) -> None: ...

class UpsertMemoryResponse(_message.Message):
    __slots__ = ("memory", "created")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    created: bool
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class GetMemoryRequest(_message.Message):
    __slots__ = ("id", "owner", "key", "as_of_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    AS_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    owner: _memory_pb2.MemoryOwner
    key: str
    as_of_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., owner: _Optional[_Union[_memory_pb2.MemoryOwner, _Mapping]] = ..., key: _Optional[str] = ..., as_of_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ...) -> None: ...

class UpdateMemoryRequest(_message.Message):
    __slots__ = ("memory", "update_mask", "etag")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    update_mask: _field_mask_pb2.FieldMask
    etag: str
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., etag: _Optional[str] = ...) -> None: ...

class UpdateMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ...) -> None: ...

class PinMemoryRequest(_message.Message):
    __slots__ = ("id", "pinned")
    ID_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    id: str
    pinned: bool
    def __init__(self, id: _Optional[str] = ..., pinned: _Optional[bool] = ...) -> None: ...

class PinMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ...) -> None: ...

class DeleteMemoryRequest(_message.Message):
    __slots__ = ("id", "etag")
    ID_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    id: str
    etag: str
    def __init__(self, id: _Optional[str] = ..., etag: _Optional[str] = ...) -> None: ...

class DeleteMemoryResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListMemoriesRequest(_message.Message):
    __slots__ = ("owner", "page_size", "page_token", "show_expired", "show_superseded", "filter", "order_by", "as_of_time")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SHOW_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    SHOW_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    ORDER_BY_FIELD_NUMBER: _ClassVar[int]
    AS_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    owner: _memory_pb2.MemoryOwner
    page_size: int
    page_token: str
    show_expired: bool
    show_superseded: bool
    filter: str
    order_by: str
    as_of_time: _timestamp_pb2.Timestamp
    def __init__(self, owner: _Optional[_Union[_memory_pb2.MemoryOwner, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., show_expired: _Optional[bool] = ..., show_superseded: _Optional[bool] = ..., filter: _Optional[str] = ..., order_by: _Optional[str] = ..., as_of_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListMemoriesResponse(_message.Message):
    __slots__ = ("memories", "next_page_token", "total_size")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Memory]
    next_page_token: str
    total_size: int
    def __init__(self, memories: _Optional[_Iterable[_Union[_memory_pb2.Memory, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total_size: _Optional[int] = ...) -> None: ...

class MemorizeRequest(_message.Message):
    __slots__ = ("owner", "content", "tags", "confidence", "memory_key", "metadata", "groundings", "conversation", "expire_time", "ttl", "supersedes", "valid_start_time", "valid_end_time")
    OWNER_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_KEY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    GROUNDINGS_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    VALID_START_TIME_FIELD_NUMBER: _ClassVar[int]
    VALID_END_TIME_FIELD_NUMBER: _ClassVar[int]
    owner: _memory_pb2.MemoryOwner
    content: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    confidence: float
    memory_key: str
    metadata: _struct_pb2.Struct
    groundings: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Grounding]
    conversation: _memory_pb2.Conversation
    expire_time: _timestamp_pb2.Timestamp
    ttl: _duration_pb2.Duration
    supersedes: _containers.RepeatedScalarFieldContainer[str]
    valid_start_time: _timestamp_pb2.Timestamp
    valid_end_time: _timestamp_pb2.Timestamp
    def __init__(self, owner: _Optional[_Union[_memory_pb2.MemoryOwner, _Mapping]] = ..., content: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., confidence: _Optional[float] = ..., memory_key: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., groundings: _Optional[_Iterable[_Union[_memory_pb2.Grounding, _Mapping]]] = ..., conversation: _Optional[_Union[_memory_pb2.Conversation, _Mapping]] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., supersedes: _Optional[_Iterable[str]] = ..., valid_start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemorizeResponse(_message.Message):
    __slots__ = ("memory", "created", "superseded")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    created: bool
    superseded: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Memory]
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ..., created: _Optional[bool] = ..., superseded: _Optional[_Iterable[_Union[_memory_pb2.Memory, _Mapping]]] = ...) -> None: ...

class RecordLearningRequest(_message.Message):
    __slots__ = ("chain_agent_ids", "content")
    CHAIN_AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    chain_agent_ids: _containers.RepeatedScalarFieldContainer[str]
    content: str
    def __init__(self, chain_agent_ids: _Optional[_Iterable[str]] = ..., content: _Optional[str] = ...) -> None: ...

class RecordLearningResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _memory_pb2.Memory
    def __init__(self, memory: _Optional[_Union[_memory_pb2.Memory, _Mapping]] = ...) -> None: ...

class ListLearningsRequest(_message.Message):
    __slots__ = ("chain_agent_ids", "limit")
    CHAIN_AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    chain_agent_ids: _containers.RepeatedScalarFieldContainer[str]
    limit: int
    def __init__(self, chain_agent_ids: _Optional[_Iterable[str]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListLearningsResponse(_message.Message):
    __slots__ = ("memories",)
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Memory]
    def __init__(self, memories: _Optional[_Iterable[_Union[_memory_pb2.Memory, _Mapping]]] = ...) -> None: ...

class ListMemoryEventsRequest(_message.Message):
    __slots__ = ("memory_id", "page_size", "page_token")
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    memory_id: str
    page_size: int
    page_token: str
    def __init__(self, memory_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMemoryEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_memory_pb2.MemoryEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[_memory_pb2.MemoryEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetAgentSettingsRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetAgentSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: _memory_pb2.AgentSettings
    def __init__(self, settings: _Optional[_Union[_memory_pb2.AgentSettings, _Mapping]] = ...) -> None: ...

class UpdateAgentSettingsRequest(_message.Message):
    __slots__ = ("settings", "update_mask")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    settings: _memory_pb2.AgentSettings
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, settings: _Optional[_Union[_memory_pb2.AgentSettings, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: _memory_pb2.AgentSettings
    def __init__(self, settings: _Optional[_Union[_memory_pb2.AgentSettings, _Mapping]] = ...) -> None: ...

class GetWorkspaceSettingsRequest(_message.Message):
    __slots__ = ("workspace_id",)
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    def __init__(self, workspace_id: _Optional[str] = ...) -> None: ...

class GetWorkspaceSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: _memory_pb2.WorkspaceSettings
    def __init__(self, settings: _Optional[_Union[_memory_pb2.WorkspaceSettings, _Mapping]] = ...) -> None: ...

class UpdateWorkspaceSettingsRequest(_message.Message):
    __slots__ = ("settings", "update_mask")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    settings: _memory_pb2.WorkspaceSettings
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, settings: _Optional[_Union[_memory_pb2.WorkspaceSettings, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateWorkspaceSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: _memory_pb2.WorkspaceSettings
    def __init__(self, settings: _Optional[_Union[_memory_pb2.WorkspaceSettings, _Mapping]] = ...) -> None: ...

class ExtractMemoriesRequest(_message.Message):
    __slots__ = ("agent_id", "workspace_id", "session_id", "chain_id", "transcript", "queued")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CHAIN_ID_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    workspace_id: str
    session_id: str
    chain_id: str
    transcript: str
    queued: bool
    def __init__(self, agent_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., session_id: _Optional[str] = ..., chain_id: _Optional[str] = ..., transcript: _Optional[str] = ..., queued: _Optional[bool] = ...) -> None: ...

class ExtractMemoriesResponse(_message.Message):
    __slots__ = ("outcome", "synthetic_session_id", "written", "dropped", "usage", "job_id", "detail", "superseded")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SYNTHETIC_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    outcome: _memory_pb2.ExtractionOutcome
    synthetic_session_id: str
    written: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Memory]
    dropped: _containers.RepeatedCompositeFieldContainer[_memory_pb2.DroppedFact]
    usage: _memory_pb2.ExtractionUsage
    job_id: str
    detail: str
    superseded: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Memory]
    def __init__(self, outcome: _Optional[_Union[_memory_pb2.ExtractionOutcome, str]] = ..., synthetic_session_id: _Optional[str] = ..., written: _Optional[_Iterable[_Union[_memory_pb2.Memory, _Mapping]]] = ..., dropped: _Optional[_Iterable[_Union[_memory_pb2.DroppedFact, _Mapping]]] = ..., usage: _Optional[_Union[_memory_pb2.ExtractionUsage, _Mapping]] = ..., job_id: _Optional[str] = ..., detail: _Optional[str] = ..., superseded: _Optional[_Iterable[_Union[_memory_pb2.Memory, _Mapping]]] = ...) -> None: ...

class GetUsageRequest(_message.Message):
    __slots__ = ("synthetic_session_id_prefix", "start_time", "end_time")
    SYNTHETIC_SESSION_ID_PREFIX_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    synthetic_session_id_prefix: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    def __init__(self, synthetic_session_id_prefix: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetUsageResponse(_message.Message):
    __slots__ = ("records", "total_input_tokens", "total_output_tokens", "total_cost_usd")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_COST_USD_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[_memory_pb2.UsageRecord]
    total_input_tokens: int
    total_output_tokens: int
    total_cost_usd: float
    def __init__(self, records: _Optional[_Iterable[_Union[_memory_pb2.UsageRecord, _Mapping]]] = ..., total_input_tokens: _Optional[int] = ..., total_output_tokens: _Optional[int] = ..., total_cost_usd: _Optional[float] = ...) -> None: ...

class GetActiveSessionRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetActiveSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _memory_pb2.ActiveSession
    def __init__(self, session: _Optional[_Union[_memory_pb2.ActiveSession, _Mapping]] = ...) -> None: ...

class RecordRunSessionRequest(_message.Message):
    __slots__ = ("agent_id", "run_id", "session_id_before", "session_id_after", "kind", "render_time")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_AFTER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    RENDER_TIME_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    run_id: str
    session_id_before: str
    session_id_after: str
    kind: _memory_pb2.RunKind
    render_time: _timestamp_pb2.Timestamp
    def __init__(self, agent_id: _Optional[str] = ..., run_id: _Optional[str] = ..., session_id_before: _Optional[str] = ..., session_id_after: _Optional[str] = ..., kind: _Optional[_Union[_memory_pb2.RunKind, str]] = ..., render_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecordRunSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _memory_pb2.ActiveSession
    def __init__(self, session: _Optional[_Union[_memory_pb2.ActiveSession, _Mapping]] = ...) -> None: ...

class ListAgentRunsRequest(_message.Message):
    __slots__ = ("agent_id", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentRunsResponse(_message.Message):
    __slots__ = ("runs", "next_page_token")
    RUNS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[_memory_pb2.AgentRun]
    next_page_token: str
    def __init__(self, runs: _Optional[_Iterable[_Union[_memory_pb2.AgentRun, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ResetActiveSessionRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class ResetActiveSessionResponse(_message.Message):
    __slots__ = ("session",)
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _memory_pb2.ActiveSession
    def __init__(self, session: _Optional[_Union[_memory_pb2.ActiveSession, _Mapping]] = ...) -> None: ...

class ForgetCounts(_message.Message):
    __slots__ = ("memories", "audit_events", "conversations", "blocks", "block_versions", "archival_lines", "decisions", "reexaminations", "extraction_jobs", "agent_state")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    AUDIT_EVENTS_FIELD_NUMBER: _ClassVar[int]
    CONVERSATIONS_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    BLOCK_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    ARCHIVAL_LINES_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    REEXAMINATIONS_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_JOBS_FIELD_NUMBER: _ClassVar[int]
    AGENT_STATE_FIELD_NUMBER: _ClassVar[int]
    memories: int
    audit_events: int
    conversations: int
    blocks: int
    block_versions: int
    archival_lines: int
    decisions: int
    reexaminations: int
    extraction_jobs: int
    agent_state: int
    def __init__(self, memories: _Optional[int] = ..., audit_events: _Optional[int] = ..., conversations: _Optional[int] = ..., blocks: _Optional[int] = ..., block_versions: _Optional[int] = ..., archival_lines: _Optional[int] = ..., decisions: _Optional[int] = ..., reexaminations: _Optional[int] = ..., extraction_jobs: _Optional[int] = ..., agent_state: _Optional[int] = ...) -> None: ...

class ForgetAgentRequest(_message.Message):
    __slots__ = ("agent_id", "validate_only")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    validate_only: bool
    def __init__(self, agent_id: _Optional[str] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class ForgetAgentResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: ForgetCounts
    def __init__(self, removed: _Optional[_Union[ForgetCounts, _Mapping]] = ...) -> None: ...

class ForgetWorkspaceRequest(_message.Message):
    __slots__ = ("workspace_id", "validate_only")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    validate_only: bool
    def __init__(self, workspace_id: _Optional[str] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class ForgetWorkspaceResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: ForgetCounts
    def __init__(self, removed: _Optional[_Union[ForgetCounts, _Mapping]] = ...) -> None: ...

class ForgetUserRequest(_message.Message):
    __slots__ = ("validate_only",)
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    validate_only: bool
    def __init__(self, validate_only: _Optional[bool] = ...) -> None: ...

class ForgetUserResponse(_message.Message):
    __slots__ = ("removed",)
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    removed: ForgetCounts
    def __init__(self, removed: _Optional[_Union[ForgetCounts, _Mapping]] = ...) -> None: ...

class GetConversationRequest(_message.Message):
    __slots__ = ("provider", "conversation_id")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    provider: str
    conversation_id: str
    def __init__(self, provider: _Optional[str] = ..., conversation_id: _Optional[str] = ...) -> None: ...

class GetConversationResponse(_message.Message):
    __slots__ = ("conversation",)
    CONVERSATION_FIELD_NUMBER: _ClassVar[int]
    conversation: _memory_pb2.Conversation
    def __init__(self, conversation: _Optional[_Union[_memory_pb2.Conversation, _Mapping]] = ...) -> None: ...

class ListConversationsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "view")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    view: _memory_pb2.ConversationView
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., view: _Optional[_Union[_memory_pb2.ConversationView, str]] = ...) -> None: ...

class ListConversationsResponse(_message.Message):
    __slots__ = ("conversations", "next_page_token")
    CONVERSATIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    conversations: _containers.RepeatedCompositeFieldContainer[_memory_pb2.Conversation]
    next_page_token: str
    def __init__(self, conversations: _Optional[_Iterable[_Union[_memory_pb2.Conversation, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetExtractionJobRequest(_message.Message):
    __slots__ = ("job_id",)
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    def __init__(self, job_id: _Optional[str] = ...) -> None: ...

class GetExtractionJobResponse(_message.Message):
    __slots__ = ("job",)
    JOB_FIELD_NUMBER: _ClassVar[int]
    job: _memory_pb2.ExtractionJob
    def __init__(self, job: _Optional[_Union[_memory_pb2.ExtractionJob, _Mapping]] = ...) -> None: ...

class GetCallerRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetCallerResponse(_message.Message):
    __slots__ = ("caller",)
    CALLER_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ...) -> None: ...

class Caller(_message.Message):
    __slots__ = ("tenant_id", "user_id", "role", "key_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    user_id: str
    role: str
    key_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., user_id: _Optional[str] = ..., role: _Optional[str] = ..., key_id: _Optional[str] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents", "next_page_token")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[OwnerSummary]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[OwnerSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListWorkspacesRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListWorkspacesResponse(_message.Message):
    __slots__ = ("workspaces", "next_page_token")
    WORKSPACES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workspaces: _containers.RepeatedCompositeFieldContainer[OwnerSummary]
    next_page_token: str
    def __init__(self, workspaces: _Optional[_Iterable[_Union[OwnerSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class OwnerSummary(_message.Message):
    __slots__ = ("id", "memory_count", "last_activity_time", "memory_enabled")
    ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTIVITY_TIME_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    id: str
    memory_count: int
    last_activity_time: _timestamp_pb2.Timestamp
    memory_enabled: bool
    def __init__(self, id: _Optional[str] = ..., memory_count: _Optional[int] = ..., last_activity_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., memory_enabled: _Optional[bool] = ...) -> None: ...
