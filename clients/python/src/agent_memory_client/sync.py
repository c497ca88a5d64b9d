"""The blocking client: :class:`MemoryClient`."""

from __future__ import annotations

import time
from collections.abc import Callable

from agent_memory_client import types
from agent_memory_client._methods import MemoryMethods
from agent_memory_client._ops import BlockLabelName
from agent_memory_client._transport import RecallStream
from agent_memory_client.errors import BlockConflict, NotFound

__all__ = ["DEFAULT_CAS_ATTEMPTS", "MemoryClient", "RecallStream"]

DEFAULT_CAS_ATTEMPTS = 5
# How often wait_until_indexed asks, at first and at most (it backs off in between).
INDEXED_FIRST_ASK, INDEXED_LAST_ASK = 0.2, 2.0


def nothing_waits(status: types.RecallStatus) -> bool:
    """Whether a recall status says nothing of the caller's tenant waits for a vector
    (recall by words only has nothing to wait for)."""
    return status.indexing is None or status.indexing.waiting_count == 0


class MemoryClient(MemoryMethods):
    """A blocking client of the agent-memory service.

    Args:
        target: ``HOST:PORT`` of the service (default ``127.0.0.1:50051``).
        api_key: the key to call with (``authorization: Bearer``).
        tenant_id, user_id: who the caller is, for a server in unauthenticated
            local mode (``--insecure-local``); not with ``api_key``.
        tls: ``True`` for TLS with the system's roots, or a :class:`TLS`.
        timeout: the deadline of each call, in seconds, unless a call says otherwise.
        attempts: how many times a call safe to repeat is tried when the service is
            UNAVAILABLE, with exponential backoff (1 turns retries off; at most 5).
        options: extra gRPC channel arguments.

    It has a method for every RPC of the service, named as the RPC in snake_case
    (``_ops.py`` declares them); :meth:`update_block` adds compare-and-set with
    retries. Every failed call raises a subclass of
    :class:`~agent_memory_client.errors.AgentMemoryError`.
    """

    def update_block(
        self,
        label: BlockLabelName,
        change: Callable[[str], str],
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        attempts: int = DEFAULT_CAS_ATTEMPTS,
        timeout: float | None = None,
    ) -> types.Block:
        """Read the block, apply ``change`` to its content ("" when absent) and write
        the result compare-and-set; on a conflict, read again and re-apply, up to
        ``attempts`` times in all, then raise the last BlockConflict. With
        ``workspace_id``, the workspace's block, which other users of the tenant write
        too."""
        for attempt in range(1, attempts + 1):
            try:
                block = self.get_block(
                    label, agent_id=agent_id, workspace_id=workspace_id, timeout=timeout
                )
                current, expected = block.content, block.updated_at
            except NotFound:
                block, current, expected = None, "", None
            content = change(current)
            if block is not None and content == current:
                return block
            try:
                return self.write_block(
                    label,
                    content,
                    agent_id=agent_id,
                    workspace_id=workspace_id,
                    expected_updated_at=expected,
                    timeout=timeout,
                )
            except BlockConflict:
                if attempt == attempts:
                    raise
        msg = f"attempts must be at least 1, not {attempts!r}"
        raise ValueError(msg)

    def wait_until_indexed(self, within: float = 60.0, *, memory_id: str | None = None) -> bool:
        """Wait until what the caller's tenant wrote is findable by meaning too: no
        archival line or memory of the tenant waits for the background indexer (words
        find a write at once). True once nothing waits, False if something still does
        after ``within`` seconds. Asks ``get_recall_status`` with a growing pause.

        With ``memory_id``, waits for that memory alone: until it says it is
        embedded (``Memory.embedded``), or recall ranks by words only (nothing is
        embedded there); asks ``get_memory``."""
        deadline = time.monotonic() + within
        pause = INDEXED_FIRST_ASK
        while True:
            if self._indexed(memory_id):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(pause * 2, INDEXED_LAST_ASK)

    def _indexed(self, memory_id: str | None) -> bool:
        if memory_id is None:
            return nothing_waits(self.get_recall_status())
        if self.get_memory(memory_id).embedded is not False:
            return True
        return self.get_recall_status().indexing is None
