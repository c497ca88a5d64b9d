import datetime

from agentmemory.v1 import decision_pb2 as _decision_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.api import field_behavior_pb2 as _field_behavior_pb2
from google.api import field_info_pb2 as _field_info_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterCardTypeRequest(_message.Message):
    __slots__ = ("card_type",)
    CARD_TYPE_FIELD_NUMBER: _ClassVar[int]
    card_type: _decision_pb2.CardType
    def __init__(self, card_type: _Optional[_Union[_decision_pb2.CardType, _Mapping]] = ...) -> None: ...

class RegisterCardTypeResponse(_message.Message):
    __slots__ = ("card_type", "created")
    CARD_TYPE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    card_type: _decision_pb2.CardType
    created: bool
    def __init__(self, card_type: _Optional[_Union[_decision_pb2.CardType, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class RecordDecisionRequest(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class RecordDecisionResponse(_message.Message):
    __slots__ = ("decision", "created")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    created: bool
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class GetDecisionRequest(_message.Message):
    __slots__ = ("decision_id",)
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    def __init__(self, decision_id: _Optional[str] = ...) -> None: ...

class GetDecisionResponse(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class ListRecentDecisionsRequest(_message.Message):
    __slots__ = ("agent_id", "limit", "include_result", "card_type")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_RESULT_FIELD_NUMBER: _ClassVar[int]
    CARD_TYPE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    limit: int
    include_result: bool
    card_type: str
    def __init__(self, agent_id: _Optional[str] = ..., limit: _Optional[int] = ..., include_result: _Optional[bool] = ..., card_type: _Optional[str] = ...) -> None: ...

class ListRecentDecisionsResponse(_message.Message):
    __slots__ = ("decisions", "as_of")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[_decision_pb2.Decision]
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, decisions: _Optional[_Iterable[_Union[_decision_pb2.Decision, _Mapping]]] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ResolveDecisionRequest(_message.Message):
    __slots__ = ("decision_id", "resolution_status")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_STATUS_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    resolution_status: _decision_pb2.ResolutionStatus
    def __init__(self, decision_id: _Optional[str] = ..., resolution_status: _Optional[_Union[_decision_pb2.ResolutionStatus, str]] = ...) -> None: ...

class ResolveDecisionResponse(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class RecordReexaminationRequest(_message.Message):
    __slots__ = ("parent_decision_id", "run_id", "conviction_score", "notes", "suggested_action")
    PARENT_DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CONVICTION_SCORE_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_ACTION_FIELD_NUMBER: _ClassVar[int]
    parent_decision_id: str
    run_id: str
    conviction_score: int
    notes: str
    suggested_action: str
    def __init__(self, parent_decision_id: _Optional[str] = ..., run_id: _Optional[str] = ..., conviction_score: _Optional[int] = ..., notes: _Optional[str] = ..., suggested_action: _Optional[str] = ...) -> None: ...

class RecordReexaminationResponse(_message.Message):
    __slots__ = ("reexamination", "created")
    REEXAMINATION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    reexamination: _decision_pb2.Reexamination
    created: bool
    def __init__(self, reexamination: _Optional[_Union[_decision_pb2.Reexamination, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class ListReexaminationsRequest(_message.Message):
    __slots__ = ("parent_decision_id",)
    PARENT_DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    parent_decision_id: str
    def __init__(self, parent_decision_id: _Optional[str] = ...) -> None: ...

class ListReexaminationsResponse(_message.Message):
    __slots__ = ("reexaminations",)
    REEXAMINATIONS_FIELD_NUMBER: _ClassVar[int]
    reexaminations: _containers.RepeatedCompositeFieldContainer[_decision_pb2.Reexamination]
    def __init__(self, reexaminations: _Optional[_Iterable[_Union[_decision_pb2.Reexamination, _Mapping]]] = ...) -> None: ...

class RenderReexaminationPromptRequest(_message.Message):
    __slots__ = ("decision_id",)
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    def __init__(self, decision_id: _Optional[str] = ...) -> None: ...

class RenderReexaminationPromptResponse(_message.Message):
    __slots__ = ("prompt", "decision_id", "card_type", "allowed_actions", "reexamination_count")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_TYPE_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REEXAMINATION_COUNT_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    decision_id: str
    card_type: str
    allowed_actions: _containers.RepeatedScalarFieldContainer[str]
    reexamination_count: int
    def __init__(self, prompt: _Optional[str] = ..., decision_id: _Optional[str] = ..., card_type: _Optional[str] = ..., allowed_actions: _Optional[_Iterable[str]] = ..., reexamination_count: _Optional[int] = ...) -> None: ...
