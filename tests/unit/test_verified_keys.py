"""The in-process memory of verified API keys: bounded in time and in size."""

from __future__ import annotations

import pytest

from agent_memory.domain.identity import Principal
from agent_memory.service.keys import VerifiedKeys

ALICE = Principal("acme", "alice")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_verified_key_is_remembered_until_exactly_its_ttl() -> None:
    clock = Clock()
    keys = VerifiedKeys(5, clock=clock)
    keys.put("k1", b"hash", ALICE, verified_at=clock())
    clock.now += 4.999
    assert keys.get("k1", b"hash") == ALICE
    clock.now += 0.001
    assert keys.get("k1", b"hash") is None


def test_the_ttl_counts_from_the_verification_not_from_the_last_use() -> None:
    clock = Clock()
    keys = VerifiedKeys(2, clock=clock)
    keys.put("k1", b"hash", ALICE, verified_at=clock())
    for _ in range(3):
        clock.now += 0.5
        assert keys.get("k1", b"hash") == ALICE
    clock.now += 0.5
    assert keys.get("k1", b"hash") is None


def test_another_secret_under_the_same_key_id_is_not_recognised() -> None:
    keys = VerifiedKeys(5, clock=Clock())
    keys.put("k1", b"right", ALICE, verified_at=keys.now())
    assert keys.get("k1", b"wrong") is None
    assert keys.get("k1", b"right") == ALICE


def test_the_least_recently_used_keys_go_beyond_the_bound() -> None:
    keys = VerifiedKeys(5, entries=2, clock=Clock())
    for name in ("k1", "k2"):
        keys.put(name, b"h", ALICE, verified_at=keys.now())
    assert keys.get("k1", b"h") == ALICE  # k2 is now the least recently used
    keys.put("k3", b"h", ALICE, verified_at=keys.now())
    assert keys.get("k2", b"h") is None
    assert keys.get("k1", b"h") == ALICE
    assert keys.get("k3", b"h") == ALICE


def test_a_ttl_of_zero_remembers_nothing() -> None:
    keys = VerifiedKeys(0, clock=Clock())
    keys.put("k1", b"h", ALICE, verified_at=keys.now())
    assert keys.get("k1", b"h") is None


@pytest.mark.parametrize("ttl", [-1, 5.5, 60])
def test_a_ttl_outside_zero_to_five_seconds_is_refused(ttl: float) -> None:
    with pytest.raises(ValueError, match="0 to 5"):
        VerifiedKeys(ttl)
