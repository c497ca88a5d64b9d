"""DecisionService: proto in, use case, proto out."""

from __future__ import annotations

from agent_memory.api import decision_convert as convert
from agent_memory.api.convert import RESPONSE_MAX_BYTES, fitted_all, timestamp
from agent_memory.domain.decisions import parse_decision_id
from agent_memory.domain.identity import Principal
from agent_memory.service.decisions import Decisions
from agentmemory.v1 import decision_service_pb2 as pb


class DecisionServicer:
    def __init__(self, decisions: Decisions, *, response_bytes: int = RESPONSE_MAX_BYTES) -> None:
        self._decisions = decisions
        self._budget = response_bytes

    async def RegisterCardType(
        self, caller: Principal, request: pb.RegisterCardTypeRequest
    ) -> pb.RegisterCardTypeResponse:
        card_type, created = await self._decisions.register_card_type(
            caller, convert.card_type_from_proto(request.card_type)
        )
        return pb.RegisterCardTypeResponse(
            card_type=convert.card_type_to_proto(card_type), created=created
        )

    async def RecordDecision(
        self, caller: Principal, request: pb.RecordDecisionRequest
    ) -> pb.RecordDecisionResponse:
        decision, created = await self._decisions.record(
            caller, convert.new_decision(request.decision)
        )
        return pb.RecordDecisionResponse(
            decision=convert.decision_to_proto(decision), created=created
        )

    async def GetDecision(
        self, caller: Principal, request: pb.GetDecisionRequest
    ) -> pb.GetDecisionResponse:
        decision = await self._decisions.get(
            caller, parse_decision_id("decision_id", request.decision_id)
        )
        return pb.GetDecisionResponse(decision=convert.decision_to_proto(decision))

    async def ListRecentDecisions(
        self, caller: Principal, request: pb.ListRecentDecisionsRequest
    ) -> pb.ListRecentDecisionsResponse:
        review = await self._decisions.recent(
            caller,
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
        self, caller: Principal, request: pb.ResolveDecisionRequest
    ) -> pb.ResolveDecisionResponse:
        decision = await self._decisions.resolve(
            caller,
            parse_decision_id("decision_id", request.decision_id),
            convert.resolution_status_from_proto(request.resolution_status),
        )
        return pb.ResolveDecisionResponse(decision=convert.decision_to_proto(decision))

    async def RecordReexamination(
        self, caller: Principal, request: pb.RecordReexaminationRequest
    ) -> pb.RecordReexaminationResponse:
        item, created = await self._decisions.reexamine(caller, convert.new_reexamination(request))
        return pb.RecordReexaminationResponse(
            reexamination=convert.reexamination_to_proto(item), created=created
        )

    async def ListReexaminations(
        self, caller: Principal, request: pb.ListReexaminationsRequest
    ) -> pb.ListReexaminationsResponse:
        items = await self._decisions.reexaminations(
            caller, parse_decision_id("parent_decision_id", request.parent_decision_id)
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
        self, caller: Principal, request: pb.RenderReexaminationPromptRequest
    ) -> pb.RenderReexaminationPromptResponse:
        rendered = await self._decisions.reexamination_prompt(
            caller, parse_decision_id("decision_id", request.decision_id)
        )
        return pb.RenderReexaminationPromptResponse(
            prompt=rendered.prompt,
            decision_id=str(rendered.decision.id),
            card_type=rendered.card_type.name,
            allowed_actions=list(rendered.allowed_actions),
            reexamination_count=rendered.reexamination_count,
        )
