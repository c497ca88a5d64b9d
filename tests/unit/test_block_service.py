"""Block use cases over the in-memory store: compare-and-set writes and deletes and
what their refusals say, size limits, the archival hook, and version pages."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

from agent_memory.domain.blocks import (
    ANY_ETAG,
    Block,
    BlockKey,
    BlockLabel,
    BlockLimits,
    BlockScope,
    ExpectedUpdatedAt,
    ScopeFilter,
    rfc3339,
)
from agent_memory.domain.errors import Conflict, InvalidArgument, NotFound
from agent_memory.domain.identity import Principal
from agent_memory.service.blocks import Blocks
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")
CORE = BlockKey(BlockLabel.CORE, BlockScope.USER)
ARCHIVAL = BlockKey(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder")
LIMITS = BlockLimits(core_max_chars=20, core_max_entries=3, archival_max_chars=30, versions_kept=3)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def written() -> list[str]:
    """The archival writes the indexer was told of."""
    return []


@pytest.fixture
def blocks(written: list[str]) -> Blocks:
    return Blocks(FakeStore(), LIMITS, on_written=lambda: written.append("archival"))


def at(block: Block) -> ExpectedUpdatedAt:
    return ExpectedUpdatedAt(block.updated_at)


def conflict(call: Coroutine[Any, Any, object]) -> Conflict:
    with pytest.raises(Conflict) as refused:
        run(call)
    assert refused.value.reason == "BLOCK_CONFLICT"
    return refused.value


def current_of(block: Block | None) -> dict[str, str]:
    """What a refusal says of the block as it is."""
    return {
        "current_updated_at": rfc3339(block.updated_at) if block else "",
        "current_version": str(block.version) if block else "0",
        "current_etag": block.etag if block else "",
        "exists": "true" if block else "false",
    }


def test_a_write_creates_then_replaces_at_the_time_read(blocks: Blocks) -> None:
    first = run(blocks.write(ALICE, CORE, "likes tea", expected=None))
    second = run(blocks.write(ALICE, CORE, "likes coffee", expected=at(first)))
    assert (first.version, second.version) == (1, 2)
    assert second.updated_at > first.updated_at
    assert run(blocks.get(ALICE, CORE)) == second


def test_creating_a_block_that_exists_is_refused_with_the_block_as_it_is(
    blocks: Blocks,
) -> None:
    block = run(blocks.write(ALICE, CORE, "one", expected=None))
    refused = conflict(blocks.write(ALICE, CORE, "two", expected=None))
    assert refused.metadata == {
        "label": "core",
        "scope": "user",
        "agent_id": "",
        **current_of(block),
    }
    assert "already exists" in refused.message
    assert run(blocks.get(ALICE, CORE)) == block


def test_a_stale_write_is_refused_with_the_current_version_and_changes_nothing(
    blocks: Blocks,
) -> None:
    first = run(blocks.write(ALICE, CORE, "one", expected=None))
    second = run(blocks.write(ALICE, CORE, "two", expected=at(first)))
    refused = conflict(blocks.write(ALICE, CORE, "three", expected=at(first)))
    assert refused.metadata["current_version"] == "2"
    assert {k: refused.metadata[k] for k in current_of(second)} == current_of(second)
    assert "was written since it was read" in refused.message
    assert run(blocks.get(ALICE, CORE)) == second
    # The etag the refusal gives is the one that replaces the block.
    assert run(blocks.write(ALICE, CORE, "three", expected=at(second))).version == 3


def test_a_time_of_a_block_that_does_not_exist_is_refused(blocks: Blocks) -> None:
    elsewhere = run(blocks.write(ALICE, CORE, "one", expected=None))
    refused = conflict(blocks.write(ALICE, ARCHIVAL, "x", expected=at(elsewhere)))
    assert {k: refused.metadata[k] for k in current_of(None)} == current_of(None)
    assert refused.metadata["agent_id"] == "coder"
    with pytest.raises(NotFound):
        run(blocks.get(ALICE, ARCHIVAL))


def test_a_time_finer_than_a_microsecond_never_matches(blocks: Blocks) -> None:
    block = run(blocks.write(ALICE, CORE, "one", expected=None))
    refused = conflict(blocks.write(ALICE, CORE, "two", expected=ExpectedUpdatedAt(None)))
    assert refused.metadata["current_version"] == "1"
    assert run(blocks.get(ALICE, CORE)) == block
    conflict(blocks.delete(ALICE, CORE, expected=ExpectedUpdatedAt(None)))
    assert run(blocks.get(ALICE, CORE)) == block


def test_any_etag_replaces_the_block_as_it_is_but_never_creates_one(blocks: Blocks) -> None:
    refused = conflict(blocks.write(ALICE, CORE, "one", expected=ANY_ETAG))
    assert refused.metadata["exists"] == "false"
    with pytest.raises(NotFound):
        run(blocks.get(ALICE, CORE))
    first = run(blocks.write(ALICE, CORE, "one", expected=None))
    second = run(blocks.write(ALICE, CORE, "two", expected=at(first)))
    third = run(blocks.write(ALICE, CORE, "three", expected=ANY_ETAG))
    assert (third.version, third.content) == (3, "three")
    assert third.updated_at > second.updated_at


@pytest.mark.parametrize(
    ("key", "content", "reason"),
    [
        (CORE, "x" * 21, "TOO_LONG"),
        (CORE, "a\nb\n\nc\nd", "TOO_MANY_ENTRIES"),
        (ARCHIVAL, "x" * 31, "TOO_LONG"),
        (CORE, "nul\x00", "INVALID_CHARACTER"),
    ],
    ids=["core-chars", "core-entries", "archival-chars", "nul"],
)
def test_content_over_the_limits_given_is_refused_and_nothing_changes(
    blocks: Blocks, written: list[str], key: BlockKey, content: str, reason: str
) -> None:
    block = run(blocks.write(ALICE, key, "fits", expected=None))
    written.clear()
    with pytest.raises(InvalidArgument) as refused:
        run(blocks.write(ALICE, key, content, expected=at(block)))
    assert [(v.field, v.reason) for v in refused.value.violations] == [("content", reason)]
    assert run(blocks.get(ALICE, key)) == block
    assert written == []


def test_content_at_the_limits_passes(blocks: Blocks) -> None:
    assert run(blocks.write(ALICE, CORE, "é" * 20, expected=None)).content == "é" * 20
    archival = run(blocks.write(ALICE, ARCHIVAL, "a\n" * 15, expected=None))
    assert archival.entry_count == 15
    core = run(blocks.get(ALICE, CORE))
    assert run(blocks.write(ALICE, CORE, "a\n\nb\n  \nc", expected=at(core))).entry_count == 3


def test_the_indexer_hears_of_archival_writes_only(blocks: Blocks, written: list[str]) -> None:
    run(blocks.write(ALICE, CORE, "core", expected=None))
    assert written == []
    archival = run(blocks.write(ALICE, ARCHIVAL, "a line", expected=None))
    assert written == ["archival"]
    conflict(blocks.write(ALICE, ARCHIVAL, "refused", expected=None))
    assert written == ["archival"]
    run(blocks.write(ALICE, ARCHIVAL, "another line", expected=at(archival)))
    assert written == ["archival", "archival"]


def test_a_delete_is_compare_and_set_unless_no_time_is_given(blocks: Blocks) -> None:
    with pytest.raises(NotFound) as missing:
        run(blocks.delete(ALICE, CORE, expected=None))
    assert missing.value.reason == "BLOCK_NOT_FOUND"
    first = run(blocks.write(ALICE, CORE, "one", expected=None))
    second = run(blocks.write(ALICE, CORE, "two", expected=at(first)))
    refused = conflict(blocks.delete(ALICE, CORE, expected=at(first)))
    assert refused.metadata["current_version"] == "2"
    assert run(blocks.get(ALICE, CORE)) == second
    run(blocks.delete(ALICE, CORE, expected=at(second)))
    with pytest.raises(NotFound):
        run(blocks.get(ALICE, CORE))
    for expected in (None, ANY_ETAG):
        run(blocks.write(ALICE, CORE, "again", expected=None))
        run(blocks.delete(ALICE, CORE, expected=expected))
        with pytest.raises(NotFound):
            run(blocks.get(ALICE, CORE))


def test_version_pages_go_newest_first_over_the_versions_kept(blocks: Blocks) -> None:
    # Every version is younger than the history kept: all five are kept.
    block = run(blocks.write(ALICE, CORE, "v1", expected=None))
    for n in range(2, 6):
        block = run(blocks.write(ALICE, CORE, f"v{n}", expected=at(block)))
    seen: list[list[int]] = []
    token = ""
    while True:
        page = run(blocks.versions(ALICE, CORE, size=2, token=token))
        seen.append([v.version for v in page.items])
        token = page.next_page_token
        if not token:
            break
    assert seen == [[5, 4], [3, 2], [1]]
    newest = run(blocks.versions(ALICE, CORE, size=1, token="")).items[0]
    assert (newest.content, newest.writer_user_id, newest.written_at) == (
        "v5",
        "alice",
        block.updated_at,
    )


def test_a_version_page_token_opens_only_the_listing_it_was_made_for(blocks: Blocks) -> None:
    block = run(blocks.write(ALICE, CORE, "v1", expected=None))
    run(blocks.write(ALICE, CORE, "v2", expected=at(block)))
    run(blocks.write(ALICE, ARCHIVAL, "a", expected=None))
    token = run(blocks.versions(ALICE, CORE, size=1, token="")).next_page_token
    assert token
    for key, page_token in ((ARCHIVAL, token), (CORE, "not a token")):
        with pytest.raises(InvalidArgument) as refused:
            run(blocks.versions(ALICE, key, size=1, token=page_token))
        assert [v.reason for v in refused.value.violations] == ["INVALID_PAGE_TOKEN"]
    with pytest.raises(NotFound):
        run(
            blocks.versions(
                ALICE, BlockKey(BlockLabel.CORE, BlockScope.AGENT, "x"), size=1, token=""
            )
        )


def test_a_block_is_its_users_alone(blocks: Blocks) -> None:
    bob = Principal("acme", "bob")
    other_tenant = Principal("globex", "alice")
    mine = run(blocks.write(ALICE, CORE, "mine", expected=None))
    for other in (bob, other_tenant):
        with pytest.raises(NotFound):
            run(blocks.get(other, CORE))
        assert run(blocks.list(other, scope_filter=ScopeFilter.ALL, agent_id="")) == []
        conflict(blocks.write(other, CORE, "x", expected=at(mine)))
        with pytest.raises(NotFound):
            run(blocks.delete(other, CORE, expected=None))
        assert run(blocks.write(other, CORE, "theirs", expected=None)).version == 1
    assert run(blocks.get(ALICE, CORE)) == mine


def test_a_listing_is_filtered_by_scope_and_agent(blocks: Blocks) -> None:
    run(blocks.write(ALICE, ARCHIVAL, "a", expected=None))
    run(
        blocks.write(
            ALICE, BlockKey(BlockLabel.CORE, BlockScope.AGENT, "other"), "o", expected=None
        )
    )
    run(blocks.write(ALICE, CORE, "u", expected=None))

    def listed(scope_filter: ScopeFilter, agent_id: str = "") -> list[str]:
        found = run(blocks.list(ALICE, scope_filter=scope_filter, agent_id=agent_id))
        return [b.content for b in found]

    assert listed(ScopeFilter.ALL) == ["u", "a", "o"]
    assert listed(ScopeFilter.USER) == ["u"]
    assert listed(ScopeFilter.AGENT, "coder") == ["a"]
    assert listed(ScopeFilter.ALL, "other") == ["u", "o"]
