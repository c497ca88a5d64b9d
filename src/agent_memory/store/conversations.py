"""Conversation snapshots: one row per (provider, conversation id), updated in place.

A later snapshot replaces an earlier one, except that no message a stored grounding
points into (by position) is ever lost: a shorter snapshot keeps the stored messages
past its end up to the last grounded one, and a snapshot that changes the content
of a grounded message is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any, LiteralString

from psycopg.types.json import Jsonb

from agent_memory.domain.errors import FailedPrecondition
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage
from agent_memory.store.memories import live
from agent_memory.store.repositories import ConversationRepository
from agent_memory.store.sql import Connection, execute, fetch_all, fetch_one

_KEY: LiteralString = """
tenant_id = %(tenant_id)s AND provider = %(provider)s AND conversation_id = %(conversation_id)s"""

_LOCK: LiteralString = "SELECT message_count FROM conversations WHERE" + _KEY + " FOR UPDATE"

_INSERT: LiteralString = """
INSERT INTO conversations (tenant_id, provider, conversation_id, messages, message_count)
VALUES (%(tenant_id)s, %(provider)s, %(conversation_id)s, %(messages)s, %(message_count)s)
ON CONFLICT (tenant_id, provider, conversation_id) DO NOTHING
"""

_UPDATE: LiteralString = (
    """
UPDATE conversations
SET messages = %(messages)s, message_count = %(message_count)s, updated_at = clock_timestamp()
WHERE"""
    + _KEY
)

# The stored messages the new snapshot would lose: those past its end, and those whose
# content it changes. Zero rows in the common case (the conversation only grew).
_LOST: LiteralString = """
SELECT (s.ordinal - 1)::int AS position, s.message
FROM conversations AS c
CROSS JOIN LATERAL jsonb_array_elements(c.messages) WITH ORDINALITY AS s(message, ordinal)
WHERE c.tenant_id = %(tenant_id)s AND c.provider = %(provider)s
  AND c.conversation_id = %(conversation_id)s
  AND (s.ordinal > %(message_count)s
       OR s.message ->> 'content'
          IS DISTINCT FROM %(messages)s::jsonb -> (s.ordinal::int - 1) ->> 'content')
ORDER BY s.ordinal
"""

# Which of those positions a grounding of another memory of the conversation points into.
_GROUNDED: LiteralString = f"""
SELECT DISTINCT g.message_position AS position
FROM memory_groundings AS g
JOIN memories AS m ON m.tenant_id = g.tenant_id AND m.id = g.memory_id
WHERE g.tenant_id = %(tenant_id)s AND {live("m")}
  AND m.conversation_provider = %(provider)s AND m.conversation_id = %(conversation_id)s
  AND g.message_position = ANY (%(positions)s::int[])
  AND (%(writer)s::uuid IS NULL OR g.memory_id <> %(writer)s::uuid)
"""

_ATTEMPTS = 2  # a concurrent first snapshot of the same conversation: lock it and merge


def keep_grounded(
    new: Conversation, lost: Mapping[int, ConversationMessage], grounded: Collection[int]
) -> Conversation:
    """The snapshot to store for ``new``, given the stored messages it would lose (by
    position) and the positions stored groundings point into.

    Raises:
        FailedPrecondition: ``new`` changes the content of a grounded message (reason
            ``GROUNDED_MESSAGE_CHANGED``).
    """
    kept = sorted(p for p in grounded if p in lost)
    changed = [p for p in kept if p < len(new.messages)]
    if changed:
        raise FailedPrecondition(
            f"message {changed[0]} of conversation {new.conversation_id!r} is grounded by "
            "a stored memory and this snapshot changes it; send the earlier messages "
            "unchanged, or use a new conversation id",
            reason="GROUNDED_MESSAGE_CHANGED",
            metadata={
                "provider": new.provider,
                "conversation_id": new.conversation_id,
                "message_position": str(changed[0]),
            },
        )
    if not kept:
        return new
    tail = tuple(lost[p] for p in range(len(new.messages), kept[-1] + 1))
    return Conversation(new.provider, new.conversation_id, new.messages + tail)


def _message_json(m: ConversationMessage) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        "provider_message_id": m.provider_message_id,
        "created_at": m.created_at.isoformat() if m.created_at else None,
    }


def _message(raw: Mapping[str, Any]) -> ConversationMessage:
    created = raw.get("created_at")
    return ConversationMessage(
        role=raw.get("role") or "",
        content=raw.get("content") or "",
        provider_message_id=raw.get("provider_message_id") or "",
        created_at=datetime.fromisoformat(created) if created else None,
    )


class PgConversations(ConversationRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = principal.tenant_id

    async def put(self, conversation: Conversation, *, writer: uuid.UUID | None = None) -> None:
        key = {
            "tenant_id": self._tenant,
            "provider": conversation.provider,
            "conversation_id": conversation.conversation_id,
        }
        for _ in range(_ATTEMPTS):
            if await fetch_one(self._conn, _LOCK, key) is None:
                if await execute(self._conn, _INSERT, {**key, **_snapshot(conversation)}):
                    return
                continue  # inserted meanwhile by a concurrent Memorize: lock it and merge
            lost = {
                row["position"]: _message(row["message"])
                for row in await fetch_all(self._conn, _LOST, {**key, **_snapshot(conversation)})
            }
            grounded: list[int] = []
            if lost:
                params = {**key, "positions": sorted(lost), "writer": writer}
                grounded = [r["position"] for r in await fetch_all(self._conn, _GROUNDED, params)]
            kept = keep_grounded(conversation, lost, grounded)
            await execute(self._conn, _UPDATE, {**key, **_snapshot(kept)})
            return
        raise AssertionError("a conversation row that is neither there nor insertable")


def _snapshot(conversation: Conversation) -> dict[str, Any]:
    messages = [_message_json(m) for m in conversation.messages]
    return {"messages": Jsonb(messages), "message_count": len(messages)}
