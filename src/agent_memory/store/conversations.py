"""Conversation snapshots: one row per (provider, conversation id), updated in place."""

from __future__ import annotations

from sqlalchemy import func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from agent_memory.domain.memorize import Conversation
from agent_memory.store.models import ConversationRow


async def upsert(session: AsyncSession, *, tenant_id: str, conversation: Conversation) -> None:
    messages = [
        {
            "role": m.role,
            "content": m.content,
            "provider_message_id": m.provider_message_id,
            "created_at": m.created_at.isoformat() if m.created_at else None,
        }
        for m in conversation.messages
    ]
    stmt = insert(ConversationRow).values(
        tenant_id=tenant_id,
        provider=conversation.provider,
        conversation_id=conversation.conversation_id,
        messages=messages,
        message_count=len(messages),
    )
    await session.execute(
        stmt.on_conflict_do_update(
            index_elements=[
                ConversationRow.tenant_id,
                ConversationRow.provider,
                ConversationRow.conversation_id,
            ],
            set_={
                "messages": stmt.excluded.messages,
                "message_count": stmt.excluded.message_count,
                "updated_at": func.clock_timestamp(),
            },
        )
    )
