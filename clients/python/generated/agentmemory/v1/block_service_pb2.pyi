import datetime

from agentmemory.v1 import block_pb2 as _block_pb2
from agentmemory.v1 import memory_pb2 as _memory_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetBlockRequest(_message.Message):
    __slots__ = ("label", "scope", "agent_id", "user_id", "workspace_id", "as_of_time")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_TIME_FIELD_NUMBER: _ClassVar[int]
    label: _block_pb2.BlockLabel
    scope: _memory_pb2.Scope
    agent_id: str
    user_id: str
    workspace_id: str
    as_of_time: _timestamp_pb2.Timestamp
    def __init__(self, label: _Optional[_Union[_block_pb2.BlockLabel, str]] = ..., scope: _Optional[_Union[_memory_pb2.Scope, str]] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., workspace_id: _Optional[str] = ..., as_of_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetBlockResponse(_message.Message):
    __slots__ = ("block",)
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    block: _block_pb2.Block
    def __init__(self, block: _Optional[_Union[_block_pb2.Block, _Mapping]] = ...) -> None: ...

class DeleteBlockRequest(_message.Message):
    __slots__ = ("label", "scope", "agent_id", "expected_updated_at", "etag", "workspace_id")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    label: _block_pb2.BlockLabel
    scope: _memory_pb2.Scope
    agent_id: str
    expected_updated_at: _timestamp_pb2.Timestamp
    etag: str
    workspace_id: str
    def __init__(self, label: _Optional[_Union[_block_pb2.BlockLabel, str]] = ..., scope: _Optional[_Union[_memory_pb2.Scope, str]] = ..., agent_id: _Optional[str] = ..., expected_updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., etag: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class DeleteBlockResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListBlocksRequest(_message.Message):
    __slots__ = ("scope_filter", "agent_id", "user_id", "workspace_id")
    SCOPE_FILTER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    scope_filter: _block_pb2.BlockScopeFilter
    agent_id: str
    user_id: str
    workspace_id: str
    def __init__(self, scope_filter: _Optional[_Union[_block_pb2.BlockScopeFilter, str]] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class ListBlocksResponse(_message.Message):
    __slots__ = ("blocks",)
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    blocks: _containers.RepeatedCompositeFieldContainer[_block_pb2.Block]
    def __init__(self, blocks: _Optional[_Iterable[_Union[_block_pb2.Block, _Mapping]]] = ...) -> None: ...

class WriteBlockRequest(_message.Message):
    __slots__ = ("label", "scope", "agent_id", "content", "expected_updated_at", "etag", "workspace_id")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    label: _block_pb2.BlockLabel
    scope: _memory_pb2.Scope
    agent_id: str
    content: str
    expected_updated_at: _timestamp_pb2.Timestamp
    etag: str
    workspace_id: str
    def __init__(self, label: _Optional[_Union[_block_pb2.BlockLabel, str]] = ..., scope: _Optional[_Union[_memory_pb2.Scope, str]] = ..., agent_id: _Optional[str] = ..., content: _Optional[str] = ..., expected_updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., etag: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class WriteBlockResponse(_message.Message):
    __slots__ = ("block",)
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    block: _block_pb2.Block
    def __init__(self, block: _Optional[_Union[_block_pb2.Block, _Mapping]] = ...) -> None: ...

class ListBlockVersionsRequest(_message.Message):
    __slots__ = ("label", "scope", "agent_id", "page_size", "page_token", "user_id", "workspace_id")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ID_FIELD_NUMBER: _ClassVar[int]
    label: _block_pb2.BlockLabel
    scope: _memory_pb2.Scope
    agent_id: str
    page_size: int
    page_token: str
    user_id: str
    workspace_id: str
    def __init__(self, label: _Optional[_Union[_block_pb2.BlockLabel, str]] = ..., scope: _Optional[_Union[_memory_pb2.Scope, str]] = ..., agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., user_id: _Optional[str] = ..., workspace_id: _Optional[str] = ...) -> None: ...

class ListBlockVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[_block_pb2.BlockVersion]
    next_page_token: str
    def __init__(self, versions: _Optional[_Iterable[_Union[_block_pb2.BlockVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
