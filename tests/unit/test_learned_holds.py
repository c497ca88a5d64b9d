"""Which memories the index worker holds for review: those a model wrote whose new text
either learned screen reads as an instruction or as a credential, each with the reason
a person reviews it by (one held already too: its text is new); never one written by
hand (not judged), nor one embedded by another model."""

from __future__ import annotations

import uuid

import pytest

from agent_memory.detectors.learned import Classifier
from agent_memory.domain.indexing import MemoryToIndex, Vector
from agent_memory.domain.memory import HoldReason
from agent_memory.service import indexing


def memory(*, judged: bool = True) -> MemoryToIndex:
    return MemoryToIndex("t", uuid.uuid4(), "k", "v", 0, judged=judged)


INSTRUCTION = [1.0, 0.0]
CREDENTIAL = [0.0, 1.0]
ORDINARY = [0.0, 0.0]


@pytest.fixture
def screens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two small classifiers over vectors of two numbers, one per screen: each flags its
    own coordinate (the real ones are measured by bench/ and the end-to-end tests)."""

    def screen(reason: HoldReason, weights: tuple[float, float]) -> indexing.Screen:
        def classifier() -> Classifier:
            return Classifier(model="m", weights=weights, bias=-3.0, threshold=0.5)

        return indexing.Screen(reason, classifier, lambda _, v, m: classifier().reads(v, m))

    monkeypatch.setattr(
        indexing,
        "SCREENS",
        (
            screen(HoldReason.INSTRUCTION, (6.0, 0.0)),
            screen(HoldReason.CREDENTIAL, (0.0, 6.0)),
        ),
    )


@pytest.mark.usefixtures("screens")
def test_either_screen_holds_a_judged_memory_saying_which() -> None:
    order, secret, fact = memory(), memory(), memory()
    pairs: list[tuple[MemoryToIndex, Vector]] = [
        (order, INSTRUCTION),
        (secret, CREDENTIAL),
        (fact, ORDINARY),
    ]
    assert indexing.holds(pairs, "m") == {
        order.memory_id: HoldReason.INSTRUCTION,
        secret.memory_id: HoldReason.CREDENTIAL,
    }


@pytest.mark.usefixtures("screens")
def test_a_text_both_screens_flag_is_held_once_as_the_first_reads_it() -> None:
    both = memory()
    assert indexing.holds([(both, [1.0, 1.0])], "m") == {both.memory_id: HoldReason.INSTRUCTION}


@pytest.mark.usefixtures("screens")
def test_a_memory_not_judged_is_left_alone() -> None:
    by_hand = memory(judged=False)
    assert indexing.holds([(by_hand, CREDENTIAL), (by_hand, INSTRUCTION)], "m") == {}


@pytest.mark.usefixtures("screens")
def test_a_held_memory_whose_text_is_new_is_judged_again() -> None:
    """A claim does not say whether the memory is held: its new text is judged as any,
    and the store replaces the reason for the text it had with the new one's."""
    held = memory()
    assert indexing.holds([(held, CREDENTIAL)], "m") == {held.memory_id: HoldReason.CREDENTIAL}
    assert indexing.holds([(held, ORDINARY)], "m") == {}


@pytest.mark.usefixtures("screens")
def test_another_models_vectors_are_not_read() -> None:
    assert indexing.holds([(memory(), CREDENTIAL)], "another-model") == {}


@pytest.mark.usefixtures("screens")
def test_the_screens_say_which_models_vectors_they_read() -> None:
    assert indexing.screens_read("m")
    assert not indexing.screens_read("another-model")
