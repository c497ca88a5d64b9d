"""BlockService: proto in, use case, proto out."""

from __future__ import annotations

from agent_memory.api import block_convert as convert
from agent_memory.api.convert import RESPONSE_MAX_BYTES, fitted_all, fitted_page, optional_time
from agent_memory.domain.identity import Principal
from agent_memory.service.blocks import Blocks, reading_for
from agentmemory.v1 import block_service_pb2 as pb


class BlockServicer:
    def __init__(self, blocks: Blocks, *, response_bytes: int = RESPONSE_MAX_BYTES) -> None:
        self._blocks = blocks
        self._budget = response_bytes

    async def GetBlock(self, caller: Principal, request: pb.GetBlockRequest) -> pb.GetBlockResponse:
        key = convert.request_key(request)
        block = await self._blocks.get(
            reading_for(caller, request.user_id),
            key,
            as_of=optional_time(request, "as_of_time"),
        )
        return pb.GetBlockResponse(block=convert.block_to_proto(block))

    async def ListBlocks(
        self, caller: Principal, request: pb.ListBlocksRequest
    ) -> pb.ListBlocksResponse:
        scope_filter = convert.filter_from_proto(
            request.scope_filter, request.agent_id, request.workspace_id
        )
        blocks = await self._blocks.list(
            reading_for(caller, request.user_id),
            scope_filter=scope_filter,
            agent_id=request.agent_id,
            workspace_id=request.workspace_id,
        )
        return pb.ListBlocksResponse(
            blocks=fitted_all(
                blocks,
                convert.block_to_proto,
                what="blocks",
                advice="narrow the listing with scope_filter, agent_id or workspace_id",
                budget=self._budget,
            )
        )

    async def WriteBlock(
        self, caller: Principal, request: pb.WriteBlockRequest
    ) -> pb.WriteBlockResponse:
        key = convert.request_key(request)
        expected = convert.precondition(request)
        block = await self._blocks.write(caller, key, request.content, expected=expected)
        return pb.WriteBlockResponse(block=convert.block_to_proto(block))

    async def DeleteBlock(
        self, caller: Principal, request: pb.DeleteBlockRequest
    ) -> pb.DeleteBlockResponse:
        key = convert.request_key(request)
        expected = convert.precondition(request)
        await self._blocks.delete(caller, key, expected=expected)
        return pb.DeleteBlockResponse()

    async def ListBlockVersions(
        self, caller: Principal, request: pb.ListBlockVersionsRequest
    ) -> pb.ListBlockVersionsResponse:
        key = convert.request_key(request)
        page = await self._blocks.versions(
            reading_for(caller, request.user_id),
            key,
            size=request.page_size,
            token=request.page_token,
        )
        versions, next_page_token = fitted_page(page, convert.version_to_proto, budget=self._budget)
        return pb.ListBlockVersionsResponse(versions=versions, next_page_token=next_page_token)
