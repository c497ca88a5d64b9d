"""DecisionService: proto in, use case, proto out."""

from __future__ import annotations

from grpc.aio import ServicerContext

from agent_memory.api import decision_convert as convert
from agent_memory.api.convert import RESPONSE_MAX_BYTES, fitted_all, timestamp
from agent_memory.api.interceptors import current_principal
from agent_memory.domain.decisions import parse_decision_id
from agent_memory.service.decisions import Decisions
from agentmemory.v1 import decision_service_pb2 as pb
from agentmemory.v1 import decision_service_pb2_grpc


class DecisionServicer(decision_service_pb2_grpc.DecisionServiceServicer):
    def __init__(self, decisions: Decisions, *, response_bytes: int = RESPONSE_MAX_BYTES) -> None:
        self._decisions = decisions
        self._budget = response_bytes

    async def RegisterCardType(
        self, request: pb.RegisterCardTypeRequest, context: ServicerContext
    ) -> pb.RegisterCardTypeResponse:
        card_type, created = await self._decisions.register_card_type(
            current_principal(), convert.card_type_from_proto(request.card_type)
        )
        return pb.RegisterCardTypeResponse(
            card_type=convert.card_type_to_proto(card_type), created=created
        )

    async def RecordDecision(
        self, request: pb.RecordDecisionRequest, context: ServicerContext
    ) -> pb.RecordDecisionResponse:
        decision, created = await self._decisions.record(
            current_principal(), convert.new_decision(request.decision)
        )
        return pb.RecordDecisionResponse(
            decision=convert.decision_to_proto(decision), created=created
        )

    async def GetDecision(
        self, request: pb.GetDecisionRequest, context: ServicerContext
    ) -> pb.GetDecisionResponse:
        decision = await self._decisions.get(
            current_principal(), parse_decision_id("decision_id", request.decision_id)
        )
        return pb.GetDecisionResponse(decision=convert.decision_to_proto(decision))

    async def ListRecentDecisions(
        self, request: pb.ListRecentDecisionsRequest, context: ServicerContext
    ) -> pb.ListRecentDecisionsResponse:
        review = await self._decisions.recent(
            current_principal(),
            agent_id=request.agent_id,
            limit=request.limit,
            include_result=request.include_result,
            card_type=request.card_type,
        )
        return pb.ListRecentDecisionsResponse(
            decisions=fitted_all(
                review.decisions,
                convert.decision_to_proto,
                what="decisions",
                advice="ask for fewer with limit, or leave out include_result",
                budget=self._budget,
            ),
            as_of=timestamp(review.as_of),
        )

    async def ResolveDecision(
        self, request: pb.ResolveDecisionRequest, context: ServicerContext
    ) -> pb.ResolveDecisionResponse:
        decision = await self._decisions.resolve(
            current_principal(),
            parse_decision_id("decision_id", request.decision_id),
            convert.resolution_status_from_proto(request.resolution_status),
        )
        return pb.ResolveDecisionResponse(decision=convert.decision_to_proto(decision))

    async def RecordReexamination(
        self, request: pb.RecordReexaminationRequest, context: ServicerContext
    ) -> pb.RecordReexaminationResponse:
        item, created = await self._decisions.reexamine(
            current_principal(), convert.new_reexamination(request)
        )
        return pb.RecordReexaminationResponse(
            reexamination=convert.reexamination_to_proto(item), created=created
        )

    async def ListReexaminations(
        self, request: pb.ListReexaminationsRequest, context: ServicerContext
    ) -> pb.ListReexaminationsResponse:
        items = await self._decisions.reexaminations(
            current_principal(), parse_decision_id("parent_decision_id", request.parent_decision_id)
        )
        return pb.ListReexaminationsResponse(
            reexaminations=fitted_all(
                items,
                convert.reexamination_to_proto,
                what="re-examinations",
                advice="a decision's re-examinations are listed in one response",
                budget=self._budget,
            )
        )

    async def RenderReexaminationPrompt(
        self, request: pb.RenderReexaminationPromptRequest, context: ServicerContext
    ) -> pb.RenderReexaminationPromptResponse:
        rendered = await self._decisions.reexamination_prompt(
            current_principal(), parse_decision_id("decision_id", request.decision_id)
        )
        return pb.RenderReexaminationPromptResponse(
            prompt=rendered.prompt,
            decision_id=str(rendered.decision.id),
            card_type=rendered.card_type.name,
            allowed_actions=list(rendered.allowed_actions),
            reexamination_count=rendered.reexamination_count,
        )
