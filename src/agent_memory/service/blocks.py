"""Block use cases: read, list, compare-and-set write, delete, version history."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from agent_memory.config import Settings
from agent_memory.domain.blocks import (
    ANY_ETAG,
    Block,
    BlockKey,
    BlockLabel,
    BlockLimits,
    BlockVersion,
    BlockWrite,
    ExpectedUpdatedAt,
    ScopeFilter,
    content_violations,
    rfc3339,
)
from agent_memory.domain.errors import Conflict, InvalidArgument, NotFound, check
from agent_memory.domain.identity import Principal, Role, require_role
from agent_memory.domain.paging import Page, page_size, paged, refuse_page_token
from agent_memory.domain.screening import refuse_instruction_lines
from agent_memory.domain.text_rules import name_violations
from agent_memory.service.keys import IDENTITY_MAX_CHARS
from agent_memory.service.page_tokens import page_tokens
from agent_memory.store.repositories import Store


def block_limits(settings: Settings) -> BlockLimits:
    return BlockLimits(
        core_max_chars=settings.core_max_chars,
        core_max_entries=settings.core_max_entries,
        archival_max_chars=settings.archival_max_chars,
        versions_kept=settings.block_versions_kept,
    )


def reading_for(principal: Principal, user_id: str) -> Principal:
    """Whose blocks a read reads: the caller's own, or, for an orchestrator, those
    of ``user_id``, another user of its tenant (an orchestrator acts for the users
    of its agents). Writes stay the caller's own.

    Raises:
        InvalidArgument: ``user_id`` is not a user name (field ``user_id``).
        PermissionDenied: reason ``ROLE_FORBIDS``: a reader or editor named another
            user.
    """
    if not user_id or user_id == principal.user_id:
        return principal
    check(name_violations("user_id", user_id, max_chars=IDENTITY_MAX_CHARS))
    require_role(principal, Role.ORCHESTRATOR, "reading another user's blocks")
    return replace(principal, user_id=user_id)


class _Unread(enum.Enum):
    """That a write's screen read no block."""

    UNREAD = enum.auto()


_UNREAD = _Unread.UNREAD


