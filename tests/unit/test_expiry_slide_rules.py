"""How far a use moves an expiry: its bounds, how an update names it, and how the
OpenAPI document states it. The slide itself is held by the store contract."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from google.protobuf import duration_pb2

from agent_memory.api import convert
from agent_memory.api.field_rules import BY_FIELD, Span
from agent_memory.api.memory_servicer import SETTINGS_SWITCHES, WORKSPACE_SETTINGS
from agent_memory.domain.agents import EXPIRY_SLIDE_MAX, WorkspaceSettings
from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.identity import Principal
from agent_memory.service.agents import Agents, Workspaces
from agentmemory.v1 import memory_pb2
from tests.fakes import FakeStore

T = TypeVar("T")
ALICE = Principal("acme", "alice")
WEEK = timedelta(days=7)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def violation(error: InvalidArgument) -> tuple[str, str]:
    (found,) = error.violations
    return found.field, found.reason


@pytest.mark.parametrize("slide", [timedelta(0), timedelta(seconds=1), WEEK, EXPIRY_SLIDE_MAX])
def test_a_slide_from_zero_to_ten_years_is_stored(slide: timedelta) -> None:
    store = FakeStore()
    agent = run(Agents(store).update_settings(ALICE, "coder", {"expiry_slide": slide}))
    workspace = run(Workspaces(store).update_settings(ALICE, "repo", {"expiry_slide": slide}))
    assert agent.expiry_slide == workspace.expiry_slide == slide
    assert run(Workspaces(store).settings(ALICE, "repo")).expiry_slide == slide


@pytest.mark.parametrize(
    "slide", [-timedelta(microseconds=1), EXPIRY_SLIDE_MAX + timedelta(microseconds=1)]
)
def test_a_slide_below_zero_or_past_ten_years_is_refused(slide: timedelta) -> None:
    store = FakeStore()
    with pytest.raises(InvalidArgument) as agent:
        run(Agents(store).update_settings(ALICE, "coder", {"expiry_slide": slide}))
    with pytest.raises(InvalidArgument) as workspace:
        run(Workspaces(store).update_settings(ALICE, "repo", {"expiry_slide": slide}))
    for refused in (agent.value, workspace.value):
        assert violation(refused) == ("settings.expiry_slide", "OUT_OF_RANGE")
    assert run(Workspaces(store).settings(ALICE, "repo")) == WorkspaceSettings("repo")


def test_a_workspace_is_named_by_a_valid_id() -> None:
    with pytest.raises(InvalidArgument) as refused:
        run(Workspaces(FakeStore()).settings(ALICE, "a/b"))
    assert violation(refused.value)[0] == "workspace_id"


def test_an_update_without_a_mask_changes_the_settings_it_populates() -> None:
    wanted = memory_pb2.AgentSettings(agent_id="coder", review_decisions=True)
    wanted.expiry_slide.FromTimedelta(WEEK)
    changes = convert.settings_changes(wanted, None, SETTINGS_SWITCHES)
    assert changes == {"expiry_slide": WEEK, "review_decisions": True}
    # Unset, the slide is left as it is; named in a mask, it is turned off.
    bare = memory_pb2.WorkspaceSettings(workspace_id="repo")
    assert convert.settings_changes(bare, None, WORKSPACE_SETTINGS) == {}
    off = convert.settings_changes(bare, ["expiry_slide"], WORKSPACE_SETTINGS)
    assert off == {"expiry_slide": timedelta(0)}


def test_a_mask_naming_what_is_not_a_setting_is_refused() -> None:
    bare = memory_pb2.WorkspaceSettings(workspace_id="repo")
    with pytest.raises(InvalidArgument) as refused:
        convert.settings_changes(bare, ["updated_at"], WORKSPACE_SETTINGS)
    assert violation(refused.value) == ("update_mask", "INVALID_FIELD_MASK")


def test_a_duration_out_of_protobufs_range_is_refused() -> None:
    wanted = memory_pb2.WorkspaceSettings(workspace_id="repo")
    wanted.expiry_slide.CopyFrom(duration_pb2.Duration(seconds=1, nanos=-1))
    with pytest.raises(InvalidArgument) as refused:
        convert.settings_changes(wanted, ["expiry_slide"], WORKSPACE_SETTINGS)
    assert violation(refused.value) == ("settings.expiry_slide", "INVALID_DURATION")


def test_the_openapi_document_states_the_bound() -> None:
    for message in ("AgentSettings", "WorkspaceSettings"):
        rule = BY_FIELD[f"agentmemory.v1.{message}.expiry_slide"]
        assert rule == Span(int(EXPIRY_SLIDE_MAX.total_seconds()))
    pattern = re.compile(Span(int(EXPIRY_SLIDE_MAX.total_seconds())).schema(given=False)["pattern"])
    for taken in ("0s", "604800s", "1.5s", "315359999.999999999s", "315360000s", "315360000.0s"):
        assert pattern.match(taken), taken
    for refused in ("-1s", "315360000.5s", "315360001s", "999999999s", "7d", ""):
        assert not pattern.match(refused), refused
