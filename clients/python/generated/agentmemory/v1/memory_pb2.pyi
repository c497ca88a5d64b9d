import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.api import field_info_pb2 as _field_info_pb2
from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Scope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCOPE_UNSPECIFIED: _ClassVar[Scope]
    SCOPE_AGENT: _ClassVar[Scope]
    SCOPE_WORKSPACE: _ClassVar[Scope]
    SCOPE_USER: _ClassVar[Scope]

class MemorySource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_SOURCE_UNSPECIFIED: _ClassVar[MemorySource]
    MEMORY_SOURCE_MANUAL: _ClassVar[MemorySource]
    MEMORY_SOURCE_AUTO: _ClassVar[MemorySource]
    MEMORY_SOURCE_DIRECTOR: _ClassVar[MemorySource]
    MEMORY_SOURCE_MEMORIZE: _ClassVar[MemorySource]

class HoldReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOLD_REASON_UNSPECIFIED: _ClassVar[HoldReason]
    HOLD_REASON_INSTRUCTION: _ClassVar[HoldReason]
    HOLD_REASON_CREDENTIAL: _ClassVar[HoldReason]
    HOLD_REASON_REQUESTED: _ClassVar[HoldReason]

class ConversationView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONVERSATION_VIEW_UNSPECIFIED: _ClassVar[ConversationView]
    CONVERSATION_VIEW_BASIC: _ClassVar[ConversationView]
    CONVERSATION_VIEW_FULL: _ClassVar[ConversationView]

class MemoryEventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_EVENT_TYPE_UNSPECIFIED: _ClassVar[MemoryEventType]
    MEMORY_EVENT_TYPE_CREATED: _ClassVar[MemoryEventType]
    MEMORY_EVENT_TYPE_UPDATED: _ClassVar[MemoryEventType]
    MEMORY_EVENT_TYPE_PINNED: _ClassVar[MemoryEventType]
    MEMORY_EVENT_TYPE_UNPINNED: _ClassVar[MemoryEventType]
    MEMORY_EVENT_TYPE_DELETED: _ClassVar[MemoryEventType]
    MEMORY_EVENT_TYPE_SUPERSEDED: _ClassVar[MemoryEventType]

class ExtractionOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXTRACTION_OUTCOME_UNSPECIFIED: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_COMPLETED: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_SKIPPED_TOO_SHORT: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_SKIPPED_BUDGET: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_MODEL_ERROR: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_TIMEOUT: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_REFUSED: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_MALFORMED_REPLY: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_QUEUED: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_NO_FACTS: _ClassVar[ExtractionOutcome]
    EXTRACTION_OUTCOME_SKIPPED_MEMORY_DISABLED: _ClassVar[ExtractionOutcome]

class ExtractionJobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXTRACTION_JOB_STATE_UNSPECIFIED: _ClassVar[ExtractionJobState]
    EXTRACTION_JOB_STATE_QUEUED: _ClassVar[ExtractionJobState]
    EXTRACTION_JOB_STATE_RUNNING: _ClassVar[ExtractionJobState]
    EXTRACTION_JOB_STATE_DONE: _ClassVar[ExtractionJobState]

class RunKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_KIND_UNSPECIFIED: _ClassVar[RunKind]
    RUN_KIND_SCHEDULED: _ClassVar[RunKind]
    RUN_KIND_CHAT: _ClassVar[RunKind]

class ActiveSessionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTIVE_SESSION_STATUS_UNSPECIFIED: _ClassVar[ActiveSessionStatus]
    ACTIVE_SESSION_STATUS_FRESH: _ClassVar[ActiveSessionStatus]
    ACTIVE_SESSION_STATUS_CARRYING_CONTEXT: _ClassVar[ActiveSessionStatus]
