import datetime

from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.api import field_info_pb2 as _field_info_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReExaminable(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RE_EXAMINABLE_UNSPECIFIED: _ClassVar[ReExaminable]
    RE_EXAMINABLE_NEVER: _ClassVar[ReExaminable]
    RE_EXAMINABLE_ALWAYS: _ClassVar[ReExaminable]
    RE_EXAMINABLE_UNTIL_RESOLVED: _ClassVar[ReExaminable]

class ResolutionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESOLUTION_STATUS_UNSPECIFIED: _ClassVar[ResolutionStatus]
    RESOLUTION_STATUS_OPEN: _ClassVar[ResolutionStatus]
    RESOLUTION_STATUS_RESOLVED: _ClassVar[ResolutionStatus]
    RESOLUTION_STATUS_EXPIRED: _ClassVar[ResolutionStatus]
RE_EXAMINABLE_UNSPECIFIED: ReExaminable
RE_EXAMINABLE_NEVER: ReExaminable
RE_EXAMINABLE_ALWAYS: ReExaminable
RE_EXAMINABLE_UNTIL_RESOLVED: ReExaminable
RESOLUTION_STATUS_UNSPECIFIED: ResolutionStatus
RESOLUTION_STATUS_OPEN: ResolutionStatus
RESOLUTION_STATUS_RESOLVED: ResolutionStatus
RESOLUTION_STATUS_EXPIRED: ResolutionStatus

class CardType(_message.Message):
    __slots__ = ("name", "re_examinable", "actions", "decision_actions", "created_at", "updated_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RE_EXAMINABLE_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DECISION_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    re_examinable: ReExaminable
    actions: _containers.RepeatedScalarFieldContainer[str]
    decision_actions: _containers.RepeatedScalarFieldContainer[str]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., re_examinable: _Optional[_Union[ReExaminable, str]] = ..., actions: _Optional[_Iterable[str]] = ..., decision_actions: _Optional[_Iterable[str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("id", "run_id", "agent_id", "card_type", "action", "summary", "result", "resolution_status", "created_at", "resolved_at", "compact", "latest_conviction_score", "reexamination_count")
    ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_AT_FIELD_NUMBER: _ClassVar[int]
    COMPACT_FIELD_NUMBER: _ClassVar[int]
    LATEST_CONVICTION_SCORE_FIELD_NUMBER: _ClassVar[int]
    REEXAMINATION_COUNT_FIELD_NUMBER: _ClassVar[int]
    id: str
    run_id: str
    agent_id: str
    card_type: str
    action: str
    summary: str
    result: _struct_pb2.Struct
    resolution_status: ResolutionStatus
    created_at: _timestamp_pb2.Timestamp
    resolved_at: _timestamp_pb2.Timestamp
    compact: str
    latest_conviction_score: int
    reexamination_count: int
    def __init__(self, id: _Optional[str] = ..., run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., card_type: _Optional[str] = ..., action: _Optional[str] = ..., summary: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., resolution_status: _Optional[_Union[ResolutionStatus, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., resolved_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., compact: _Optional[str] = ..., latest_conviction_score: _Optional[int] = ..., reexamination_count: _Optional[int] = ...) -> None: ...

class Reexamination(_message.Message):
    __slots__ = ("id", "parent_decision_id", "run_id", "conviction_score", "notes", "suggested_action", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CONVICTION_SCORE_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_ACTION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    parent_decision_id: str
    run_id: str
    conviction_score: int
    notes: str
    suggested_action: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., parent_decision_id: _Optional[str] = ..., run_id: _Optional[str] = ..., conviction_score: _Optional[int] = ..., notes: _Optional[str] = ..., suggested_action: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
