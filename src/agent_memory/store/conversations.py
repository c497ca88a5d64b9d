"""Conversation snapshots: one row per (provider, conversation id), updated in place.

A later snapshot replaces an earlier one, except that no message and no raw event a
stored grounding points into (by position, by index) is ever lost: a shorter snapshot
keeps the stored messages (raw events) past its end up to the last grounded one, and
a snapshot that changes the content of a grounded message (raw event) is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, LiteralString, TypeVar

from psycopg.types.json import Jsonb

from agent_memory.domain.errors import FailedPrecondition
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage, StoredConversation
from agent_memory.store.columns import insert_columns, insert_values, output
from agent_memory.store.memory_sql import live
from agent_memory.store.models import ConversationRow
from agent_memory.store.repositories import ConversationRepository
from agent_memory.store.sql import Connection, execute, fetch_all, fetch_one

_KEY: LiteralString = """
tenant_id = %(tenant_id)s AND provider = %(provider)s AND conversation_id = %(conversation_id)s"""

_LOCK: LiteralString = "SELECT message_count FROM conversations WHERE" + _KEY + " FOR UPDATE"

_INSERT: LiteralString = f"""
INSERT INTO conversations ({insert_columns(ConversationRow)})
VALUES ({insert_values(ConversationRow)})
ON CONFLICT (tenant_id, provider, conversation_id) DO NOTHING
"""

_UPDATE: LiteralString = (
    """
UPDATE conversations
SET messages = %(messages)s, message_count = %(message_count)s,
    raw_events = %(raw_events)s, raw_event_count = %(raw_event_count)s,
    updated_at = clock_timestamp()
WHERE"""
    + _KEY
    # A retried Memorize sends the same snapshot: nothing to write, and no new place in
    # the listing.
    + """
  AND (messages, raw_events) IS DISTINCT FROM (%(messages)s::jsonb, %(raw_events)s::jsonb)"""
)

_GET: LiteralString = (
    f"SELECT {output(ConversationRow, '', full=True)} FROM conversations WHERE" + _KEY
)

# Most recently updated first; the key breaks ties, in the same direction so that one
# backward scan of ix_conversations_updated serves the page.
_PAGE: LiteralString = """
FROM conversations
WHERE tenant_id = %(tenant_id)s
  AND (%(after)s::boolean IS NOT TRUE
       OR (updated_at, provider, conversation_id)
          < (%(updated_at)s, %(provider)s, %(conversation_id)s))
ORDER BY updated_at DESC, provider DESC, conversation_id DESC
LIMIT %(limit)s
"""
_PAGE_FULL: LiteralString = f"SELECT {output(ConversationRow, '', full=True)}" + _PAGE
# The basic view reads no message and no raw event.
_PAGE_BASIC: LiteralString = f"SELECT {output(ConversationRow, '')}" + _PAGE

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

# The same for raw events.
_LOST_RAW: LiteralString = """
SELECT (s.ordinal - 1)::int AS position, s.event
FROM conversations AS c
CROSS JOIN LATERAL jsonb_array_elements_text(c.raw_events) WITH ORDINALITY AS s(event, ordinal)
WHERE c.tenant_id = %(tenant_id)s AND c.provider = %(provider)s
  AND c.conversation_id = %(conversation_id)s
  AND (s.ordinal > %(raw_event_count)s
       OR s.event IS DISTINCT FROM %(raw_events)s::jsonb ->> (s.ordinal::int - 1))
ORDER BY s.ordinal
"""

_OTHERS_GROUNDINGS: LiteralString = f"""
FROM memory_groundings AS g
JOIN memories AS m ON m.tenant_id = %(tenant_id)s AND m.id = g.memory_id
WHERE g.tenant_id = %(tenant_id)s AND {live("m")}
  AND m.conversation_provider = %(provider)s AND m.conversation_id = %(conversation_id)s
  AND (%(writer)s::uuid IS NULL OR g.memory_id <> %(writer)s::uuid)
"""

# Which of those positions a grounding of another memory of the conversation points
# into; a grounding that names a raw event and no message field points at no message.
_GROUNDED: LiteralString = (
    "SELECT DISTINCT g.message_position AS position"
    + _OTHERS_GROUNDINGS
    + """
  AND g.message_position = ANY (%(positions)s::int[])
  AND (g.raw_event_index IS NULL OR g.message_position <> 0 OR g.start_character <> 0
       OR g.end_character <> 0)