SCOPE_UNSPECIFIED: Scope
SCOPE_AGENT: Scope
SCOPE_WORKSPACE: Scope
SCOPE_USER: Scope
MEMORY_SOURCE_UNSPECIFIED: MemorySource
MEMORY_SOURCE_MANUAL: MemorySource
MEMORY_SOURCE_AUTO: MemorySource
MEMORY_SOURCE_DIRECTOR: MemorySource
MEMORY_SOURCE_MEMORIZE: MemorySource
HOLD_REASON_UNSPECIFIED: HoldReason
HOLD_REASON_INSTRUCTION: HoldReason
HOLD_REASON_CREDENTIAL: HoldReason
HOLD_REASON_REQUESTED: HoldReason
CONVERSATION_VIEW_UNSPECIFIED: ConversationView
CONVERSATION_VIEW_BASIC: ConversationView
CONVERSATION_VIEW_FULL: ConversationView
MEMORY_EVENT_TYPE_UNSPECIFIED: MemoryEventType
MEMORY_EVENT_TYPE_CREATED: MemoryEventType
MEMORY_EVENT_TYPE_UPDATED: MemoryEventType
MEMORY_EVENT_TYPE_PINNED: MemoryEventType
MEMORY_EVENT_TYPE_UNPINNED: MemoryEventType
MEMORY_EVENT_TYPE_DELETED: MemoryEventType
MEMORY_EVENT_TYPE_SUPERSEDED: MemoryEventType
EXTRACTION_OUTCOME_UNSPECIFIED: ExtractionOutcome
EXTRACTION_OUTCOME_COMPLETED: ExtractionOutcome
EXTRACTION_OUTCOME_SKIPPED_TOO_SHORT: ExtractionOutcome
EXTRACTION_OUTCOME_SKIPPED_BUDGET: ExtractionOutcome
EXTRACTION_OUTCOME_MODEL_ERROR: ExtractionOutcome
EXTRACTION_OUTCOME_TIMEOUT: ExtractionOutcome
EXTRACTION_OUTCOME_REFUSED: ExtractionOutcome
EXTRACTION_OUTCOME_MALFORMED_REPLY: ExtractionOutcome
EXTRACTION_OUTCOME_QUEUED: ExtractionOutcome
EXTRACTION_OUTCOME_NO_FACTS: ExtractionOutcome
EXTRACTION_OUTCOME_SKIPPED_MEMORY_DISABLED: ExtractionOutcome
EXTRACTION_JOB_STATE_UNSPECIFIED: ExtractionJobState
EXTRACTION_JOB_STATE_QUEUED: ExtractionJobState
EXTRACTION_JOB_STATE_RUNNING: ExtractionJobState
EXTRACTION_JOB_STATE_DONE: ExtractionJobState
RUN_KIND_UNSPECIFIED: RunKind
RUN_KIND_SCHEDULED: RunKind
RUN_KIND_CHAT: RunKind
ACTIVE_SESSION_STATUS_UNSPECIFIED: ActiveSessionStatus
ACTIVE_SESSION_STATUS_FRESH: ActiveSessionStatus
ACTIVE_SESSION_STATUS_CARRYING_CONTEXT: ActiveSessionStatus

