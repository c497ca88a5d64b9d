"""What a pass may do to the memories it is shown: add, update, supersede or leave them.

Pure rules: the model's decisions as parsed, the memories offered to it, and the sift
that checks each decision before anything is written.
"""

from __future__ import annotations

import pytest

from agent_memory.domain.extraction import Action, DropReason
from agent_memory.domain.memory import MemorySource, Scope
from agent_memory.extract import prompt
from agent_memory.extract.model import parse_candidates
from agent_memory.extract.sift import sift
from tests.sift_support import cand, memory, rules

PARIS = memory("auto:user-home-city", "The user lives in Paris.")


def test_decisions_are_parsed_with_add_as_the_default() -> None:
    parsed = parse_candidates(
        {
            "facts": [
                {"key": "k", "value": "v", "confidence": 0.9, "scope": "agent"},
                {
                    "key": "home",
                    "value": "New York",
                    "confidence": 0.9,
                    "scope": "agent",
                    "action": "supersede",
                    "target": " m2 ",
                },
            ]
        }
    )
    assert [(c.action, c.target) for c in parsed] == [
        (Action.ADD, ""),
        (Action.SUPERSEDE, "m2"),
    ]


@pytest.mark.parametrize(
    "extra",
    [{"action": "delete"}, {"action": 3}, {"action": "update", "target": 7}],
)
def test_an_unknown_action_or_a_target_that_is_not_text_is_malformed(
    extra: dict[str, object],
) -> None:
    fact = {"key": "k", "value": "v", "confidence": 0.9, "scope": "agent", **extra}
    with pytest.raises(ValueError, match="fact 0 has"):
        parse_candidates({"facts": [fact]})


def test_the_tool_offers_every_action_and_a_target() -> None:
    items = prompt.tool(5, workspace=True)["input_schema"]["properties"]["facts"]["items"]
    assert items["properties"]["action"]["enum"] == ["add", "update", "supersede", "noop"]
    assert items["properties"]["target"]["type"] == "string"
    # A reply without decisions is still the old shape: every fact an addition.
    assert "action" not in items["required"]


def test_the_memories_offered_are_those_the_transcript_speaks_of_then_the_newest() -> None:
    newest_first = [
        memory("auto:editor", "Prefers vim keybindings."),
        memory("auto:ci", "CI runs on GitHub Actions."),
        PARIS,
        memory("auto:pets", "Has a cat called Miso."),
    ]
    transcript = "I moved from Paris to New York last month; the cat came too."
    known = prompt.known_memories(newest_first, transcript, limit=3)
    assert [k.ref for k in known] == ["m1", "m2", "m3"]
    # Paris shares the most of its words with the transcript; the cat next; then the
    # newest of those that share nothing.
    assert [k.memory for k in known] == [PARIS, newest_first[3], newest_first[0]]
    assert prompt.known_memories(newest_first, transcript, limit=0) == []


def test_superseding_a_known_memory_keeps_the_fact_in_the_target_scope() -> None:
    home = memory("auto:home", "The team works from the Paris office.", scope=Scope.WORKSPACE)
    kept, dropped = sift(
        [
            cand(
                "office",
                "The team works from the New York office.",
                action=Action.SUPERSEDE,
                target="m1",
            )
        ],
        [home.value],
        rules(),
        {"m1": home},
    )
    assert dropped == []
    assert [(k.key, k.scope, k.action, k.target) for k in kept] == [
        ("auto:office", Scope.WORKSPACE, Action.SUPERSEDE, home)
    ]


def test_an_update_rewrites_the_target_under_its_own_key() -> None:
    kept, dropped = sift(
        [cand("city", "The user lives in New York.", action=Action.UPDATE, target="m1")],
        [PARIS.value],
        rules(),
        {"m1": PARIS},
    )
    assert dropped == []
    assert [(k.key, k.action) for k in kept] == [("auto:user-home-city", Action.UPDATE)]


def test_the_target_is_not_a_duplicate_of_the_fact_that_replaces_it() -> None:
    # Near-identical wording: an addition would be dropped as a duplicate of it.
    old = memory(
        "auto:deploy",
        "Deploy with make deploy from the repo root on the main branch after tests pass.",
    )
    new = "Deploy with make deploy from the repo root on the release branch after tests pass."
    assert sift([cand("deploy", new)], [old.value], rules())[1][0].reason is DropReason.DUPLICATE
    kept, _ = sift(
        [cand("deploy", new, action=Action.UPDATE, target="m1")],
        [old.value],
        rules(),
        {"m1": old},
    )
    assert [k.value for k in kept] == [new]


def test_a_memorized_row_is_superseded_rather_than_rewritten() -> None:
    memorized = memory("decision-1", "Ship on Fridays.", source=MemorySource.MEMORIZE)
    kept, _ = sift(
        [cand("ship-day", "Ship on Thursdays.", action=Action.UPDATE, target="m1")],
        [],
        rules(),
        {"m1": memorized},
    )
    assert [(k.key, k.action) for k in kept] == [("auto:ship-day", Action.SUPERSEDE)]


@pytest.mark.parametrize("source", [MemorySource.MANUAL, MemorySource.DIRECTOR])
@pytest.mark.parametrize("action", [Action.UPDATE, Action.SUPERSEDE])
def test_a_person_or_director_memory_is_never_changed_by_a_pass(
    source: MemorySource, action: Action
) -> None:
    protected = memory("home", "The user lives in Paris.", source=source)
    kept, dropped = sift(
        [cand("home", "The user lives in New York.", action=action, target="m1")],
        [],
        rules(),
        {"m1": protected},
    )
    assert kept == []
    assert [d.reason for d in dropped] == [DropReason.TARGET_PROTECTED]


def test_decisions_the_server_cannot_check_are_dropped_with_their_reason() -> None:
    candidates = [
        cand("a", "Known already.", action=Action.NOOP, target="m1"),
        cand("b", "Points at nothing.", action=Action.SUPERSEDE, target="m9"),
        cand("c", "Points at nothing either.", action=Action.UPDATE),
        cand("d", "The user lives in New York.", action=Action.SUPERSEDE, target="m1"),
        cand("e", "The user lives in Berlin.", action=Action.UPDATE, target="m1"),
        cand("f", PARIS.value, action=Action.UPDATE, target="m2"),
    ]
    same = memory("auto:f", PARIS.value)
    kept, dropped = sift(candidates, [PARIS.value], rules(max_facts=10), {"m1": PARIS, "m2": same})
    assert [k.key for k in kept] == ["auto:d"]
    assert [(d.key, d.reason) for d in dropped] == [
        ("auto:a", DropReason.ALREADY_KNOWN),
        ("auto:b", DropReason.UNKNOWN_TARGET),
        ("auto:c", DropReason.UNKNOWN_TARGET),
        # A second decision about the same memory.
        ("auto:e", DropReason.DUPLICATE),
        # An update that changes nothing.
        ("auto:f", DropReason.ALREADY_KNOWN),
    ]


def test_an_agent_target_needs_agent_memory_on() -> None:
    kept, dropped = sift(
        [
            cand(
                "home",
                "The user lives in New York.",
                scope=Scope.WORKSPACE,
                action=Action.SUPERSEDE,
                target="m1",
            )
        ],
        [],
        rules(memory_enabled=False),
        {"m1": PARIS},
    )
    assert kept == []
    assert [(d.scope, d.reason) for d in dropped] == [(Scope.AGENT, DropReason.MEMORY_DISABLED)]
