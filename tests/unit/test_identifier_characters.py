"""An identifier holds no character that shows nothing, so that no two that look the same
are two; a joiner a script or an emoji needs between two of its characters, and an
emoji's presentation selector after it, stay."""

from __future__ import annotations

import pytest

from agent_memory.domain.text_rules import identifier_violations


def refused(text: str) -> bool:
    return bool(identifier_violations("key", text, max_chars=255))


@pytest.mark.parametrize(
    "text",
    [
        "time\u200bzone",  # zero-width space
        "time\u200dzone",  # a joiner between two ASCII letters joins nothing
        "\u200ctimezone",
        "timezone\u200d",
        "\u202etimezone",  # right-to-left override
        "time\u00adzone",  # soft hyphen
        "timezone\ufe0f",  # a selector after an ASCII letter selects nothing
        "timezone\U000e0041",  # a tag character
        # Stacked, each would stand beside the one before: any number of look-alikes.
        "\u0444\u200c\u200c\u0444",
        "\u2764\ufe0f\ufe0f",
        "\u0444\u200d\ufe0f\u200d\u0444",
    ],
)
def test_a_character_that_shows_nothing_is_refused(text: str) -> None:
    assert refused(text)


@pytest.mark.parametrize(
    "text",
    [
        "timezone",
        "\u0631\u0645\u0632\u200c\u0639\u0628\u0648\u0631",  # Persian, with its non-joiner
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # a family emoji
        "\u2764\ufe0f",  # a red heart
        "\U0001f3f3\ufe0f\u200d\U0001f308",  # a rainbow flag: a selector, then a joiner
        "\u0915\u094d\u200d\u0937",  # Devanagari with a joiner
    ],
)
def test_what_a_script_or_an_emoji_needs_stays(text: str) -> None:
    assert not refused(text)


@pytest.mark.parametrize(
    "text", [" tone", "tone ", "  spaced  ", "to  ne", "to \u00a0ne", "\u3000tone", "tone\u00a0"]
)
def test_spaces_a_reader_cannot_see_are_refused(text: str) -> None:
    """A prompt shows "  spaced  " as "spaced": it would stand beside the real one."""
    assert refused(text)


@pytest.mark.parametrize("text", ["to ne", "deploy window", "東京 オフィス"])
def test_one_space_between_words_stays(text: str) -> None:
    assert not refused(text)