class MemoryOwner(_message.Message):
    __slots__ = ("agent_id", "workspace_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    workspace_id: str
    def __init__(self, agent_id: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class Grounding(_message.Message):
    __slots__ = ("message_position", "provider_message_id", "start_character", "end_character", "quote", "raw_event_index", "raw_start_character", "raw_end_character", "metadata")
    MESSAGE_POSITION_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    START_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    END_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    QUOTE_FIELD_NUMBER: _ClassVar[int]
    RAW_EVENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    RAW_START_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    RAW_END_CHARACTER_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    message_position: int
    provider_message_id: str
    start_character: int
    end_character: int
    quote: str
    raw_event_index: int
    raw_start_character: int
    raw_end_character: int
    metadata: _struct_pb2.Struct
    def __init__(self, message_position: _Optional[int] = ..., provider_message_id: _Optional[str] = ..., start_character: _Optional[int] = ..., end_character: _Optional[int] = ..., quote: _Optional[str] = ..., raw_event_index: _Optional[int] = ..., raw_start_character: _Optional[int] = ..., raw_end_character: _Optional[int] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ConversationMessage(_message.Message):
    __slots__ = ("role", "content", "provider_message_id", "created_at")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    role: str
    content: str
    provider_message_id: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, role: _Optional[str] = ..., content: _Optional[str] = ..., provider_message_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Conversation(_message.Message):
    __slots__ = ("provider", "conversation_id", "messages", "raw_events", "message_count", "raw_event_count", "created_at", "updated_at")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    RAW_EVENTS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    RAW_EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    provider: str
    conversation_id: str
    messages: _containers.RepeatedCompositeFieldContainer[ConversationMessage]
    raw_events: _containers.RepeatedScalarFieldContainer[str]
    message_count: int
    raw_event_count: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, provider: _Optional[str] = ..., conversation_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[ConversationMessage, _Mapping]]] = ..., raw_events: _Optional[_Iterable[str]] = ..., message_count: _Optional[int] = ..., raw_event_count: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Memory(_message.Message):
    __slots__ = ("id", "scope", "agent_id", "workspace_id", "key", "value", "pinned", "importance", "source", "read_only", "tags", "confidence", "metadata", "groundings", "created_at", "updated_at", "etag", "conversation_id", "conversation_provider", "expire_time", "superseded_by", "last_used_time", "embedded", "valid_start_time", "valid_end_time", "note", "held_for_review", "hold_reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    GROUNDINGS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_PROVIDER_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_TIME_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    VALID_START_TIME_FIELD_NUMBER: _ClassVar[int]
    VALID_END_TIME_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    HELD_FOR_REVIEW_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    scope: Scope
    agent_id: str
    workspace_id: str
    key: str
    value: str
    pinned: bool
    importance: int
    source: MemorySource
    read_only: bool
    tags: _containers.RepeatedScalarFieldContainer[str]
    confidence: float
    metadata: _struct_pb2.Struct
    groundings: _containers.RepeatedCompositeFieldContainer[Grounding]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    etag: str
    conversation_id: str
    conversation_provider: str
    expire_time: _timestamp_pb2.Timestamp
    superseded_by: str
    last_used_time: _timestamp_pb2.Timestamp
    embedded: bool
    valid_start_time: _timestamp_pb2.Timestamp
    valid_end_time: _timestamp_pb2.Timestamp
    note: str
    held_for_review: bool
    hold_reason: HoldReason
    def __init__(self, id: _Optional[str] = ..., scope: _Optional[_Union[Scope, str]] = ..., agent_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., key: _Optional[str] = ..., value: _Optional[str] = ..., pinned: _Optional[bool] = ..., importance: _Optional[int] = ..., source: _Optional[_Union[MemorySource, str]] = ..., read_only: _Optional[bool] = ..., tags: _Optional[_Iterable[str]] = ..., confidence: _Optional[float] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., groundings: _Optional[_Iterable[_Union[Grounding, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., etag: _Optional[str] = ..., conversation_id: _Optional[str] = ..., conversation_provider: _Optional[str] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., superseded_by: _Optional[str] = ..., last_used_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., embedded: _Optional[bool] = ..., valid_start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., valid_end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., note: _Optional[str] = ..., held_for_review: _Optional[bool] = ..., hold_reason: _Optional[_Union[HoldReason, str]] = ...) -> None: ...

class MemoryEvent(_message.Message):
    __slots__ = ("id", "memory_id", "type", "actor_user_id", "occurred_at", "old_memory", "new_memory")
    ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_USER_ID_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    OLD_MEMORY_FIELD_NUMBER: _ClassVar[int]
    NEW_MEMORY_FIELD_NUMBER: _ClassVar[int]
    id: str
    memory_id: str
    type: MemoryEventType
    actor_user_id: str
    occurred_at: _timestamp_pb2.Timestamp
    old_memory: Memory
    new_memory: Memory
    def __init__(self, id: _Optional[str] = ..., memory_id: _Optional[str] = ..., type: _Optional[_Union[MemoryEventType, str]] = ..., actor_user_id: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., old_memory: _Optional[_Union[Memory, _Mapping]] = ..., new_memory: _Optional[_Union[Memory, _Mapping]] = ...) -> None: ...

class AgentSettings(_message.Message):
    __slots__ = ("agent_id", "memory_enabled", "updated_at", "active_memory_enabled", "review_decisions", "expiry_slide")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    REVIEW_DECISIONS_FIELD_NUMBER: _ClassVar[int]
    EXPIRY_SLIDE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    memory_enabled: bool
    updated_at: _timestamp_pb2.Timestamp
    active_memory_enabled: bool
    review_decisions: bool
    expiry_slide: _duration_pb2.Duration
    def __init__(self, agent_id: _Optional[str] = ..., memory_enabled: _Optional[bool] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., active_memory_enabled: _Optional[bool] = ..., review_decisions: _Optional[bool] = ..., expiry_slide: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class WorkspaceSettings(_message.Message):
    __slots__ = ("workspace_id", "expiry_slide", "updated_at")
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    EXPIRY_SLIDE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    workspace_id: str
    expiry_slide: _duration_pb2.Duration
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, workspace_id: _Optional[str] = ..., expiry_slide: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ExtractionUsage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cost_usd")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cost_usd: float
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ...) -> None: ...

class DroppedFact(_message.Message):
    __slots__ = ("key", "value", "scope", "confidence", "reason")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    scope: Scope
    confidence: float
    reason: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., scope: _Optional[_Union[Scope, str]] = ..., confidence: _Optional[float] = ..., reason: _Optional[str] = ...) -> None: ...

class ExtractionJob(_message.Message):
    __slots__ = ("id", "state", "attempts", "outcome", "detail", "synthetic_session_id", "agent_id", "workspace_id", "created_at", "updated_at", "run_after", "written_memory_ids", "dropped", "usage", "superseded_memory_ids")
    ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    SYNTHETIC_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    RUN_AFTER_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    state: ExtractionJobState
    attempts: int
    outcome: ExtractionOutcome
    detail: str
    synthetic_session_id: str
    agent_id: str
    workspace_id: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    run_after: _timestamp_pb2.Timestamp
    written_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    dropped: _containers.RepeatedCompositeFieldContainer[DroppedFact]
    usage: ExtractionUsage
    superseded_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., state: _Optional[_Union[ExtractionJobState, str]] = ..., attempts: _Optional[int] = ..., outcome: _Optional[_Union[ExtractionOutcome, str]] = ..., detail: _Optional[str] = ..., synthetic_session_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., run_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., written_memory_ids: _Optional[_Iterable[str]] = ..., dropped: _Optional[_Iterable[_Union[DroppedFact, _Mapping]]] = ..., usage: _Optional[_Union[ExtractionUsage, _Mapping]] = ..., superseded_memory_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class UsageRecord(_message.Message):
    __slots__ = ("id", "synthetic_session_id", "model", "input_tokens", "output_tokens", "cost_usd", "recorded_at", "agent_id", "outcome")
    ID_FIELD_NUMBER: _ClassVar[int]
    SYNTHETIC_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    id: str
    synthetic_session_id: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float
    recorded_at: _timestamp_pb2.Timestamp
    agent_id: str
    outcome: ExtractionOutcome
    def __init__(self, id: _Optional[str] = ..., synthetic_session_id: _Optional[str] = ..., model: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., recorded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_id: _Optional[str] = ..., outcome: _Optional[_Union[ExtractionOutcome, str]] = ...) -> None: ...

class AgentRun(_message.Message):
    __slots__ = ("run_id", "kind", "session_id_before", "session_id_after", "carried", "recorded_at", "render_time")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_AFTER_FIELD_NUMBER: _ClassVar[int]
    CARRIED_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    RENDER_TIME_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    kind: RunKind
    session_id_before: str
    session_id_after: str
    carried: bool
    recorded_at: _timestamp_pb2.Timestamp
    render_time: _timestamp_pb2.Timestamp
    def __init__(self, run_id: _Optional[str] = ..., kind: _Optional[_Union[RunKind, str]] = ..., session_id_before: _Optional[str] = ..., session_id_after: _Optional[str] = ..., carried: _Optional[bool] = ..., recorded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., render_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ActiveSession(_message.Message):
    __slots__ = ("agent_id", "session_id", "status", "runs_since_reset", "session_age", "warning", "last_reset_at", "enabled", "updated_at", "warning_threshold")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RUNS_SINCE_RESET_FIELD_NUMBER: _ClassVar[int]
    SESSION_AGE_FIELD_NUMBER: _ClassVar[int]
    WARNING_FIELD_NUMBER: _ClassVar[int]
    LAST_RESET_AT_FIELD_NUMBER: _ClassVar[int]
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    WARNING_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    session_id: str
    status: ActiveSessionStatus
    runs_since_reset: int
    session_age: _duration_pb2.Duration
    warning: bool
    last_reset_at: _timestamp_pb2.Timestamp
    enabled: bool
    updated_at: _timestamp_pb2.Timestamp
    warning_threshold: int
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., status: _Optional[_Union[ActiveSessionStatus, str]] = ..., runs_since_reset: _Optional[int] = ..., session_age: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., warning: _Optional[bool] = ..., last_reset_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., enabled: _Optional[bool] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., warning_threshold: _Optional[int] = ...) -> None: ...
