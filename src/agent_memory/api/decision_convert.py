"""Proto <-> domain conversion for DecisionService."""

from __future__ import annotations

from agent_memory.api.convert import plain, struct, timestamp
from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    ReExaminable,
    Reexamination,
    ResolutionStatus,
    parse_decision_id,
)
from agent_memory.domain.errors import FieldViolation, check
from agentmemory.v1 import decision_pb2
from agentmemory.v1 import decision_service_pb2 as pb

_RE_EXAMINABLE = {
    ReExaminable.NEVER: decision_pb2.RE_EXAMINABLE_NEVER,
    ReExaminable.ALWAYS: decision_pb2.RE_EXAMINABLE_ALWAYS,
    ReExaminable.UNTIL_RESOLVED: decision_pb2.RE_EXAMINABLE_UNTIL_RESOLVED,
}
_RE_EXAMINABLE_IN = {v: k for k, v in _RE_EXAMINABLE.items()}
_STATUSES = {
    ResolutionStatus.OPEN: decision_pb2.RESOLUTION_STATUS_OPEN,
    ResolutionStatus.RESOLVED: decision_pb2.RESOLUTION_STATUS_RESOLVED,
    ResolutionStatus.EXPIRED: decision_pb2.RESOLUTION_STATUS_EXPIRED,
}
_STATUSES_IN = {v: k for k, v in _STATUSES.items()}


def card_type_from_proto(message: decision_pb2.CardType) -> CardType:
    value = message.re_examinable
    if value == decision_pb2.RE_EXAMINABLE_UNSPECIFIED:
        re_examinable = ReExaminable.NEVER
    else:
        found = _RE_EXAMINABLE_IN.get(value)
        if found is None:
            check(
                [
                    FieldViolation(
                        "card_type.re_examinable", f"unknown value {value}", "INVALID_ENUM"
                    )
                ]
            )
            raise AssertionError  # unreachable
        re_examinable = found
    return CardType(
        name=message.name,
        re_examinable=re_examinable,
        actions=tuple(message.actions),
        decision_actions=tuple(message.decision_actions),
    )


def card_type_to_proto(card_type: CardType) -> decision_pb2.CardType:
    return decision_pb2.CardType(
        name=card_type.name,
        re_examinable=_RE_EXAMINABLE[card_type.re_examinable],
        actions=list(card_type.actions),
        decision_actions=list(card_type.decision_actions),
        created_at=timestamp(card_type.created_at),
        updated_at=timestamp(card_type.updated_at),
    )


def new_decision(message: decision_pb2.Decision) -> NewDecision:
    return NewDecision(
        run_id=message.run_id,
        agent_id=message.agent_id,
        card_type=message.card_type,
        action=message.action,
        summary=message.summary,
        result=plain(message.result),
    )


def decision_to_proto(decision: Decision) -> decision_pb2.Decision:
    message = decision_pb2.Decision(
        id=str(decision.id),
        run_id=decision.run_id,
        agent_id=decision.agent_id,
        card_type=decision.card_type,
        action=decision.action,
        summary=decision.summary,
        result=struct(decision.result) if decision.result is not None else None,
        resolution_status=_STATUSES[decision.resolution_status],
        created_at=timestamp(decision.created_at),
        resolved_at=timestamp(decision.resolved_at),
        compact=decision.compact,
        reexamination_count=decision.reexamination_count,
    )
    if decision.latest_conviction_score is not None:
        message.latest_conviction_score = decision.latest_conviction_score
    return message


def resolution_status_from_proto(value: int) -> ResolutionStatus:
    found = _STATUSES_IN.get(value)  # type: ignore[call-overload]
    if found is None:
        check(
            [
                FieldViolation(
                    "resolution_status",
                    "must be RESOLUTION_STATUS_OPEN, _RESOLVED or _EXPIRED",
                    "INVALID_ENUM",
                )
            ]
        )
        raise AssertionError  # unreachable
    status: ResolutionStatus = found
    return status


def new_reexamination(request: pb.RecordReexaminationRequest) -> NewReexamination:
    if not request.HasField("conviction_score"):
        check(
            [
                FieldViolation(
                    "conviction_score", "is required (0 to 100; 0 is a real score)", "REQUIRED"
                )
            ]
        )
    return NewReexamination(
        parent_decision_id=parse_decision_id("parent_decision_id", request.parent_decision_id),
        run_id=request.run_id,
        conviction_score=request.conviction_score,
        notes=request.notes,
        suggested_action=request.suggested_action,
    )


def reexamination_to_proto(item: Reexamination) -> decision_pb2.Reexamination:
    return decision_pb2.Reexamination(
        id=str(item.id),
        parent_decision_id=str(item.parent_decision_id),
        run_id=item.run_id,
        conviction_score=item.conviction_score,
        notes=item.notes,
        suggested_action=item.suggested_action,
        created_at=timestamp(item.created_at),
    )
