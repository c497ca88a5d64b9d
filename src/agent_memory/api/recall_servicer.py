"""RecallService: ranked archival recall (streamed) and prompt rendering."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from agent_memory.api.convert import SCOPES_OUT, optional_time
from agent_memory.domain.identity import Principal
from agent_memory.domain.recall import (
    ArchivalMode,
    MemoryPolicy,
    RecallMatch,
    RecallMode,
    RecallQuery,
    RenderRequest,
)
from agent_memory.embed import EmbeddingError
from agent_memory.service.recall import Recall
from agentmemory.v1 import block_pb2, recall_pb2
from agentmemory.v1 import recall_service_pb2 as pb

_log = logging.getLogger(__name__)

_MODES = {
    recall_pb2.ARCHIVAL_MODE_UNSPECIFIED: ArchivalMode.TOOL_ONLY,
    recall_pb2.ARCHIVAL_MODE_TOOL_ONLY: ArchivalMode.TOOL_ONLY,
    recall_pb2.ARCHIVAL_MODE_AUTO: ArchivalMode.AUTO,
    recall_pb2.ARCHIVAL_MODE_OFF: ArchivalMode.OFF,
}


_RECALL_MODES = {
    RecallMode.LEXICAL: recall_pb2.RECALL_MODE_LEXICAL,
    RecallMode.HYBRID: recall_pb2.RECALL_MODE_HYBRID,
}


def _match(match: RecallMatch) -> pb.RecallResponse:
    return pb.RecallResponse(
        content=match.content,
        score=match.score,
        scope=SCOPES_OUT[match.scope],
        agent_id=match.agent_id,
        block_label=block_pb2.BLOCK_LABEL_UNSPECIFIED
        if match.memory_id
        else block_pb2.BLOCK_LABEL_ARCHIVAL,
        line_number=match.line_number,
        memory_id=str(match.memory_id) if match.memory_id else "",
        workspace_id=match.workspace_id,
    )


def _policy(policy: recall_pb2.MemoryPolicy) -> MemoryPolicy:
    return MemoryPolicy(
        archival_mode=_MODES.get(policy.archival_mode, ArchivalMode.TOOL_ONLY),
        archival_limit=policy.archival_limit,
        archival_min_score=policy.archival_min_score
        if policy.HasField("archival_min_score")
        else None,
        include_user_core=policy.include_user_core
        if policy.HasField("include_user_core")
        else True,
        include_agent_core=policy.include_agent_core
        if policy.HasField("include_agent_core")
        else True,
        include_recent_decisions=policy.include_recent_decisions
        if policy.HasField("include_recent_decisions")
        else None,
        recent_decisions_limit=policy.recent_decisions_limit,
        include_workspace_core=policy.include_workspace_core
        if policy.HasField("include_workspace_core")
        else True,
    )


# Token counts of texts, in order (agent_memory.embed.local.token_counts).
CountTokens = Callable[[Sequence[str]], Awaitable[list[int]]]


class RecallServicer:
    def __init__(self, recall: Recall, *, count_tokens: CountTokens | None = None) -> None:
        """``count_tokens``: how a rendered prompt's sections are counted; None leaves
        the counts unset."""
        self._recall = recall
        self._count_tokens = count_tokens

    async def Recall(
        self, caller: Principal, request: pb.RecallRequest
    ) -> AsyncIterator[pb.RecallResponse]:
        query = RecallQuery(
            query=request.query,
            agent_id=request.agent_id,
            limit=request.limit,
            min_score=request.min_score if request.HasField("min_score") else None,
            include_memories=request.include_memories,
            workspace_id=request.workspace_id if request.HasField("workspace_id") else None,
            as_of=optional_time(request, "as_of_time"),
        )
        async for match in self._recall.recall(caller, query):
            yield _match(match)

    async def GetRecallStatus(
        self, caller: Principal, request: pb.GetRecallStatusRequest
    ) -> pb.GetRecallStatusResponse:
        status = await self._recall.status(caller)
        indexing = status.indexing
        return pb.GetRecallStatusResponse(
            status=recall_pb2.RecallStatus(
                mode=_RECALL_MODES[status.mode],
                embedder=status.embedder,
                model=status.model,
                detail=status.detail,
                indexing=recall_pb2.IndexingStatus(
                    waiting_count=indexing.waiting,
                    waiting_line_count=indexing.waiting_lines,
                    waiting_memory_count=indexing.waiting_memories,
                    waiting_count_capped=indexing.waiting_capped,
                    worker_count=indexing.workers,
                    per_second=indexing.per_second,
                )
                if indexing is not None
                else None,
            )
        )

    async def RenderPrompt(
        self, caller: Principal, request: pb.RenderPromptRequest
    ) -> pb.RenderPromptResponse:
        rendered, warnings, render_time = await self._recall.render(
            caller,
            RenderRequest(
                agent_id=request.agent_id,
                workspace_id=request.workspace_id if request.HasField("workspace_id") else None,
                persona=request.persona,
                user_message=request.user_message,
                policy=_policy(request.memory_policy),
                as_of=optional_time(request, "as_of_time"),
            ),
        )
        counts = (
            await self._counts([*(s.content for s in rendered.sections), rendered.system_prompt])
            if request.count_tokens
            else None
        )
        response = pb.RenderPromptResponse(
            system_prompt=rendered.system_prompt,
            sections=[
                recall_pb2.PromptSection(name=s.name, content=s.content) for s in rendered.sections
            ],
            system_reminders=rendered.system_reminders,
            warnings=warnings,
            memory_markdown=rendered.memory_markdown,
        )
        response.render_time.FromDatetime(render_time)
        if counts is not None:
            *each, total = counts
            for section, count in zip(response.sections, each, strict=True):
                section.token_count = count
            response.token_count = total
        return response

    async def _counts(self, texts: list[str]) -> list[int] | None:
        """The token counts of ``texts``, or None when they cannot be counted (the model
        cannot be loaded): the prompt is answered without them rather than refused. The
        caller asked for them, so the render waits for the model's thread, within the
        call's deadline."""
        if self._count_tokens is None:
            return None
        try:
            return await self._count_tokens(texts)
        except EmbeddingError as exc:
            _log.warning("prompt sections are not counted: %s", exc)
            return None
