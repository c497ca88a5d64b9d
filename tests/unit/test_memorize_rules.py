"""Memorize rules (domain/memorize.py): tag slugs, quote cutting, validation, and the
content-hash key that makes the same call land on the same row."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.memorize import (
    DEFAULT_PROVIDER,
    MAX_RAW_EVENTS,
    MEMORIZE_KEY_PREFIX,
    QUOTE_MAX_CHARS,
    RAW_EVENT_MAX_CHARS,
    Conversation,
    ConversationMessage,
    MemorizeInput,
    content_key,
    cut_quote,
    dangling_grounding_violations,
    memory_key,
    normalise_tags,
    prepare,
    slug_tag,
)
from agent_memory.domain.memory import Grounding

EMOJI = "\U0001f600"


def violations_of(error: pytest.ExceptionInfo[InvalidArgument]) -> dict[str, str]:
    return {v.field: v.reason for v in error.value.violations}


def item(**kw: object) -> MemorizeInput:
    base = MemorizeInput(
        content="deploys go through the release branch",
        tags=("deploy", "ops"),
        conversation=Conversation(provider="anthropic", conversation_id="conv-1"),
        groundings=(Grounding(message_position=2, start_character=0, end_character=10, quote="q"),),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


# --- tags -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "slug"),
    [
        ("deploy", "deploy"),
        ("Deploy Flow", "deploy-flow"),
        ("ops!!", "ops"),
        ("  --Ops  Team--  ", "ops-team"),
        ("CI/CD", "ci-cd"),
        ("snake_case_tag", "snake-case-tag"),
        ("v2.1", "v2-1"),
        ("!!!", ""),
        ("", ""),
        (EMOJI, ""),
        # Letters of every script are letters.
        ("Ünïcödé Tag", "ünïcödé-tag"),
        ("Развёртывание", "развёртывание"),
        ("デプロイ", "デプロイ"),
        ("हिन्दी टैग", "हिन्दी-टैग"),
        ("\uff26\uff35\uff2c\uff2c", "full"),
    ],
)
def test_tags_become_lowercase_slugs(raw: str, slug: str) -> None:
    assert slug_tag(raw) == slug


def test_a_slug_is_at_most_64_chars_and_never_ends_in_a_dash() -> None:
    assert slug_tag("a" * 100) == "a" * 64
    cut = slug_tag("a" * 63 + " b")
    assert cut == "a" * 63
    assert not cut.endswith("-")


def test_tags_collapse_after_normalising_in_first_seen_order() -> None:
    tags = ["Deploy Flow", "ops!!", "deploy-flow", "DEPLOY FLOW", "Ops", "???", "", "zeta"]
    assert normalise_tags(tags) == ("deploy-flow", "ops", "zeta")


def test_prepare_normalises_tags() -> None:
    assert prepare(item(tags=("Deploy Flow", "ops!!", "deploy flow", "%%"))).tags == (
        "deploy-flow",
        "ops",
    )


# --- quotes -----------------------------------------------------------------------------


def test_a_quote_over_2000_chars_is_cut_to_exactly_2000() -> None:
    long = Grounding(quote="x" * 1999 + "yz" + "w" * 500, end_character=5)
    cut = cut_quote(long)
    assert QUOTE_MAX_CHARS == 2000
    assert cut.quote == "x" * 1999 + "y"
    assert len(cut.quote) == 2000
    assert replace(cut, quote="") == replace(long, quote=""), "only the quote changes"


@pytest.mark.parametrize("quote", ["", "short", "q" * 2000, EMOJI * 2000])
def test_a_quote_within_the_limit_is_kept(quote: str) -> None:
    assert cut_quote(Grounding(quote=quote)).quote == quote


def test_quotes_are_cut_by_code_points() -> None:
    assert cut_quote(Grounding(quote=EMOJI * 2500)).quote == EMOJI * 2000


def test_prepare_cuts_quotes_instead_of_refusing() -> None:
    prepared = prepare(item(groundings=(Grounding(quote="q" * 5000),)))
    assert prepared.groundings[0].quote == "q" * 2000


# --- validation -------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.0, 0.5, 1.0, None])
def test_confidence_in_0_to_1_passes(confidence: float | None) -> None:
    assert prepare(item(confidence=confidence)).confidence == confidence


@pytest.mark.parametrize("confidence", [-0.01, 1.01, 2.0, float("nan"), float("inf")])
def test_confidence_outside_0_to_1_is_refused(confidence: float) -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(item(confidence=confidence))
    assert violations_of(error) == {"confidence": "OUT_OF_RANGE"}


@pytest.mark.parametrize(
    ("grounding", "field"),
    [
        (Grounding(message_position=-1), "groundings[0].message_position"),
        (Grounding(start_character=-1, end_character=3), "groundings[0].start_character"),
        (Grounding(start_character=5, end_character=4), "groundings[0].end_character"),
        (Grounding(raw_event_index=-1), "groundings[0].raw_event_index"),
        (
            Grounding(raw_event_index=0, raw_start_character=-2),
            "groundings[0].raw_start_character",
        ),
        (Grounding(raw_event_index=0, raw_end_character=-3), "groundings[0].raw_end_character"),
        (
            Grounding(raw_event_index=0, raw_start_character=5, raw_end_character=4),
            "groundings[0].raw_end_character",
        ),
    ],
)
def test_bad_grounding_positions_are_refused(grounding: Grounding, field: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(item(groundings=(grounding,)))
    assert field in violations_of(error)
    assert set(violations_of(error).values()) == {"OUT_OF_RANGE"}


def test_a_raw_span_needs_its_raw_event() -> None:
    for grounding in (Grounding(raw_start_character=0), Grounding(raw_end_character=4)):
        with pytest.raises(InvalidArgument) as error:
            prepare(item(groundings=(grounding,)))
        assert violations_of(error) == {"groundings[0].raw_event_index": "REQUIRED"}


def test_groundings_need_the_conversation_they_point_into() -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(item(conversation=None))
    assert violations_of(error) == {"conversation": "REQUIRED"}
    assert prepare(item(conversation=None, groundings=())).conversation is None


def test_raw_events_have_a_count_a_size_and_no_nul() -> None:
    def refused(raw_events: tuple[str, ...]) -> dict[str, str]:
        conversation = Conversation("anthropic", "conv-1", raw_events=raw_events)
        with pytest.raises(InvalidArgument) as error:
            prepare(item(conversation=conversation, groundings=()))
        return violations_of(error)

    assert refused(("{}",) * (MAX_RAW_EVENTS + 1)) == {"conversation.raw_events": "TOO_MANY"}
    assert refused(("ok", "x" * (RAW_EVENT_MAX_CHARS + 1))) == {
        "conversation.raw_events[1]": "TOO_LONG"
    }
    assert refused(("a\x00b",)) == {"conversation.raw_events[0]": "INVALID_CHARACTER"}
    fits = Conversation("", "conv-1", raw_events=("x" * RAW_EVENT_MAX_CHARS,))
    prepared = prepare(item(conversation=fits, groundings=()))
    assert prepared.conversation == Conversation(DEFAULT_PROVIDER, "conv-1", (), fits.raw_events)


STORED = Conversation(
    "anthropic",
    "conv-1",
    (ConversationMessage("user", "hello"), ConversationMessage("assistant", "hi " + EMOJI)),
    ('{"type":"message_start"}',),
)


@pytest.mark.parametrize(
    ("grounding", "violation"),
    [
        (Grounding(message_position=2), "groundings[0].message_position"),
        (Grounding(message_position=0, end_character=6), "groundings[0].end_character"),
        (Grounding(message_position=1, end_character=5), "groundings[0].end_character"),
        (Grounding(raw_event_index=1), "groundings[0].raw_event_index"),
        (
            Grounding(raw_event_index=0, raw_start_character=25),
            "groundings[0].raw_start_character",
        ),
        (Grounding(raw_event_index=0, raw_end_character=25), "groundings[0].raw_end_character"),
        (Grounding(message_position=5, raw_event_index=0), "groundings[0].message_position"),
    ],
)
def test_a_grounding_past_the_stored_snapshot_is_named(
    grounding: Grounding, violation: str
) -> None:
    found = dangling_grounding_violations([Grounding(), grounding], STORED)
    assert [(v.field, v.reason) for v in found] == [
        (violation.replace("[0]", "[1]"), "OUT_OF_RANGE")
    ]


def test_groundings_inside_the_stored_snapshot_pass() -> None:
    inside = [
        Grounding(),
        Grounding(message_position=0, start_character=0, end_character=5),
        # Characters, not bytes: the emoji is one.
        Grounding(message_position=1, start_character=3, end_character=4),
        Grounding(raw_event_index=0, raw_start_character=0, raw_end_character=24),
        # A raw event only: message_position 0 points at no message.
        Grounding(raw_event_index=0),
    ]
    assert dangling_grounding_violations(inside, STORED) == []
    no_messages = Conversation("anthropic", "conv-1", (), STORED.raw_events)
    assert dangling_grounding_violations([Grounding(raw_event_index=0)], no_messages) == []
    assert [v.field for v in dangling_grounding_violations([Grounding()], no_messages)] == [
        "groundings[0].message_position"
    ]


def test_an_empty_span_is_fine() -> None:
    prepare(item(groundings=(Grounding(start_character=7, end_character=7),)))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "c" * 2001}, "content"),
        ({"memory_key": "k" * 256}, "memory_key"),
        ({"tags": tuple(f"t{i}" for i in range(33))}, "tags"),
    ],
)
def test_malformed_input_is_refused(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(item(**changes))
    assert field in violations_of(error)


def test_every_bad_field_is_reported_at_once() -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(
            item(
                content="",
                confidence=3.0,
                groundings=(Grounding(message_position=-1),),
            )
        )
    assert set(violations_of(error)) == {
        "content",
        "confidence",
        "groundings[0].message_position",
    }


# --- keys -------------------------------------------------------------------------------


def test_an_explicit_memory_key_is_used_as_is() -> None:
    assert memory_key(item(memory_key="deploy:branch")) == "deploy:branch"


def test_without_a_key_the_hash_key_is_used() -> None:
    key = memory_key(item())
    assert key == content_key(item())
    assert key.startswith(MEMORIZE_KEY_PREFIX)
    assert len(key) <= 255


def test_the_hash_key_is_stable() -> None:
    assert content_key(item()) == content_key(item())
    assert content_key(item()) == content_key(prepare(item()))


def test_tag_order_and_case_do_not_change_the_key() -> None:
    a = prepare(item(tags=("deploy", "ops")))
    b = prepare(item(tags=("OPS", "Deploy", "ops!!")))
    assert content_key(a) == content_key(b)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"content": "deploys go through main"}, id="content"),
        pytest.param({"tags": ("deploy",)}, id="tags"),
        pytest.param(
            {"conversation": Conversation(provider="anthropic", conversation_id="conv-2")},
            id="conversation-id",
        ),
        pytest.param({"conversation": None}, id="no-conversation"),
        pytest.param({"groundings": ()}, id="no-groundings"),
        pytest.param(
            {"groundings": (Grounding(message_position=3, end_character=10, quote="q"),)},
            id="grounding-position",
        ),
        pytest.param(
            {"groundings": (Grounding(message_position=2, end_character=10, quote="Q"),)},
            id="grounding-quote",
        ),
    ],
)
def test_what_makes_the_memory_changes_the_key(changes: dict[str, object]) -> None:
    assert content_key(item(**changes)) != content_key(item())


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"confidence": 0.9}, id="confidence"),
        pytest.param({"metadata": {"origin": "review"}}, id="metadata"),
        pytest.param(
            {
                "conversation": Conversation(
                    provider="anthropic",
                    conversation_id="conv-1",
                    messages=(ConversationMessage(role="user", content="hi"),),
                )
            },
            id="conversation-messages",
        ),
    ],
)
def test_annotations_do_not_change_the_key(changes: dict[str, object]) -> None:
    assert content_key(item(**changes)) == content_key(item())


def test_quotes_beyond_the_cut_do_not_change_the_key() -> None:
    a = prepare(item(groundings=(Grounding(quote="q" * 2000 + "tail one"),)))
    b = prepare(item(groundings=(Grounding(quote="q" * 2000 + "tail two"),)))
    assert content_key(a) == content_key(b)


def test_a_conversation_without_a_provider_gets_the_default() -> None:
    prepared = prepare(item(conversation=Conversation(provider="", conversation_id="c")))
    assert prepared.conversation is not None
    assert prepared.conversation.provider == DEFAULT_PROVIDER == "unknown"


def test_a_conversation_needs_an_id() -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(item(conversation=Conversation(provider="anthropic", conversation_id="")))
    assert violations_of(error) == {"conversation.conversation_id": "REQUIRED"}
