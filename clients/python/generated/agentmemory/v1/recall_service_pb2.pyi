import datetime

from agentmemory.v1 import block_pb2 as _block_pb2
from agentmemory.v1 import memory_pb2 as _memory_pb2
from agentmemory.v1 import recall_pb2 as _recall_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RecallRequest(_message.Message):
    __slots__ = ("query", "agent_id", "limit", "min_score", "include_memories", "workspace_id", "as_of_time")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_MEMORIES_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    query: str
    agent_id: str
    limit: int
    min_score: float
    include_memories: bool
    workspace_id: str
    as_of_time: _timestamp_pb2.Timestamp
    def __init__(self, query: _Optional[str] = ..., agent_id: _Optional[str] = ..., limit: _Optional[int] = ..., min_score: _Optional[float] = ..., include_memories: _Optional[bool] = ..., workspace_id: _Optional[str] = ..., as_of_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("content", "score", "scope", "agent_id", "block_label", "line_number", "memory_id", "workspace_id")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCK_LABEL_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    content: str
    score: float
    scope: _memory_pb2.Scope
    agent_id: str
    block_label: _block_pb2.BlockLabel
    line_number: int
    memory_id: str
    workspace_id: str
    def __init__(self, content: _Optional[str] = ..., score: _Optional[float] = ..., scope: _Optional[_Union[_memory_pb2.Scope, str]] = ..., agent_id: _Optional[str] = ..., block_label: _Optional[_Union[_block_pb2.BlockLabel, str]] = ..., line_number: _Optional[int] = ..., memory_id: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class RenderPromptRequest(_message.Message):
    __slots__ = ("agent_id", "workspace_id", "persona", "user_message", "memory_policy", "count_tokens", "as_of_time")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    PERSONA_FIELD_NUMBER: _ClassVar[int]
    USER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_POLICY_FIELD_NUMBER: _ClassVar[int]
    COUNT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    AS_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    workspace_id: str
    persona: str
    user_message: str
    memory_policy: _recall_pb2.MemoryPolicy
    count_tokens: bool
    as_of_time: _timestamp_pb2.Timestamp
    def __init__(self, agent_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., persona: _Optional[str] = ..., user_message: _Optional[str] = ..., memory_policy: _Optional[_Union[_recall_pb2.MemoryPolicy, _Mapping]] = ..., count_tokens: _Optional[bool] = ..., as_of_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RenderPromptResponse(_message.Message):
    __slots__ = ("system_prompt", "sections", "system_reminders", "warnings", "memory_markdown", "token_count", "render_time")
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_REMINDERS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_MARKDOWN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    RENDER_TIME_FIELD_NUMBER: _ClassVar[int]
    system_prompt: str
    sections: _containers.RepeatedCompositeFieldContainer[_recall_pb2.PromptSection]
    system_reminders: _containers.RepeatedScalarFieldContainer[str]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    memory_markdown: str
    token_count: int
    render_time: _timestamp_pb2.Timestamp
    def __init__(self, system_prompt: _Optional[str] = ..., sections: _Optional[_Iterable[_Union[_recall_pb2.PromptSection, _Mapping]]] = ..., system_reminders: _Optional[_Iterable[str]] = ..., warnings: _Optional[_Iterable[str]] = ..., memory_markdown: _Optional[str] = ..., token_count: _Optional[int] = ..., render_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetRecallStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetRecallStatusResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _recall_pb2.RecallStatus
    def __init__(self, status: _Optional[_Union[_recall_pb2.RecallStatus, _Mapping]] = ...) -> None: ...