"""
)

_GROUNDED_RAW: LiteralString = (
    "SELECT DISTINCT g.raw_event_index AS position"
    + _OTHERS_GROUNDINGS
    + "  AND g.raw_event_index = ANY (%(positions)s::int[])\n"
)

E = TypeVar("E")

_ATTEMPTS = 2  # a concurrent first snapshot of the same conversation: lock it and merge


def keep_grounded(
    new: Conversation,
    lost: Mapping[int, ConversationMessage],
    grounded: Collection[int],
    lost_raw: Mapping[int, str] | None = None,
    grounded_raw: Collection[int] = (),
) -> Conversation:
    """The snapshot to store for ``new``, given the stored messages (and raw events) it
    would lose, by position, and the positions stored groundings point into.

    Raises:
        FailedPrecondition: ``new`` changes the content of a grounded message (reason
            ``GROUNDED_MESSAGE_CHANGED``) or a grounded raw event (reason
            ``GROUNDED_RAW_EVENT_CHANGED``).
    """
    messages = _kept(new, new.messages, lost, grounded, "message")
    raw_events = _kept(new, new.raw_events, lost_raw or {}, grounded_raw, "raw event")
    if messages is new.messages and raw_events is new.raw_events:
        return new
    return Conversation(new.provider, new.conversation_id, messages, raw_events)


def _kept(
    new: Conversation,
    items: tuple[E, ...],
    lost: Mapping[int, E],
    grounded: Collection[int],
    what: str,
) -> tuple[E, ...]:
    """``items`` with the stored tail it would lose kept up to the last grounded one."""
    kept = sorted(p for p in grounded if p in lost)
    changed = [p for p in kept if p < len(items)]
    if changed:
        reason = "GROUNDED_MESSAGE_CHANGED" if what == "message" else "GROUNDED_RAW_EVENT_CHANGED"
        position = "message_position" if what == "message" else "raw_event_index"
        raise FailedPrecondition(
            f"{what} {changed[0]} of conversation {new.conversation_id!r} is grounded by "
            f"a stored memory and this snapshot changes it; send the earlier {what}s "
            "unchanged, or use a new conversation id",
            reason=reason,
            metadata={
                "provider": new.provider,
                "conversation_id": new.conversation_id,
                position: str(changed[0]),
            },
        )
    if not kept:
        return items
    return items + tuple(lost[p] for p in range(len(items), kept[-1] + 1))


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


def conversation_from_row(row: Mapping[str, Any]) -> StoredConversation:
    messages: Sequence[Mapping[str, Any]] = row["messages"] or ()
    raw_events: Sequence[str] = row["raw_events"] or ()
    return StoredConversation(
        Conversation(
            row["provider"],
            row["conversation_id"],
            tuple(_message(m) for m in messages),
            tuple(raw_events),
        ),
        message_count=row["message_count"],
        raw_event_count=row["raw_event_count"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class PgConversations(ConversationRepository):
    def __init__(self, conn: Connection, principal: Principal) -> None:
        self._conn = conn
        self._tenant = principal.tenant_id

    async def put(
        self, conversation: Conversation, *, writer: uuid.UUID | None = None
    ) -> Conversation:
        key = {
            "tenant_id": self._tenant,
            "provider": conversation.provider,
            "conversation_id": conversation.conversation_id,
        }
        for _ in range(_ATTEMPTS):
            if await fetch_one(self._conn, _LOCK, key) is None:
                if await execute(self._conn, _INSERT, {**key, **snapshot_columns(conversation)}):
                    return conversation
                continue  # inserted meanwhile by a concurrent Memorize: lock it and merge
            params = {**key, **snapshot_columns(conversation)}
            lost = {
                row["position"]: _message(row["message"])
                for row in await fetch_all(self._conn, _LOST, params)
            }
            lost_raw: dict[int, str] = {
                row["position"]: row["event"]
                for row in await fetch_all(self._conn, _LOST_RAW, params)
            }
            grounded = await self._grounded(_GROUNDED, key, lost, writer)
            grounded_raw = await self._grounded(_GROUNDED_RAW, key, lost_raw, writer)
            kept = keep_grounded(conversation, lost, grounded, lost_raw, grounded_raw)
            await execute(self._conn, _UPDATE, {**key, **snapshot_columns(kept)})
            return kept
        raise AssertionError("a conversation row that is neither there nor insertable")

    async def _grounded(
        self,
        statement: LiteralString,
        key: Mapping[str, Any],
        lost: Collection[int],
        writer: uuid.UUID | None,
    ) -> list[int]:
        if not lost:
            return []
        params = {**key, "positions": sorted(lost), "writer": writer}
        return [r["position"] for r in await fetch_all(self._conn, statement, params)]

    async def get(self, provider: str, conversation_id: str) -> StoredConversation | None:
        params = {
            "tenant_id": self._tenant,
            "provider": provider,
            "conversation_id": conversation_id,
        }
        row = await fetch_one(self._conn, _GET, params)
        return conversation_from_row(row) if row is not None else None

    async def list_page(
        self,
        *,
        after: tuple[datetime, str, str] | None,
        limit: int,
        full: bool,
    ) -> list[StoredConversation]:
        updated_at, provider, conversation_id = after or (None, None, None)
        params = {
            "tenant_id": self._tenant,
            "after": after is not None,
            "updated_at": updated_at,
            "provider": provider,
            "conversation_id": conversation_id,
            "limit": limit,
        }
        rows = await fetch_all(self._conn, _PAGE_FULL if full else _PAGE_BASIC, params)
        return [conversation_from_row(row) for row in rows]


def snapshot_columns(conversation: Conversation) -> dict[str, Any]:
    messages = [_message_json(m) for m in conversation.messages]
    return {
        "messages": Jsonb(messages),
        "message_count": len(messages),
        "raw_events": Jsonb(list(conversation.raw_events)),
        "raw_event_count": len(conversation.raw_events),
    }
