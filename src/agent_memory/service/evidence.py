"""Evidence that reads back: the conversation snapshots Memorize kept, and queued
extraction passes with what they did once done."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from agent_memory.domain.errors import FieldViolation, NotFound, check
from agent_memory.domain.extraction import ExtractionJob
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import (
    CONVERSATION_ID_MAX_CHARS,
    DEFAULT_PROVIDER,
    PROVIDER_MAX_CHARS,
    StoredConversation,
)
from agent_memory.domain.paging import Page, page_size, paged, refuse_page_token
from agent_memory.domain.text_rules import text_violations
from agent_memory.service.page_tokens import page_tokens
from agent_memory.store.repositories import Store

# Whole snapshots are large (up to SNAPSHOT_MAX_BYTES of text each): a full page holds few.
FULL_PAGE_DEFAULT = 5
FULL_PAGE_MAX = 10


class EvidenceReads:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def conversation(
        self, principal: Principal, *, provider: str, conversation_id: str
    ) -> StoredConversation:
        """The snapshot stored under (provider, id), an empty provider meaning
        ``unknown`` as in Memorize, with its messages and raw events.

        Raises:
            InvalidArgument: a malformed provider or conversation id.
            NotFound: the caller's tenant has no such snapshot.
        """
        violations = text_violations(
            "conversation_id", conversation_id, max_chars=CONVERSATION_ID_MAX_CHARS
        )
        violations += text_violations(
            "provider", provider, max_chars=PROVIDER_MAX_CHARS, min_chars=0
        )
        check(violations)
        provider = provider or DEFAULT_PROVIDER
        async with self._store.connection(principal) as tx:
            stored = await tx.conversations.get(provider, conversation_id)
        if stored is None:
            raise NotFound(
                f"no conversation {conversation_id!r} of provider {provider!r}",
                reason="CONVERSATION_NOT_FOUND",
                metadata={"provider": provider, "conversation_id": conversation_id},
            )
        return stored

    async def conversations(
        self, principal: Principal, *, size: int, token: str, full: bool
    ) -> Page[StoredConversation]:
        """The tenant's snapshots, most recently updated first; messages and raw events
        only when ``full``.

        Raises: InvalidArgument — a bad page size or token."""
        limit = (
            page_size(size, default=FULL_PAGE_DEFAULT, maximum=FULL_PAGE_MAX)
            if full
            else (page_size(size))
        )
        view = "full" if full else "basic"
        tokens = await page_tokens(
            self._store, principal, token, owner=[], listing=["conversations", view]
        )
        raw = tokens.open(token, arity=3)
        after: tuple[datetime, str, str] | None = None
        if raw is not None:
            try:
                after = _conversation_position(raw)
            except ValueError:
                refuse_page_token()
        async with self._store.connection(principal) as tx:
            rows = await tx.conversations.list_page(after=after, limit=limit + 1, full=full)
        return paged(
            rows,
            limit,
            tokens,
            lambda c: [
                c.updated_at.isoformat(),
                c.conversation.provider,
                c.conversation.conversation_id,
            ],
        )

    async def extraction_job(self, principal: Principal, job_id: str) -> ExtractionJob:
        """A queued pass by the id ExtractMemories returned.

        Raises:
            InvalidArgument: the id is empty or not a job id (a UUID).
            NotFound: the caller's tenant has no such job.
        """
        parsed = _job_id(job_id)
        async with self._store.connection(principal) as tx:
            job = await tx.jobs.get(parsed)
        if job is None:
            raise NotFound(
                f"extraction job {parsed} not found",
                reason="EXTRACTION_JOB_NOT_FOUND",
                metadata={"job_id": str(parsed)},
            )
        return job


def _job_id(raw: str) -> uuid.UUID:
    if not raw:
        check([FieldViolation("job_id", "must not be empty", "REQUIRED")])
    try:
        return uuid.UUID(raw)
    except ValueError:
        check([FieldViolation("job_id", "must be an extraction job id (a UUID)", "INVALID_ID")])
        raise  # unreachable: check() raised


def _conversation_position(raw: list[Any]) -> tuple[datetime, str, str]:
    at, provider, conversation_id = raw
    if not all(isinstance(v, str) for v in raw):
        raise ValueError("not a conversation position")
    updated_at = datetime.fromisoformat(at)
    if updated_at.tzinfo is None:
        raise ValueError("not a conversation position")
    return updated_at, provider, conversation_id
