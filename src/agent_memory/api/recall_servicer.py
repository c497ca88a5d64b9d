"""RecallService: ranked archival recall and prompt rendering."""

from __future__ import annotations

from agentmemory.v1 import recall_service_pb2_grpc


class RecallServicer(recall_service_pb2_grpc.RecallServiceServicer):
    """Every RPC answers UNIMPLEMENTED until recall is built."""
