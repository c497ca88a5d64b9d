"""BlockService: full-replacement blocks with compare-and-set writes."""

from __future__ import annotations

from agentmemory.v1 import block_service_pb2_grpc


class BlockServicer(block_service_pb2_grpc.BlockServiceServicer):
    """Every RPC answers UNIMPLEMENTED until blocks are built."""
