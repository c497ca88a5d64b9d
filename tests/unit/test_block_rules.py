"""Block rules (domain/blocks.py): limits, entries, identity. No transport, no storage."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from agent_memory.domain.blocks import (
    BlockKey,
    BlockLabel,
    BlockLimits,
    BlockScope,
    ScopeFilter,
    block_key,
    content_violations,
    count_entries,
    entries,
    list_filter,
    rfc3339,
)
from agent_memory.domain.errors import InvalidArgument, PermissionDenied
from agent_memory.domain.identity import Principal, Role
from agent_memory.service.blocks import reading_for

EMOJI = "\U0001f600"  # one code point, four UTF-8 bytes, two UTF-16 units
LIMITS = BlockLimits()


def reasons(label: BlockLabel, content: str, limits: BlockLimits = LIMITS) -> list[str]:
    return [v.reason for v in content_violations(label, content, limits)]


def violations_of(error: pytest.ExceptionInfo[InvalidArgument]) -> dict[str, str]:
    """field path -> violation reason."""
    return {v.field: v.reason for v in error.value.violations}


# --- limits, in code points --------------------------------------------------------------


def test_default_limits_match_the_spec() -> None:
    assert (LIMITS.core_max_chars, LIMITS.core_max_entries) == (4000, 20)
    assert LIMITS.archival_max_chars == 8000
    assert LIMITS.versions_kept == 50


@pytest.mark.parametrize(("label", "size"), [(BlockLabel.CORE, 4000), (BlockLabel.ARCHIVAL, 8000)])
@pytest.mark.parametrize("char", ["x", "é", EMOJI])
def test_content_up_to_the_limit_in_code_points_passes(
    label: BlockLabel, size: int, char: str
) -> None:
    assert reasons(label, char * size) == []


@pytest.mark.parametrize(("label", "size"), [(BlockLabel.CORE, 4000), (BlockLabel.ARCHIVAL, 8000)])
@pytest.mark.parametrize("char", ["x", EMOJI])
def test_one_code_point_over_the_limit_is_too_long(label: BlockLabel, size: int, char: str) -> None:
    (violation,) = content_violations(label, char * (size + 1), LIMITS)
    assert violation.field == "content"
    assert violation.reason == "TOO_LONG"
    assert violation.description == (
        f"{label.value} blocks hold at most {size} characters; got {size + 1}"
    )


def test_limits_come_from_the_limits_given() -> None:
    small = BlockLimits(core_max_chars=5, core_max_entries=2, archival_max_chars=7)
    assert reasons(BlockLabel.CORE, "12345") == []
    assert reasons(BlockLabel.CORE, "123456", small) == ["TOO_LONG"]
    assert reasons(BlockLabel.CORE, "a\nb\nc", small) == ["TOO_MANY_ENTRIES"]
    assert reasons(BlockLabel.ARCHIVAL, "1234567", small) == []
    assert reasons(BlockLabel.ARCHIVAL, "12345678", small) == ["TOO_LONG"]


# --- entries -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "count"),
    [
        ("", 0),
        ("\n\n  \n\t\n", 0),
        ("one", 1),
        ("one\n", 1),
        ("one\n\n\ntwo", 2),
        ("  one  \r\ntwo\r\n", 2),
        ("one\rtwo", 2),
        ("one\u2028two", 2),
        (f"{EMOJI}\n{EMOJI}", 2),
    ],
)
def test_an_entry_is_a_non_empty_line(content: str, count: int) -> None:
    assert count_entries(content) == count


def test_entries_keep_their_line_numbers_and_are_stripped() -> None:
    assert entries("\n- first  \n\n   \n  - second\n") == [(2, "- first"), (5, "- second")]


def test_twenty_core_entries_pass_and_twenty_one_do_not() -> None:
    twenty = "\n\n".join(f"- fact {i}" for i in range(20))
    assert reasons(BlockLabel.CORE, twenty) == []
    (violation,) = content_violations(BlockLabel.CORE, twenty + "\n- one more", LIMITS)
    assert violation.reason == "TOO_MANY_ENTRIES"
    assert "at most 20 entries" in violation.description
    assert "got 21" in violation.description


def test_archival_blocks_have_no_entry_limit() -> None:
    assert reasons(BlockLabel.ARCHIVAL, "x\n" * 1000) == []


def test_a_block_both_too_long_and_too_many_entries_reports_both() -> None:
    content = "\n".join("y" * 300 for _ in range(21))
    assert reasons(BlockLabel.CORE, content) == ["TOO_LONG", "TOO_MANY_ENTRIES"]


def test_nul_characters_are_refused() -> None:
    assert reasons(BlockLabel.ARCHIVAL, "a\x00b") == ["INVALID_CHARACTER"]


# --- identity ----------------------------------------------------------------------------


def test_a_user_block_has_no_agent_id_and_an_agent_block_has_one() -> None:
    assert block_key(BlockLabel.CORE, BlockScope.USER, "") == BlockKey(
        BlockLabel.CORE, BlockScope.USER, ""
    )
    assert block_key(BlockLabel.ARCHIVAL, BlockScope.AGENT, "coder").agent_id == "coder"
    assert block_key(BlockLabel.CORE, BlockScope.AGENT, "a" * 255).agent_id == "a" * 255


@pytest.mark.parametrize(
    ("label", "scope", "agent_id", "expected"),
    [
        (None, BlockScope.USER, "", {"label": "REQUIRED"}),
        (BlockLabel.CORE, None, "", {"scope": "INVALID_SCOPE"}),
        (BlockLabel.CORE, BlockScope.AGENT, "", {"agent_id": "REQUIRED"}),
        (BlockLabel.CORE, BlockScope.USER, "coder", {"agent_id": "NOT_ALLOWED"}),
        (BlockLabel.CORE, BlockScope.AGENT, "a" * 256, {"agent_id": "TOO_LONG"}),
        (BlockLabel.CORE, BlockScope.AGENT, "a\x00b", {"agent_id": "INVALID_CHARACTER"}),
        (
            None,
            None,
            "a" * 256,
            {"label": "REQUIRED", "scope": "INVALID_SCOPE", "agent_id": "TOO_LONG"},
        ),
    ],
)
def test_bad_block_identities_are_refused_field_by_field(
    label: BlockLabel | None, scope: BlockScope | None, agent_id: str, expected: dict[str, str]
) -> None:
    with pytest.raises(InvalidArgument) as error:
        block_key(label, scope, agent_id)
    assert violations_of(error) == expected


@pytest.mark.parametrize(
    ("scope_filter", "agent_id"),
    [
        (ScopeFilter.USER, ""),
        (ScopeFilter.AGENT, ""),
        (ScopeFilter.AGENT, "coder"),
        (ScopeFilter.ALL, ""),
        (ScopeFilter.ALL, "coder"),
    ],
)
def test_list_filters_take_an_agent_id_except_the_user_filter(
    scope_filter: ScopeFilter, agent_id: str
) -> None:
    assert list_filter(scope_filter, agent_id) is scope_filter


@pytest.mark.parametrize(
    ("scope_filter", "agent_id", "expected"),
    [
        (None, "", {"scope_filter": "INVALID_SCOPE_FILTER"}),
        (ScopeFilter.USER, "coder", {"agent_id": "NOT_ALLOWED"}),
        (ScopeFilter.ALL, "a" * 256, {"agent_id": "TOO_LONG"}),
    ],
)
def test_bad_list_filters_are_refused(
    scope_filter: ScopeFilter | None, agent_id: str, expected: dict[str, str]
) -> None:
    with pytest.raises(InvalidArgument) as error:
        list_filter(scope_filter, agent_id)
    assert violations_of(error) == expected


# --- workspace blocks ----------------------------------------------------------------------


def test_a_workspace_block_has_a_workspace_id_and_no_agent_id() -> None:
    key = block_key(BlockLabel.CORE, BlockScope.WORKSPACE, "", "release")
    assert key == BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id="release")
    assert key.shared
    assert key.owner_id == "release"
    assert key.describe() == "core block of workspace 'release'"
    agent = block_key(BlockLabel.CORE, BlockScope.AGENT, "coder")
    assert not agent.shared
    assert agent.owner_id == "coder"
    assert block_key(BlockLabel.CORE, BlockScope.USER, "").owner_id == ""


@pytest.mark.parametrize(
    ("scope", "agent_id", "workspace_id", "expected"),
    [
        (BlockScope.WORKSPACE, "", "", {"workspace_id": "REQUIRED"}),
        (BlockScope.WORKSPACE, "coder", "release", {"agent_id": "NOT_ALLOWED"}),
        (
            BlockScope.WORKSPACE,
            "coder",
            "",
            {"agent_id": "NOT_ALLOWED", "workspace_id": "REQUIRED"},
        ),
        (BlockScope.USER, "", "release", {"workspace_id": "NOT_ALLOWED"}),
        (BlockScope.AGENT, "coder", "release", {"workspace_id": "NOT_ALLOWED"}),
        (BlockScope.WORKSPACE, "", "a" * 256, {"workspace_id": "TOO_LONG"}),
        (BlockScope.WORKSPACE, "", "a/b", {"workspace_id": "INVALID_CHARACTER"}),
        (None, "", "release", {"scope": "INVALID_SCOPE"}),
    ],
)
def test_bad_workspace_block_identities_are_refused_field_by_field(
    scope: BlockScope | None, agent_id: str, workspace_id: str, expected: dict[str, str]
) -> None:
    with pytest.raises(InvalidArgument) as error:
        block_key(BlockLabel.CORE, scope, agent_id, workspace_id)
    assert violations_of(error) == expected


@pytest.mark.parametrize(
    ("scope_filter", "agent_id", "workspace_id", "expected"),
    [
        (ScopeFilter.WORKSPACE, "", "", {"workspace_id": "REQUIRED"}),
        (ScopeFilter.WORKSPACE, "coder", "release", {"agent_id": "NOT_ALLOWED"}),
        (ScopeFilter.USER, "", "release", {"workspace_id": "NOT_ALLOWED"}),
        (ScopeFilter.AGENT, "", "release", {"workspace_id": "NOT_ALLOWED"}),
        (ScopeFilter.ALL, "", "a/b", {"workspace_id": "INVALID_CHARACTER"}),
    ],
)
def test_bad_workspace_list_filters_are_refused(
    scope_filter: ScopeFilter, agent_id: str, workspace_id: str, expected: dict[str, str]
) -> None:
    with pytest.raises(InvalidArgument) as error:
        list_filter(scope_filter, agent_id, workspace_id)
    assert violations_of(error) == expected


def test_list_filters_take_a_workspace_id_with_all_and_workspace() -> None:
    assert list_filter(ScopeFilter.WORKSPACE, "", "release") is ScopeFilter.WORKSPACE
    assert list_filter(ScopeFilter.ALL, "coder", "release") is ScopeFilter.ALL


def test_a_workspace_block_is_keyed_without_its_reader_and_a_users_with_it() -> None:
    """A workspace's block is the tenant's: every user who names it names one row (no
    user, the workspace's id as owner), while user and agent blocks stay each user's.
    The version's writer is still the caller."""
    from agent_memory.store.blocks import PgBlocks

    ana = PgBlocks(None, Principal("t", "ana", Role.EDITOR), None)  # type: ignore[arg-type]
    bo = PgBlocks(None, Principal("t", "bo", Role.READER), None)  # type: ignore[arg-type]
    shared = BlockKey(BlockLabel.CORE, BlockScope.WORKSPACE, workspace_id="release")
    assert ana._block(shared) == bo._block(shared)
    assert (ana._block(shared)["user_id"], ana._block(shared)["agent_id"]) == ("", "release")
    own = BlockKey(BlockLabel.CORE, BlockScope.AGENT, "release")
    assert (ana._block(own)["user_id"], bo._block(own)["user_id"]) == ("ana", "bo")
    assert ana._block(own)["scope"] != ana._block(shared)["scope"]


# --- times in conflict details -----------------------------------------------------------


def test_times_are_rfc3339_utc_with_six_fractional_digits() -> None:
    at = datetime(2026, 4, 30, 16, 20, 0, 123456, tzinfo=UTC)
    assert rfc3339(at) == "2026-04-30T16:20:00.123456Z"
    assert rfc3339(at.replace(microsecond=0)) == "2026-04-30T16:20:00.000000Z"
    east = at.astimezone(timezone(timedelta(hours=2)))
    assert rfc3339(east) == "2026-04-30T16:20:00.123456Z"
    assert rfc3339(None) == ""


# -- whose blocks a read reads --------------------------------------------------------


def test_a_read_is_of_the_callers_own_blocks_unless_an_orchestrator_names_a_user() -> None:
    ops = Principal(tenant_id="t", user_id="ops", role=Role.ORCHESTRATOR)
    assert reading_for(ops, "") is ops
    assert reading_for(ops, "ops") is ops
    assert reading_for(ops, "ana") == replace(ops, user_id="ana")
    for role in (Role.READER, Role.EDITOR):
        person = Principal(tenant_id="t", user_id="ben", role=role)
        assert reading_for(person, "ben") is person
        with pytest.raises(PermissionDenied) as refused:
            reading_for(person, "ana")
        assert refused.value.reason == "ROLE_FORBIDS"
    with pytest.raises(InvalidArgument) as bad:
        reading_for(ops, "a/b")
    assert [v.field for v in bad.value.violations] == ["user_id"]
