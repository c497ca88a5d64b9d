"""Conversation snapshots: one row per (provider, conversation id), replaced in place."""

from __future__ import annotations

from typing import LiteralString

from psycopg.types.json import Jsonb

from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation
from agent_memory.store.repositories import ConversationRepository
from agent_memory.store.sql import Connection, execute

_PUT: LiteralString = """
INSERT INTO conversations (tenant_id, provider, conversation_id, messages, message_count)
VALUES (%(tenant_id)s, %(provider)s, %(conversation_id)s, %(messages)s, %(message_count)s)
ON CONFLICT (tenant_id, provider, conversation_id) DO UPDATE
SET messages = excluded.messages, message_count = excluded.message_count,
    updated_at = clock_timestamp()
"""


class PgConversations(ConversationRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = principal.tenant_id

    async def put(self, conversation: Conversation) -> None:
        messages = [
            {
                "role": m.role,
                "content": m.content,
                "provider_message_id": m.provider_message_id,
                "created_at": m.created_at.isoformat() if m.created_at else None,
            }
            for m in conversation.messages
        ]
        await execute(
            self._conn,
            _PUT,
            {
                "tenant_id": self._tenant,
                "provider": conversation.provider,
                "conversation_id": conversation.conversation_id,
                "messages": Jsonb(messages),
                "message_count": len(messages),
            },
        )
