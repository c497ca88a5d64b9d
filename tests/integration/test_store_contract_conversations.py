"""The conversation listing's contract, run against PostgreSQL and the in-memory store:
most recently updated first, pages that go on after a position, the basic view
without messages, and tenants apart. (Storing snapshots is in
``test_store_contract.py``.)"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import Conversation, ConversationMessage, StoredConversation
from agent_memory.store.repositories import Store, Tx
from tests.integration.conftest import Body


def snapshot(conversation_id: str, *said: str, provider: str = "p") -> Conversation:
    messages = tuple(
        ConversationMessage("user", text, f"m{n}", None) for n, text in enumerate(said)
    )
    return Conversation(provider, conversation_id, messages, ('{"type": "text"}',))


def keys(page: list[StoredConversation]) -> list[str]:
    return [f"{c.conversation.provider}/{c.conversation.conversation_id}" for c in page]


async def every_page(tx: Tx, size: int, *, full: bool) -> list[list[str]]:
    pages: list[list[str]] = []
    page = await tx.conversations.list_page(after=None, limit=size, full=full)
    while page:
        pages.append(keys(page))
        last = page[-1]
        position = (last.updated_at, last.conversation.provider, last.conversation.conversation_id)
        page = await tx.conversations.list_page(after=position, limit=size, full=full)
    return pages


def test_conversations_are_listed_most_recently_updated_first_page_by_page(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.conversations.put(snapshot("a", "hi"))
            await tx.conversations.put(snapshot("b", "hello"))
            await tx.conversations.put(snapshot("c", "hey"))
            # Growing a conversation makes it the most recently updated.
            await tx.conversations.put(snapshot("a", "hi", "again"))
            pages = await every_page(tx, 2, full=False)
            full = await tx.conversations.list_page(after=None, limit=10, full=True)
            basic = await tx.conversations.list_page(after=None, limit=10, full=False)
            stored = await tx.conversations.get("p", "a")
        assert pages == [["p/a", "p/c"], ["p/b"]]
        assert full[0] == stored
        assert full[0].conversation == snapshot("a", "hi", "again")
        assert [(c.message_count, c.raw_event_count) for c in basic] == [(2, 1), (1, 1), (1, 1)]
        assert all(c.conversation.messages == () for c in basic)
        assert all(c.conversation.raw_events == () for c in basic)
        assert [(c.created_at, c.updated_at) for c in basic] == [
            (c.created_at, c.updated_at) for c in full
        ]

    scenario(body)


def test_conversations_updated_in_one_instant_are_ordered_by_provider_and_id(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    async def body(store: Store) -> None:
        async with store.transaction(caller) as tx:
            # Created in one transaction: they share its time.
            for provider, conversation_id in (("p", "b"), ("q", "a"), ("p", "c"), ("p", "a")):
                await tx.conversations.put(snapshot(conversation_id, "x", provider=provider))
        async with store.connection(caller) as tx:
            pages = await every_page(tx, 3, full=True)
        assert pages == [["q/a", "p/c", "p/b"], ["p/a"]]

    scenario(body)


def test_a_tenant_never_lists_another_tenants_conversations(
    scenario: Callable[[Body], None], caller: Principal
) -> None:
    intruder = Principal(f"other-{uuid.uuid4().hex[:8]}", "mallory")

    async def body(store: Store) -> None:
        async with store.connection(caller) as tx:
            await tx.conversations.put(snapshot("a", "mine"))
        async with store.connection(intruder) as tx:
            assert await tx.conversations.list_page(after=None, limit=10, full=True) == []
            await tx.conversations.put(snapshot("b", "theirs"))
        async with store.connection(caller) as tx:
            mine = await tx.conversations.list_page(after=None, limit=10, full=True)
        assert keys(mine) == ["p/a"]

    scenario(body)
