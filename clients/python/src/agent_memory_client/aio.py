"""The asyncio client: :class:`AsyncMemoryClient`, the same methods as
:class:`~agent_memory_client.MemoryClient`, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from agent_memory_client import types
from agent_memory_client._methods import AsyncMemoryMethods
from agent_memory_client._ops import BlockLabelName
from agent_memory_client._transport import AsyncRecallStream
from agent_memory_client.errors import BlockConflict, NotFound
from agent_memory_client.sync import (
    DEFAULT_CAS_ATTEMPTS,
    INDEXED_FIRST_ASK,
    INDEXED_LAST_ASK,
    nothing_waits,
)

__all__ = ["AsyncMemoryClient", "AsyncRecallStream"]


class AsyncMemoryClient(AsyncMemoryMethods):
    """An asyncio client of the agent-memory service; the arguments and methods are
    those of :class:`~agent_memory_client.MemoryClient`, awaited (``async for`` over
    listings and ``recall``). Create it inside the event loop that uses it."""

    async def update_block(
        self,
        label: BlockLabelName,
        change: Callable[[str], str] | Callable[[str], Awaitable[str]],
        *,
        agent_id: str | None = None,
        workspace_id: str | None = None,
        attempts: int = DEFAULT_CAS_ATTEMPTS,
        timeout: float | None = None,
    ) -> types.Block:
        """See :meth:`MemoryClient.update_block`; ``change`` may be a coroutine
        function."""
        for attempt in range(1, attempts + 1):
            try:
                block = await self.get_block(
                    label, agent_id=agent_id, workspace_id=workspace_id, timeout=timeout
                )
                current, expected = block.content, block.updated_at
            except NotFound:
                block, current, expected = None, "", None
            changed = change(current)
            content = changed if isinstance(changed, str) else await changed
            if block is not None and content == current:
                return block
            try:
                return await self.write_block(
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

    async def wait_until_indexed(
        self, within: float = 60.0, *, memory_id: str | None = None
    ) -> bool:
        """See :meth:`MemoryClient.wait_until_indexed`."""
        deadline = time.monotonic() + within
        pause = INDEXED_FIRST_ASK
        while True:
            if await self._indexed(memory_id):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, INDEXED_LAST_ASK)

    async def _indexed(self, memory_id: str | None) -> bool:
        """See :meth:`MemoryClient._indexed`."""
        if memory_id is None:
            return nothing_waits(await self.get_recall_status())
        if (await self.get_memory(memory_id)).embedded is not False:
            return True
        return (await self.get_recall_status()).indexing is None
