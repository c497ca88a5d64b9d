"""Proto conversion for the evidence reads: conversation snapshots and extraction jobs."""

from __future__ import annotations

from agent_memory.api.convert import timestamp
from agent_memory.api.extraction_convert import dropped_to_proto, outcome_to_proto, usage_to_proto
from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.extraction import ExtractionJob, JobState
from agent_memory.domain.memorize import ConversationMessage, StoredConversation
from agentmemory.v1 import memory_pb2

_STATES = {
    JobState.QUEUED: memory_pb2.EXTRACTION_JOB_STATE_QUEUED,
    JobState.RUNNING: memory_pb2.EXTRACTION_JOB_STATE_RUNNING,
    JobState.DONE: memory_pb2.EXTRACTION_JOB_STATE_DONE,
}


def wants_full(view: int) -> bool:
    """Whether a listing's view asks for messages and raw events (BASIC by default).

    Raises: InvalidArgument — a view this server does not know."""
    if view not in memory_pb2.ConversationView.values():
        check([FieldViolation("view", f"unknown view {view}", "INVALID_VIEW")])
    return bool(view == memory_pb2.CONVERSATION_VIEW_FULL)


def conversation_to_proto(stored: StoredConversation) -> memory_pb2.Conversation:
    c = stored.conversation
    return memory_pb2.Conversation(
        provider=c.provider,
        conversation_id=c.conversation_id,
        messages=[_message_to_proto(m) for m in c.messages],
        raw_events=list(c.raw_events),
        message_count=stored.message_count,
        raw_event_count=stored.raw_event_count,
        created_at=timestamp(stored.created_at),
        updated_at=timestamp(stored.updated_at),
    )


def _message_to_proto(m: ConversationMessage) -> memory_pb2.ConversationMessage:
    return memory_pb2.ConversationMessage(
        role=m.role,
        content=m.content,
        provider_message_id=m.provider_message_id,
        created_at=timestamp(m.created_at),
    )


def job_to_proto(job: ExtractionJob) -> memory_pb2.ExtractionJob:
    message = memory_pb2.ExtractionJob(
        id=str(job.id),
        state=_STATES[job.state],
        attempts=job.attempts,
        detail=job.detail,
        synthetic_session_id=job.synthetic_session_id,
        agent_id=job.agent_id,
        workspace_id=job.workspace_id or "",
        created_at=timestamp(job.created_at),
        updated_at=timestamp(job.updated_at),
        run_after=timestamp(job.run_after),
        written_memory_ids=[str(i) for i in job.written_memory_ids],
        superseded_memory_ids=[str(i) for i in job.superseded_memory_ids],
        dropped=[dropped_to_proto(d) for d in job.dropped],
    )
    if job.outcome is not None:
        message.outcome = outcome_to_proto(job.outcome)
    if job.usage is not None:
        message.usage.CopyFrom(usage_to_proto(job.usage))
    return message