class Blocks:
    def __init__(
        self,
        store: Store,
        limits: BlockLimits,
        *,
        on_written: Callable[[], None] | None = None,
    ) -> None:
        """``on_written`` is told of each archival write (the indexer, to embed the new
        lines soon)."""
        self._store = store
        self._limits = limits
        self._on_written = on_written

    async def get(
        self, principal: Principal, key: BlockKey, *, as_of: datetime | None = None
    ) -> Block:
        """The block, or with ``as_of`` the block as it was then (its version of then).

        Raises: NotFound — the caller has no such block (had none then);
            InvalidArgument, FailedPrecondition — ``as_of`` is in the future, or before
            the history kept."""
        async with self._store.read_at(principal, as_of) as tx:
            block = await tx.blocks.get(key)
        if block is None:
            raise _not_found(key)
        return block

    async def list(
        self,
        principal: Principal,
        *,
        scope_filter: ScopeFilter,
        agent_id: str,
        workspace_id: str = "",
    ) -> list[Block]:
        """The caller's blocks in the filter's scopes; ``agent_id`` narrows agent blocks,
        ``workspace_id`` names the workspace whose blocks are listed (none without it)."""
        async with self._store.connection(principal) as tx:
            return await tx.blocks.select(scope_filter, agent_id, workspace_id)

    async def write(
        self,
        principal: Principal,
        key: BlockKey,
        content: str,
        *,
        expected: ExpectedUpdatedAt | str | None,
    ) -> Block:
        """Replace the whole block, compare-and-set on its ``updated_at``.

        ``expected`` absent creates the block only if it does not exist; present,
        it replaces the block only if it was last written at exactly that time;
        :data:`ANY_ETAG`, it replaces the block as it is now, if it exists.
        The version, the history and (for archival blocks) the lines change in
        the same statement. New and changed lines are embedded later, in the
        background: the write never waits for a model.

        Raises:
            InvalidArgument: content over the label's limits or with NUL characters
                (reasons ``TOO_LONG``, ``TOO_MANY_ENTRIES``), or, written by a key
                that is not a person's, a line that reads as an instruction to the
                assistant (``INSTRUCTION_NOT_FACT``). A secret in the content
                is refused before this runs, with every string of the request
                (:mod:`agent_memory.api.stored_text`).
            Conflict: the precondition does not hold (reason ``BLOCK_CONFLICT``).
        """
        check(content_violations(key.label, content, self._limits))
        screened: Block | _Unread | None = _UNREAD
        if not principal.person:
            screened = await self._refuse_orders(principal, key, content)
        async with self._store.connection(principal) as tx:
            if expected == ANY_ETAG:
                # The version whose lines the screen took as already there, if it read
                # one: a later version may have lost them.
                current = await tx.blocks.get(key) if screened is _UNREAD else screened
                if current is None:
                    raise _conflict(key, None, expected)
                expected = ExpectedUpdatedAt(current.updated_at)
            if isinstance(expected, ExpectedUpdatedAt) and expected.value is None:
                # Finer than a microsecond: no stored time matches it.
                found = BlockWrite(written=None, current=await tx.blocks.get(key))
            else:
                found = await tx.blocks.write(
                    key,
                    content,
                    expected=expected.value if isinstance(expected, ExpectedUpdatedAt) else None,
                    keep=self._limits.versions_kept,
                )
        if found.written is None:
            raise _conflict(key, found.current, expected)
        if key.label is BlockLabel.ARCHIVAL and self._on_written is not None:
            self._on_written()
        return found.written

    async def _refuse_orders(
        self, principal: Principal, key: BlockKey, content: str
    ) -> Block | _Unread | None:
        """No learned screen reads a block's lines: the lines a write by a key that is
        not a person's adds are judged here. A line the block holds already is not the
        writer's (a person may have written it); the block is read only when a line
        fails, and is returned then (None: there is none), else :data:`_UNREAD`.

        Raises:
            InvalidArgument: a line the write adds reads as an instruction to the
                assistant (``INSTRUCTION_NOT_FACT``).
        """
        try:
            await refuse_instruction_lines("content", content)
        except InvalidArgument:
            async with self._store.connection(principal) as tx:
                current = await tx.blocks.get(key)
            known = frozenset(current.content.splitlines()) if current else frozenset()
            await refuse_instruction_lines("content", content, known=known)
            return current
        return _UNREAD

    async def delete(
        self, principal: Principal, key: BlockKey, *, expected: ExpectedUpdatedAt | str | None
    ) -> None:
        """Delete the block with its history and lines; ``expected`` absent (or
        :data:`ANY_ETAG`): unconditionally.

        Raises:
            NotFound: the caller has no such block.
            Conflict: ``expected`` is given and stale (reason ``BLOCK_CONFLICT``).
        """
        if not isinstance(expected, ExpectedUpdatedAt):
            expected = None  # ANY_ETAG: the block as it is now
        async with self._store.connection(principal) as tx:
            if expected is not None and expected.value is None:
                deleted, current = False, await tx.blocks.get(key)
            else:
                deleted, current = await tx.blocks.delete(
                    key, expected=expected.value if expected is not None else None
                )
        if deleted:
            return
        if current is None:
            raise _not_found(key)
        raise _conflict(key, current, expected)

    async def versions(
        self, principal: Principal, key: BlockKey, *, size: int, token: str
    ) -> Page[BlockVersion]:
        """A page of the block's kept versions, newest first.

        Raises:
            InvalidArgument: bad page size or page token.
            NotFound: the caller has no such block.
        """
        limit = page_size(size)
        # A caller's blocks are their own: the user owns them, of an agent or not; a
        # workspace's are the tenant's, whoever reads them.
        if key.shared:
            owner = ["workspace", key.workspace_id]
        else:
            owner = ["user", principal.user_id]
            if key.agent_id:
                owner += ["agent", key.agent_id]
        tokens = await page_tokens(
            self._store,
            principal,
            token,
            owner=owner,
            listing=["block_versions", key.label.value, key.scope.value],
        )
        raw = tokens.open(token, arity=1)
        before = None if raw is None else _version_position(raw[0])
        async with self._store.connection(principal) as tx:
            rows = await tx.blocks.versions(key, before=before, limit=limit + 1)
        if rows is None:
            raise _not_found(key)
        return paged(rows, limit, tokens, lambda v: [v.version])


MAX_VERSION = 2**63 - 1  # versions are PostgreSQL bigints


def _version_position(value: object) -> int:
    """Undo the position a version page token holds; refuse one we did not make."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_VERSION:
        refuse_page_token()
    return value


def _key_metadata(key: BlockKey) -> dict[str, str]:
    found = {"label": key.label.value, "scope": key.scope.value, "agent_id": key.agent_id}
    if key.shared:
        found["workspace_id"] = key.workspace_id
    return found


def _not_found(key: BlockKey) -> NotFound:
    return NotFound(
        f"the {key.describe()} does not exist",
        reason="BLOCK_NOT_FOUND",
        metadata=_key_metadata(key),
    )


def _conflict(
    key: BlockKey, current: Block | None, expected: ExpectedUpdatedAt | str | None
) -> Conflict:
    """The block is not as the writer believed; the metadata says how it is."""
    if current is None:
        message = (
            f"the {key.describe()} does not exist; write it without expected_updated_at or etag"
        )
    elif expected is None:
        message = (
            f"the {key.describe()} already exists (updated_at {rfc3339(current.updated_at)}, "
            f"etag {current.etag}); send either back to replace it"
        )
    else:
        message = (
            f"the {key.describe()} was written since it was read; "
            f"it is now at updated_at {rfc3339(current.updated_at)}, etag {current.etag}"
        )
    return Conflict(
        message,
        reason="BLOCK_CONFLICT",
        metadata={
            **_key_metadata(key),
            "current_updated_at": rfc3339(current.updated_at if current else None),
            "current_version": str(current.version if current else 0),
            "current_etag": current.etag if current else "",
            "exists": "true" if current else "false",
        },
    )
