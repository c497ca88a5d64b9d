import datetime

from agentmemory.v1 import memory_pb2 as _memory_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BlockLabel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BLOCK_LABEL_UNSPECIFIED: _ClassVar[BlockLabel]
    BLOCK_LABEL_CORE: _ClassVar[BlockLabel]
    BLOCK_LABEL_ARCHIVAL: _ClassVar[BlockLabel]

class BlockScopeFilter(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BLOCK_SCOPE_FILTER_UNSPECIFIED: _ClassVar[BlockScopeFilter]
    BLOCK_SCOPE_FILTER_USER: _ClassVar[BlockScopeFilter]
    BLOCK_SCOPE_FILTER_AGENT: _ClassVar[BlockScopeFilter]
    BLOCK_SCOPE_FILTER_ALL: _ClassVar[BlockScopeFilter]
    BLOCK_SCOPE_FILTER_WORKSPACE: _ClassVar[BlockScopeFilter]
BLOCK_LABEL_UNSPECIFIED: BlockLabel
BLOCK_LABEL_CORE: BlockLabel
BLOCK_LABEL_ARCHIVAL: BlockLabel
BLOCK_SCOPE_FILTER_UNSPECIFIED: BlockScopeFilter
BLOCK_SCOPE_FILTER_USER: BlockScopeFilter
BLOCK_SCOPE_FILTER_AGENT: BlockScopeFilter
BLOCK_SCOPE_FILTER_ALL: BlockScopeFilter
BLOCK_SCOPE_FILTER_WORKSPACE: BlockScopeFilter

class Block(_message.Message):
    __slots__ = ("label", "scope", "agent_id", "content", "char_count", "entry_count", "updated_at", "version", "created_at", "indexed_line_count", "etag", "workspace_id")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CHAR_COUNT_FIELD_NUMBER: _ClassVar[int]
    ENTRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    INDEXED_LINE_COUNT_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    label: BlockLabel
    scope: _memory_pb2.Scope
    agent_id: str
    content: str
    char_count: int
    entry_count: int
    updated_at: _timestamp_pb2.Timestamp
    version: int
    created_at: _timestamp_pb2.Timestamp
    indexed_line_count: int
    etag: str
    workspace_id: str
    def __init__(self, label: _Optional[_Union[BlockLabel, str]] = ..., scope: _Optional[_Union[_memory_pb2.Scope, str]] = ..., agent_id: _Optional[str] = ..., content: _Optional[str] = ..., char_count: _Optional[int] = ..., entry_count: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., indexed_line_count: _Optional[int] = ..., etag: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class BlockVersion(_message.Message):
    __slots__ = ("version", "content", "writer_user_id", "written_at", "char_count")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    WRITER_USER_ID_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_AT_FIELD_NUMBER: _ClassVar[int]
    CHAR_COUNT_FIELD_NUMBER: _ClassVar[int]
    version: int
    content: str
    writer_user_id: str
    written_at: _timestamp_pb2.Timestamp
    char_count: int
    def __init__(self, version: _Optional[int] = ..., content: _Optional[str] = ..., writer_user_id: _Optional[str] = ..., written_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., char_count: _Optional[int] = ...) -> None: ...
