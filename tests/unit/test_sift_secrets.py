"""Facts extraction drops never echo a secret (extract/sift.py): a dropped fact is
reported back to the caller, so neither its value nor its key may carry the credential,
whatever the reason it was dropped for."""

from __future__ import annotations

import pytest

from agent_memory.domain.extraction import Candidate, DroppedFact, DropReason
from agent_memory.extract.sift import SiftRules, sift
from tests import secret_corpus
from tests.sift_support import ANTHROPIC_KEY, cand, rules

PASSWORD = "Tr0ub4dor" + "&3"


def echoed(dropped: list[DroppedFact]) -> str:
    return " ".join(f"{d.key} {d.value}" for d in dropped)


@pytest.mark.parametrize(
    "text",
    [pytest.param(t, id=f"{shape}-{i}") for i, (shape, t) in enumerate(secret_corpus.SECRETS)],
)
def test_every_corpus_secret_in_a_value_is_dropped_without_its_value(text: str) -> None:
    kept, dropped = sift([cand("deploy notes", text)], [], rules())
    assert kept == []
    assert [(d.key, d.value, d.reason) for d in dropped] == [
        ("auto:deploy-notes", "", DropReason.SECRET_IN_VALUE)
    ]


@pytest.mark.parametrize(
    "text",
    [pytest.param(t, id=f"{kind}-{i}") for i, (kind, t) in enumerate(secret_corpus.ORDINARY)],
)
def test_ordinary_corpus_values_are_kept(text: str) -> None:
    kept, dropped = sift([cand("note", text)], [], rules())
    assert dropped == []
    assert [k.value for k in kept] == [text.strip()[:2000]]


@pytest.mark.parametrize(
    "candidate",
    [
        pytest.param(cand("password = Hunter2Winter!", "where it lives"), id="password-key"),
        pytest.param(cand(f"key {ANTHROPIC_KEY}", "the model key"), id="provider-key"),
        pytest.param(cand(ANTHROPIC_KEY.upper(), "shouting"), id="provider-key-upper"),
    ],
)
def test_a_key_holding_a_secret_is_not_echoed(candidate: Candidate) -> None:
    _, dropped = sift([candidate], [], rules())
    assert [(d.key, d.value, d.reason) for d in dropped] == [("", "", DropReason.SECRET_IN_VALUE)]


@pytest.mark.parametrize(
    ("candidates", "sift_rules"),
    [
        pytest.param(
            [cand(f"fact {i}", f"ordinary fact number {i}") for i in range(5)]
            + [cand("db", f"the prod DB password is {PASSWORD}")],
            rules(),
            id="over-the-limit",
        ),
        pytest.param(
            [cand("db", f"the prod DB password is {PASSWORD}", confidence=0.1)],
            rules(),
            id="low-confidence",
        ),
        pytest.param(
            [cand("db", f"the prod DB password is {PASSWORD}")],
            rules(memory_enabled=False),
            id="memory-disabled",
        ),
        pytest.param(
            [cand("db", f"the prod DB password is {PASSWORD}\x00")], rules(), id="invalid-value"
        ),
        pytest.param(
            [cand("!!!", f"the prod DB password is {PASSWORD}")], rules(), id="key-without-slug"
        ),
        pytest.param(
            [cand("db", "the prod DB password is Tr0ub4dor&3 and it rotates")] * 2,
            rules(),
            id="duplicate",
        ),
    ],
)
def test_whatever_the_drop_reason_a_secret_is_not_echoed(
    candidates: list[Candidate], sift_rules: SiftRules
) -> None:
    kept, dropped = sift(candidates, [], sift_rules)
    assert PASSWORD not in echoed(dropped)
    assert all(PASSWORD not in k.value for k in kept)
    assert DropReason.SECRET_IN_VALUE in [d.reason for d in dropped]


def test_a_credential_named_only_by_its_key_is_dropped() -> None:
    kept, dropped = sift([cand("prod db password", PASSWORD)], [], rules())
    assert kept == []
    assert [(d.key, d.value, d.reason) for d in dropped] == [
        ("auto:prod-db-password", "", DropReason.SECRET_IN_VALUE)
    ]


def test_a_secret_cut_in_half_by_the_value_limit_is_still_dropped() -> None:
    value = "word " * 399 + ANTHROPIC_KEY  # the 2,000-character cut falls inside the key
    assert value.index(ANTHROPIC_KEY) == 1995
    kept, dropped = sift([cand("notes", value)], [], rules())
    assert kept == []
    assert ANTHROPIC_KEY[:5] not in echoed(dropped)
    assert [d.reason for d in dropped] == [DropReason.SECRET_IN_VALUE]


def test_a_pointer_to_where_the_secret_lives_is_kept() -> None:
    kept, dropped = sift(
        [cand("prod db password", "in 1Password under Infra/Prod DB, or ${DB_PASSWORD}")],
        [],
        rules(),
    )
    assert dropped == []
    assert [k.key for k in kept] == ["auto:prod-db-password"]
