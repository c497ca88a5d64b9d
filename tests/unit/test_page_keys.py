"""How a server keeps the keys of page tokens it loaded (store/page_keys.py)."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from agent_memory.domain.errors import Unavailable
from agent_memory.domain.paging import KEY_BYTES, PageKey, PageKeyring
from agent_memory.store.page_keys import KEYRING_SECONDS, RELOAD_SECONDS, KeyringCache


class Keys:
    """The database's keys as a server loads them, and a clock the test moves."""

    def __init__(self) -> None:
        self.keyring = PageKeyring((PageKey(1, secrets.token_bytes(KEY_BYTES)),))
        self.loads = 0
        self.down = False
        self.time = 1000.0

    async def load(self) -> PageKeyring:
        self.loads += 1
        if self.down:
            raise Unavailable("the database is unavailable; retry later")
        return self.keyring

    def rotate(self) -> None:
        newest = self.keyring.newest + 1
        self.keyring = PageKeyring(
            (*self.keyring.keys, PageKey(newest, secrets.token_bytes(KEY_BYTES)))
        )


@pytest.fixture
def keys() -> Keys:
    return Keys()


def cache(keys: Keys) -> KeyringCache:
    return KeyringCache(keys.load, clock=lambda: keys.time)


def get(cached: KeyringCache, knowing: int = 0) -> PageKeyring:
    return asyncio.run(cached.get(knowing=knowing))


def test_keys_are_loaded_once_then_kept_for_a_while(keys: Keys) -> None:
    cached = cache(keys)
    first = get(cached)
    keys.rotate()
    keys.time += KEYRING_SECONDS - 1
    assert get(cached) is first
    assert keys.loads == 1
    keys.time += 1
    assert get(cached).newest == 2
    assert keys.loads == 2


def test_a_token_of_a_newer_key_loads_them_again_at_once(keys: Keys) -> None:
    cached = cache(keys)
    get(cached)
    keys.rotate()
    assert get(cached, knowing=2).newest == 2
    assert get(cached, knowing=2).newest == 2
    assert keys.loads == 2


def test_tokens_naming_keys_that_do_not_exist_load_them_at_most_once_a_second(
    keys: Keys,
) -> None:
    cached = cache(keys)
    get(cached)
    for _ in range(10):
        get(cached, knowing=99)
    assert keys.loads == 2
    keys.time += RELOAD_SECONDS
    get(cached, knowing=99)
    assert keys.loads == 3


def test_while_the_database_is_away_the_keys_held_are_kept(keys: Keys) -> None:
    cached = cache(keys)
    first = get(cached)
    keys.down = True
    keys.time += KEYRING_SECONDS
    assert get(cached) is first
    assert get(cached) is first
    assert keys.loads == 2  # not again at every call
    keys.down = False
    keys.time += KEYRING_SECONDS
    assert get(cached) is first  # loaded again: the same keys
    assert keys.loads == 3


def test_without_keys_held_a_failed_load_is_the_callers_error(keys: Keys) -> None:
    keys.down = True
    with pytest.raises(Unavailable):
        get(cache(keys))
