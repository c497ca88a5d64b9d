"""MemoryService: proto in, use case, proto out."""

from __future__ import annotations

from agent_memory.api import convert, evidence_convert, extraction_convert
from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.identity import Principal
from agent_memory.domain.memory import MemoryWrite, Scope, parse_memory_id
from agent_memory.service.active_sessions import ActiveSessions
from agent_memory.service.agents import Agents, Workspaces
from agent_memory.service.evidence import EvidenceReads
from agent_memory.service.extraction import Extraction
from agent_memory.service.forgetting import Forgetting
from agent_memory.service.memories import Memories, validate_owner
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb

# The settings UpdateAgentSettings and UpdateWorkspaceSettings may change: the fields
# a caller writes (every field but the id and those the contract marks output only).
SETTINGS_SWITCHES = convert.writable_settings(memory_pb2.AgentSettings, "agent_id")
WORKSPACE_SETTINGS = convert.writable_settings(memory_pb2.WorkspaceSettings, "workspace_id")


class MemoryServicer:
    def __init__(
        self,
        memories: Memories,
        agents: Agents,
        workspaces: Workspaces,
        extraction: Extraction,
        active_sessions: ActiveSessions,
        forgetting: Forgetting,
        evidence: EvidenceReads,
        *,
        response_bytes: int = convert.RESPONSE_MAX_BYTES,
    ) -> None:
        self._budget = response_bytes
        self._evidence = evidence
        self._forgetting = forgetting
        self._memories = memories
        self._agents = agents
        self._workspaces = workspaces
        self._extraction = extraction
        self._active_sessions = active_sessions

    async def UpsertMemory(
        self, caller: Principal, request: pb.UpsertMemoryRequest
    ) -> pb.UpsertMemoryResponse:
        write = MemoryWrite(
            owner=validate_owner(
                convert.owner_from_proto(request.owner, request.HasField("owner"))
            ),
            source=convert.source_from_proto(request.source),
            expiration=convert.expiration_from_proto(request),
            **convert.fields_from_proto(request, MemoryWrite, skip=("owner", "source")),
        )
        memory, created = await self._memories.upsert(
            caller, write, create_only=request.create_only
        )
        return pb.UpsertMemoryResponse(memory=convert.memory_to_proto(memory), created=created)

    async def ListAgents(
        self, caller: Principal, request: pb.ListAgentsRequest
    ) -> pb.ListAgentsResponse:
        owners, token = await self._owners(caller, Scope.AGENT, request)
        return pb.ListAgentsResponse(agents=owners, next_page_token=token)

    async def ListWorkspaces(
        self, caller: Principal, request: pb.ListWorkspacesRequest
    ) -> pb.ListWorkspacesResponse:
        owners, token = await self._owners(caller, Scope.WORKSPACE, request)
        return pb.ListWorkspacesResponse(workspaces=owners, next_page_token=token)

    async def _owners(
        self,
        caller: Principal,
        scope: Scope,
        request: pb.ListAgentsRequest | pb.ListWorkspacesRequest,
    ) -> tuple[list[pb.OwnerSummary], str]:
        page = await self._memories.owners(
            caller, scope, size=request.page_size, token=request.page_token
        )
        return [convert.owner_summary_to_proto(o) for o in page.items], page.next_page_token

    async def GetCaller(
        self, caller: Principal, request: pb.GetCallerRequest
    ) -> pb.GetCallerResponse:
        return pb.GetCallerResponse(
            caller=pb.Caller(
                tenant_id=caller.tenant_id,
                user_id=caller.user_id,
                role=caller.role.value,
                key_id=caller.key_id,
            )
        )

    async def GetMemory(
        self, caller: Principal, request: pb.GetMemoryRequest
    ) -> pb.GetMemoryResponse:
        as_of = convert.optional_time(request, "as_of_time")
        by_key = request.HasField("owner") or bool(request.key)
        if by_key and request.id:
            check([FieldViolation("id", "give id, or owner and key, not both", "NOT_ALLOWED")])
        if by_key:
            memory = await self._memories.get_by_key(
                caller,
                convert.owner_from_proto(request.owner, request.HasField("owner")),
                request.key,
                as_of=as_of,
            )
        else:
            memory_id = parse_memory_id("id", request.id)
            memory = await self._memories.get(caller, memory_id, as_of=as_of)
        return pb.GetMemoryResponse(memory=convert.memory_to_proto(memory))

    async def ListMemories(
        self, caller: Principal, request: pb.ListMemoriesRequest
    ) -> pb.ListMemoriesResponse:
        page = await self._memories.list(
            caller,
            owner=convert.owner_from_proto(request.owner, request.HasField("owner")),
            size=request.page_size,
            token=request.page_token,
            show_expired=request.show_expired,
            show_superseded=request.show_superseded,
            filter=request.filter,
            order_by=request.order_by,
            as_of=convert.optional_time(request, "as_of_time"),
        )
        memories, next_page_token = convert.fitted_page(
            page, convert.memory_to_proto, budget=self._budget
        )
        return pb.ListMemoriesResponse(
            memories=memories, next_page_token=next_page_token, total_size=page.total_size or 0
        )

    async def UpdateMemory(
        self, caller: Principal, request: pb.UpdateMemoryRequest
    ) -> pb.UpdateMemoryResponse:
        memory_id = parse_memory_id("memory.id", request.memory.id)
        paths = list(request.update_mask.paths) if request.HasField("update_mask") else None
        memory = await self._memories.update(
            caller,
            memory_id,
            convert.memory_patch(request.memory, paths),
            etag=request.etag if request.HasField("etag") else None,
        )
        return pb.UpdateMemoryResponse(memory=convert.memory_to_proto(memory))

    async def PinMemory(
        self, caller: Principal, request: pb.PinMemoryRequest
    ) -> pb.PinMemoryResponse:
        memory = await self._memories.pin(caller, parse_memory_id("id", request.id), request.pinned)
        return pb.PinMemoryResponse(memory=convert.memory_to_proto(memory))

    async def DeleteMemory(
        self, caller: Principal, request: pb.DeleteMemoryRequest
    ) -> pb.DeleteMemoryResponse:
        await self._memories.delete(
            caller,
            parse_memory_id("id", request.id),
            etag=request.etag if request.HasField("etag") else None,
        )
        return pb.DeleteMemoryResponse()

    async def Memorize(self, caller: Principal, request: pb.MemorizeRequest) -> pb.MemorizeResponse:
        memory, created, superseded = await self._memories.memorize(
            caller,
            owner=convert.owner_from_proto(request.owner, request.HasField("owner")),
            item=convert.memorize_input(request),
        )
        return pb.MemorizeResponse(
            memory=convert.memory_to_proto(memory),
            created=created,
            superseded=[convert.memory_to_proto(m) for m in superseded],
        )

    async def RecordLearning(
        self, caller: Principal, request: pb.RecordLearningRequest
    ) -> pb.RecordLearningResponse:
        memory = await self._memories.record_learning(
            caller,
            chain_agent_ids=list(request.chain_agent_ids),
            content=request.content,
        )
        return pb.RecordLearningResponse(memory=convert.memory_to_proto(memory))

    async def ListLearnings(
        self, caller: Principal, request: pb.ListLearningsRequest
    ) -> pb.ListLearningsResponse:
        memories = await self._memories.learnings(
            caller,
            chain_agent_ids=list(request.chain_agent_ids),
            limit=request.limit,
        )
        return pb.ListLearningsResponse(
            memories=convert.fitted_all(
                memories,
                convert.memory_to_proto,
                what="learnings",
                advice="ask for fewer with limit",
                budget=self._budget,
            )
        )

    async def ListMemoryEvents(
        self, caller: Principal, request: pb.ListMemoryEventsRequest
    ) -> pb.ListMemoryEventsResponse:
        page = await self._memories.events(
            caller,
            parse_memory_id("memory_id", request.memory_id),
            size=request.page_size,
            token=request.page_token,
        )
        events, next_page_token = convert.fitted_page(
            page, convert.event_to_proto, budget=self._budget
        )
        return pb.ListMemoryEventsResponse(events=events, next_page_token=next_page_token)

    async def ExtractMemories(
        self, caller: Principal, request: pb.ExtractMemoriesRequest
    ) -> pb.ExtractMemoriesResponse:
        result = await self._extraction.extract(
            caller,
            extraction_convert.request_from_proto(request),
            queued=request.queued,
        )
        return extraction_convert.result_to_proto(result)

    async def GetUsage(self, caller: Principal, request: pb.GetUsageRequest) -> pb.GetUsageResponse:
        report = await self._extraction.usage_report(
            caller,
            prefix=request.synthetic_session_id_prefix,
            start=convert.datetime_from_proto(request.start_time, "start_time")
            if request.HasField("start_time")
            else None,
            end=convert.datetime_from_proto(request.end_time, "end_time")
            if request.HasField("end_time")
            else None,
        )
        return extraction_convert.report_to_proto(report)

    async def GetAgentSettings(
        self, caller: Principal, request: pb.GetAgentSettingsRequest
    ) -> pb.GetAgentSettingsResponse:
        settings = await self._agents.settings(caller, request.agent_id)
        return pb.GetAgentSettingsResponse(settings=convert.settings_to_proto(settings))

    async def UpdateAgentSettings(
        self, caller: Principal, request: pb.UpdateAgentSettingsRequest
    ) -> pb.UpdateAgentSettingsResponse:
        mask = request.update_mask.paths if request.HasField("update_mask") else None
        changes = convert.settings_changes(request.settings, mask, SETTINGS_SWITCHES)
        settings = await self._agents.update_settings(caller, request.settings.agent_id, changes)
        return pb.UpdateAgentSettingsResponse(settings=convert.settings_to_proto(settings))

    async def GetWorkspaceSettings(
        self, caller: Principal, request: pb.GetWorkspaceSettingsRequest
    ) -> pb.GetWorkspaceSettingsResponse:
        settings = await self._workspaces.settings(caller, request.workspace_id)
        return pb.GetWorkspaceSettingsResponse(
            settings=convert.workspace_settings_to_proto(settings)
        )

    async def UpdateWorkspaceSettings(
        self, caller: Principal, request: pb.UpdateWorkspaceSettingsRequest
    ) -> pb.UpdateWorkspaceSettingsResponse:
        mask = request.update_mask.paths if request.HasField("update_mask") else None
        changes = convert.settings_changes(request.settings, mask, WORKSPACE_SETTINGS)
        settings = await self._workspaces.update_settings(
            caller, request.settings.workspace_id, changes
        )
        return pb.UpdateWorkspaceSettingsResponse(
            settings=convert.workspace_settings_to_proto(settings)
        )

    async def GetActiveSession(
        self, caller: Principal, request: pb.GetActiveSessionRequest
    ) -> pb.GetActiveSessionResponse:
        session = await self._active_sessions.get(caller, request.agent_id)
        return pb.GetActiveSessionResponse(session=convert.active_session_to_proto(session))

    async def RecordRunSession(
        self, caller: Principal, request: pb.RecordRunSessionRequest
    ) -> pb.RecordRunSessionResponse:
        session = await self._active_sessions.record_run(
            caller,
            agent_id=request.agent_id,
            run_id=request.run_id,
            session_id_before=request.session_id_before,
            session_id_after=request.session_id_after,
            kind=convert.run_kind_from_proto(request.kind),
            render_time=convert.optional_time(request, "render_time"),
        )
        return pb.RecordRunSessionResponse(session=convert.active_session_to_proto(session))

    async def ListAgentRuns(
        self, caller: Principal, request: pb.ListAgentRunsRequest
    ) -> pb.ListAgentRunsResponse:
        page = await self._active_sessions.runs(
            caller, request.agent_id, size=request.page_size, token=request.page_token
        )
        runs, next_page_token = convert.fitted_page(page, convert.run_to_proto, budget=self._budget)
        return pb.ListAgentRunsResponse(runs=runs, next_page_token=next_page_token)

    async def ResetActiveSession(
        self, caller: Principal, request: pb.ResetActiveSessionRequest
    ) -> pb.ResetActiveSessionResponse:
        session = await self._active_sessions.reset(caller, request.agent_id)
        return pb.ResetActiveSessionResponse(session=convert.active_session_to_proto(session))

    async def ForgetAgent(
        self, caller: Principal, request: pb.ForgetAgentRequest
    ) -> pb.ForgetAgentResponse:
        counts = await self._forgetting.agent(
            caller, request.agent_id, validate_only=request.validate_only
        )
        return pb.ForgetAgentResponse(removed=convert.forget_counts_to_proto(counts))

    async def ForgetWorkspace(
        self, caller: Principal, request: pb.ForgetWorkspaceRequest
    ) -> pb.ForgetWorkspaceResponse:
        counts = await self._forgetting.workspace(
            caller, request.workspace_id, validate_only=request.validate_only
        )
        return pb.ForgetWorkspaceResponse(removed=convert.forget_counts_to_proto(counts))

    async def ForgetUser(
        self, caller: Principal, request: pb.ForgetUserRequest
    ) -> pb.ForgetUserResponse:
        counts = await self._forgetting.user(caller, validate_only=request.validate_only)
        return pb.ForgetUserResponse(removed=convert.forget_counts_to_proto(counts))

    async def GetConversation(
        self, caller: Principal, request: pb.GetConversationRequest
    ) -> pb.GetConversationResponse:
        stored = await self._evidence.conversation(
            caller, provider=request.provider, conversation_id=request.conversation_id
        )
        (conversation,) = convert.fitted_all(
            [stored],
            evidence_convert.conversation_to_proto,
            what="conversation snapshot",
            advice="list it with view CONVERSATION_VIEW_BASIC for its counts",
            budget=self._budget,
        )
        return pb.GetConversationResponse(conversation=conversation)

    async def ListConversations(
        self, caller: Principal, request: pb.ListConversationsRequest
    ) -> pb.ListConversationsResponse:
        page = await self._evidence.conversations(
            caller,
            size=request.page_size,
            token=request.page_token,
            full=evidence_convert.wants_full(request.view),
        )
        conversations, next_page_token = convert.fitted_page(
            page, evidence_convert.conversation_to_proto, budget=self._budget
        )
        return pb.ListConversationsResponse(
            conversations=conversations, next_page_token=next_page_token
        )

    async def GetExtractionJob(
        self, caller: Principal, request: pb.GetExtractionJobRequest
    ) -> pb.GetExtractionJobResponse:
        job = await self._evidence.extraction_job(caller, request.job_id)
        return pb.GetExtractionJobResponse(job=evidence_convert.job_to_proto(job))
