"""Proto <-> domain conversion for extraction and usage."""

from __future__ import annotations

from agent_memory.api.convert import SCOPES_OUT, memory_to_proto, timestamp
from agent_memory.domain.extraction import (
    DroppedFact,
    ExtractionOutcome,
    ExtractionRequest,
    ExtractionResult,
    Usage,
    UsageRecord,
    UsageReport,
)
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb

_OUTCOMES = {
    ExtractionOutcome.COMPLETED: memory_pb2.EXTRACTION_OUTCOME_COMPLETED,
    ExtractionOutcome.NO_FACTS: memory_pb2.EXTRACTION_OUTCOME_NO_FACTS,
    ExtractionOutcome.SKIPPED_TOO_SHORT: memory_pb2.EXTRACTION_OUTCOME_SKIPPED_TOO_SHORT,
    ExtractionOutcome.SKIPPED_BUDGET: memory_pb2.EXTRACTION_OUTCOME_SKIPPED_BUDGET,
    ExtractionOutcome.SKIPPED_MEMORY_DISABLED: (
        memory_pb2.EXTRACTION_OUTCOME_SKIPPED_MEMORY_DISABLED
    ),
    ExtractionOutcome.MODEL_ERROR: memory_pb2.EXTRACTION_OUTCOME_MODEL_ERROR,
    ExtractionOutcome.TIMEOUT: memory_pb2.EXTRACTION_OUTCOME_TIMEOUT,
    ExtractionOutcome.REFUSED: memory_pb2.EXTRACTION_OUTCOME_REFUSED,
    ExtractionOutcome.MALFORMED_REPLY: memory_pb2.EXTRACTION_OUTCOME_MALFORMED_REPLY,
    ExtractionOutcome.QUEUED: memory_pb2.EXTRACTION_OUTCOME_QUEUED,
}


def request_from_proto(request: pb.ExtractMemoriesRequest) -> ExtractionRequest:
    run = request.WhichOneof("run")
    return ExtractionRequest(
        agent_id=request.agent_id,
        workspace_id=request.workspace_id if request.HasField("workspace_id") else None,
        session_id=request.session_id if run == "session_id" else None,
        chain_id=request.chain_id if run == "chain_id" else None,
        transcript=request.transcript,
    )


def dropped_to_proto(fact: DroppedFact) -> memory_pb2.DroppedFact:
    return memory_pb2.DroppedFact(
        key=fact.key,
        value=fact.value,
        scope=SCOPES_OUT[fact.scope],
        confidence=fact.confidence,
        reason=fact.reason.value,
    )


def outcome_to_proto(outcome: ExtractionOutcome) -> memory_pb2.ExtractionOutcome:
    return _OUTCOMES[outcome]


def usage_to_proto(usage: Usage) -> memory_pb2.ExtractionUsage:
    return memory_pb2.ExtractionUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usage.cost_usd,
    )


def result_to_proto(result: ExtractionResult) -> pb.ExtractMemoriesResponse:
    return pb.ExtractMemoriesResponse(
        outcome=_OUTCOMES[result.outcome],
        synthetic_session_id=result.synthetic_session_id,
        written=[memory_to_proto(m) for m in result.written],
        dropped=[dropped_to_proto(d) for d in result.dropped],
        usage=usage_to_proto(result.usage) if result.outcome.calls_model else None,
        job_id=str(result.job_id) if result.job_id else "",
        detail=result.detail,
        superseded=[memory_to_proto(m) for m in result.superseded],
    )


def usage_record_to_proto(record: UsageRecord) -> memory_pb2.UsageRecord:
    return memory_pb2.UsageRecord(
        id=str(record.id),
        synthetic_session_id=record.synthetic_session_id,
        model=record.model,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cost_usd=record.cost_usd,
        recorded_at=timestamp(record.recorded_at),
        agent_id=record.agent_id,
        outcome=_OUTCOMES[record.outcome],
    )


def report_to_proto(report: UsageReport) -> pb.GetUsageResponse:
    return pb.GetUsageResponse(
        records=[usage_record_to_proto(r) for r in report.records],
        total_input_tokens=report.total_input_tokens,
        total_output_tokens=report.total_output_tokens,
        total_cost_usd=report.total_cost_usd,
    )
