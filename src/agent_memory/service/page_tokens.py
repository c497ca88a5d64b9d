"""Page tokens of a caller's listing, sealed with the database's keys; and the
operator's rotation of those keys."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.identity import Principal
from agent_memory.domain.paging import PageKeyring, PageTokens, sealed_with
from agent_memory.store.repositories import Store

# How long the key a rotation replaces still opens its tokens, unless told otherwise.
DEFAULT_KEEP = timedelta(days=1)


async def page_tokens(
    store: Store,
    principal: Principal,
    token: str,
    *,
    owner: Sequence[str],
    listing: Sequence[str],
) -> PageTokens:
    """The tokens of ``listing`` of ``owner``'s rows (empty: the tenant's own) for the
    caller, with the keys that open ``token``: when it names a key newer than those
    loaded (another server rotated them), they are loaded again."""
    key_id = sealed_with(token) if token else None
    keyring = await store.page_keyring(knowing=key_id or 0)
    return PageTokens(keyring, tenant=principal.tenant_id, owner=owner, listing=listing)


async def rotate_page_key(store: Store, *, keep: timedelta = DEFAULT_KEEP) -> PageKeyring:
    """Make a new key that seals page tokens from now on; the keys before it open the
    tokens they sealed for ``keep`` more (zero: they are refused at once). Every server
    seals with the new key within a minute. The keys now.

    Raises:
        InvalidArgument: ``keep`` is negative.
        Conflict: other rotations kept getting in the way.
    """
    if keep < timedelta(0):
        check([FieldViolation("keep", "must not be negative", "OUT_OF_RANGE")])
    async with store.admin() as tx:
        new_id = await tx.page_keys.rotate(keep)
    return await store.page_keyring(knowing=new_id)
