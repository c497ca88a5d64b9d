from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ArchivalMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ARCHIVAL_MODE_UNSPECIFIED: _ClassVar[ArchivalMode]
    ARCHIVAL_MODE_TOOL_ONLY: _ClassVar[ArchivalMode]
    ARCHIVAL_MODE_AUTO: _ClassVar[ArchivalMode]
    ARCHIVAL_MODE_OFF: _ClassVar[ArchivalMode]

class RecallMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RECALL_MODE_UNSPECIFIED: _ClassVar[RecallMode]
    RECALL_MODE_LEXICAL: _ClassVar[RecallMode]
    RECALL_MODE_HYBRID: _ClassVar[RecallMode]
ARCHIVAL_MODE_UNSPECIFIED: ArchivalMode
ARCHIVAL_MODE_TOOL_ONLY: ArchivalMode
ARCHIVAL_MODE_AUTO: ArchivalMode
ARCHIVAL_MODE_OFF: ArchivalMode
RECALL_MODE_UNSPECIFIED: RecallMode
RECALL_MODE_LEXICAL: RecallMode
RECALL_MODE_HYBRID: RecallMode

class RecallStatus(_message.Message):
    __slots__ = ("mode", "embedder", "model", "detail", "indexing")
    MODE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    INDEXING_FIELD_NUMBER: _ClassVar[int]
    mode: RecallMode
    embedder: str
    model: str
    detail: str
    indexing: IndexingStatus
    def __init__(self, mode: _Optional[_Union[RecallMode, str]] = ..., embedder: _Optional[str] = ..., model: _Optional[str] = ..., detail: _Optional[str] = ..., indexing: _Optional[_Union[IndexingStatus, _Mapping]] = ...) -> None: ...

class IndexingStatus(_message.Message):
    __slots__ = ("waiting_count", "waiting_count_capped", "worker_count", "per_second", "waiting_line_count", "waiting_memory_count")
    WAITING_COUNT_FIELD_NUMBER: _ClassVar[int]
    WAITING_COUNT_CAPPED_FIELD_NUMBER: _ClassVar[int]
    WORKER_COUNT_FIELD_NUMBER: _ClassVar[int]
    PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    WAITING_LINE_COUNT_FIELD_NUMBER: _ClassVar[int]
    WAITING_MEMORY_COUNT_FIELD_NUMBER: _ClassVar[int]
    waiting_count: int
    waiting_count_capped: bool
    worker_count: int
    per_second: float
    waiting_line_count: int
    waiting_memory_count: int
    def __init__(self, waiting_count: _Optional[int] = ..., waiting_count_capped: _Optional[bool] = ..., worker_count: _Optional[int] = ..., per_second: _Optional[float] = ..., waiting_line_count: _Optional[int] = ..., waiting_memory_count: _Optional[int] = ...) -> None: ...

class MemoryPolicy(_message.Message):
    __slots__ = ("archival_mode", "archival_limit", "archival_min_score", "include_user_core", "include_agent_core", "include_recent_decisions", "recent_decisions_limit", "include_workspace_core")
    ARCHIVAL_MODE_FIELD_NUMBER: _ClassVar[int]
    ARCHIVAL_LIMIT_FIELD_NUMBER: _ClassVar[int]
    ARCHIVAL_MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_USER_CORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_AGENT_CORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RECENT_DECISIONS_FIELD_NUMBER: _ClassVar[int]
    RECENT_DECISIONS_LIMIT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_WORKSPACE_CORE_FIELD_NUMBER: _ClassVar[int]
    archival_mode: ArchivalMode
    archival_limit: int
    archival_min_score: float
    include_user_core: bool
    include_agent_core: bool
    include_recent_decisions: bool
    recent_decisions_limit: int
    include_workspace_core: bool
    def __init__(self, archival_mode: _Optional[_Union[ArchivalMode, str]] = ..., archival_limit: _Optional[int] = ..., archival_min_score: _Optional[float] = ..., include_user_core: _Optional[bool] = ..., include_agent_core: _Optional[bool] = ..., include_recent_decisions: _Optional[bool] = ..., recent_decisions_limit: _Optional[int] = ..., include_workspace_core: _Optional[bool] = ...) -> None: ...

class PromptSection(_message.Message):
    __slots__ = ("name", "content", "token_count")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    name: str
    content: str
    token_count: int
    def __init__(self, name: _Optional[str] = ..., content: _Optional[str] = ..., token_count: _Optional[int] = ...) -> None: ...
