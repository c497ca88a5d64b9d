"""Blocks: full-replacement text of a user, of a user plus one agent, or of a workspace.

A block is identified by its label and its owner within the caller's tenant: the
caller's user (user scope), the caller's user and one agent (agent scope), or one
workspace, shared by every user of the tenant who names it (workspace scope). Writes
are compare-and-set on ``updated_at``, which the store makes strictly later on every
accepted write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from agent_memory.domain.errors import FieldViolation, check
from agent_memory.domain.text_rules import name_violations

AGENT_ID_MAX_CHARS = 255


class BlockLabel(StrEnum):
    CORE = "core"
    ARCHIVAL = "archival"


class BlockScope(StrEnum):
    USER = "user"
    AGENT = "agent"
    WORKSPACE = "workspace"


class ScopeFilter(StrEnum):
    USER = "user"
    AGENT = "agent"
    WORKSPACE = "workspace"
    ALL = "all"


@dataclass(frozen=True)
class BlockLimits:
    """Size limits of block content, and how many versions of a block are kept."""

    core_max_chars: int = 4000
    core_max_entries: int = 20
    archival_max_chars: int = 8000
    versions_kept: int = 50

    def max_chars(self, label: BlockLabel) -> int:
        return self.core_max_chars if label is BlockLabel.CORE else self.archival_max_chars

    def max_entries(self, label: BlockLabel) -> int | None:
        """``None``: the label has no entry limit."""
        return self.core_max_entries if label is BlockLabel.CORE else None


@dataclass(frozen=True)
class BlockKey:
    """Which block of the caller: ``agent_id`` is set exactly for the agent scope,
    ``workspace_id`` exactly for the workspace scope."""

    label: BlockLabel
    scope: BlockScope
    agent_id: str = ""
    workspace_id: str = ""

    @property
    def owner_id(self) -> str:
        """The agent's or the workspace's id; empty for the user scope."""
        return self.workspace_id if self.scope is BlockScope.WORKSPACE else self.agent_id

    @property
    def shared(self) -> bool:
        """Whether the block is the tenant's (a workspace's) rather than one user's."""
        return self.scope is BlockScope.WORKSPACE

    def describe(self) -> str:
        if self.scope is BlockScope.USER:
            return f"user {self.label.value} block"
        if self.scope is BlockScope.WORKSPACE:
            return f"{self.label.value} block of workspace {self.workspace_id!r}"
        return f"{self.label.value} block of agent {self.agent_id!r}"


@dataclass(frozen=True)
class Block:
    key: BlockKey
    content: str
    version: int
    created_at: datetime
    updated_at: datetime
    # Archival blocks: the lines whose vector (of the model recall runs) is stored.
    indexed_line_count: int = 0

    @property
    def char_count(self) -> int:
        return len(self.content)

    @property
    def entry_count(self) -> int:
        return count_entries(self.content)

    @property
    def etag(self) -> str:
        return block_etag(self.version, self.updated_at)


@dataclass(frozen=True)
class BlockVersion:
    version: int
    content: str
    char_count: int
    writer_user_id: str
    written_at: datetime


@dataclass(frozen=True)
class BlockWrite:
    """What a compare-and-set write found: the block it wrote, or else the block as it is
    (``None`` when there is none)."""

    written: Block | None
    current: Block | None


@dataclass(frozen=True)
class ExpectedUpdatedAt:
    """The ``updated_at`` a writer last read, as its precondition.

    ``value`` is ``None`` when the time sent is finer than a microsecond: stored
    times never are, so such a precondition can never hold.
    """

    value: datetime | None


# Any write of a block as it is now (``If-Match: *``): the block must exist.
ANY_ETAG = "*"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BLOCK_ETAG_PATTERN = r'W/"([0-9]{1,18})\.([0-9]{1,19})"'
_BLOCK_ETAG = re.compile(BLOCK_ETAG_PATTERN)


def block_etag(version: int, updated_at: datetime) -> str:
    """A block's etag: its version and its write time to the microsecond, which the
    compare-and-set compares (so the etag and ``expected_updated_at`` agree)."""
    micros = (updated_at - _EPOCH) // timedelta(microseconds=1)
    return f'W/"{version}.{micros}"'


def expected_from_etag(etag: str) -> ExpectedUpdatedAt:
    """The write time an etag of :func:`block_etag` names.

    Raises:
        InvalidArgument: it is not an etag this service issued for a block.
    """
    found = _BLOCK_ETAG.fullmatch(etag.strip())
    try:
        if found is not None:
            return ExpectedUpdatedAt(_EPOCH + timedelta(microseconds=int(found.group(2))))
    except OverflowError:
        pass  # a time past any a block is written at: not one of ours
    check(
        [FieldViolation("etag", "is not an etag this service issued for a block", "INVALID_ETAG")]
    )
    raise AssertionError  # unreachable: check() raised


def entries(content: str) -> list[tuple[int, str]]:
    """The non-empty lines of ``content``, stripped, under their 1-based line numbers.

    Lines break wherever ``str.splitlines`` breaks them (``\\r\\n``, ``\\r``,
    ``\\u2028``, ...), so no line separator slips more entries past the limit.
    """
    return [
        (number, line.strip())
        for number, line in enumerate(content.splitlines(), start=1)
        if line.strip()
    ]


def count_entries(content: str) -> int:
    return len(entries(content))


def block_key(
    label: BlockLabel | None, scope: BlockScope | None, agent_id: str, workspace_id: str = ""
) -> BlockKey:
    """The block a request names; ``None`` stands for a label or scope not sent or not taken.

    Raises:
        InvalidArgument: no usable label or scope, or an agent or workspace id the
            scope cannot have.
    """
    violations: list[FieldViolation] = []
    if label is None:
        violations.append(
            FieldViolation("label", "must be BLOCK_LABEL_CORE or BLOCK_LABEL_ARCHIVAL", "REQUIRED")
        )
    if scope is None:
        violations.append(
            FieldViolation(
                "scope",
                "must be SCOPE_USER, SCOPE_AGENT or SCOPE_WORKSPACE "
                "(or give agent_id or workspace_id)",
                "INVALID_SCOPE",
            )
        )
    violations += agent_id_violations(scope, agent_id)
    violations += workspace_id_violations(scope, workspace_id)
    check(violations)
    if label is None or scope is None:
        raise AssertionError  # unreachable: check() raised
    return BlockKey(label, scope, agent_id, workspace_id)


def agent_id_violations(scope: BlockScope | None, agent_id: str) -> list[FieldViolation]:
    """Agent blocks need an agent id of at most 255 characters; user and workspace
    blocks have none."""
    if scope in (BlockScope.USER, BlockScope.WORKSPACE) and agent_id:
        return [FieldViolation("agent_id", f"must be empty for SCOPE_{scope.name}", "NOT_ALLOWED")]
    if scope is BlockScope.AGENT and not agent_id:
        return [FieldViolation("agent_id", "is required for SCOPE_AGENT", "REQUIRED")]
    if not agent_id:
        return []
    return name_violations("agent_id", agent_id, max_chars=AGENT_ID_MAX_CHARS)


def workspace_id_violations(scope: BlockScope | None, workspace_id: str) -> list[FieldViolation]:
    """Workspace blocks need a workspace id of at most 255 characters; user and agent
    blocks have none."""
    if scope in (BlockScope.USER, BlockScope.AGENT) and workspace_id:
        return [
            FieldViolation("workspace_id", f"must be empty for SCOPE_{scope.name}", "NOT_ALLOWED")
        ]
    if scope is BlockScope.WORKSPACE and not workspace_id:
        return [FieldViolation("workspace_id", "is required for SCOPE_WORKSPACE", "REQUIRED")]
    if not workspace_id:
        return []
    return name_violations("workspace_id", workspace_id, max_chars=AGENT_ID_MAX_CHARS)


def content_violations(
    label: BlockLabel, content: str, limits: BlockLimits
) -> list[FieldViolation]:
    """Limits in Unicode code points and non-empty lines; no NUL characters."""
    violations: list[FieldViolation] = []
    max_chars = limits.max_chars(label)
    if len(content) > max_chars:
        violations.append(
            FieldViolation(
                "content",
                f"{label.value} blocks hold at most {max_chars} characters; got {len(content)}",
                "TOO_LONG",
            )
        )
    max_entries = limits.max_entries(label)
    if max_entries is not None:
        count = count_entries(content)
        if count > max_entries:
            violations.append(
                FieldViolation(
                    "content",
                    f"{label.value} blocks hold at most {max_entries} entries "
                    f"(non-empty lines); got {count}",
                    "TOO_MANY_ENTRIES",
                )
            )
    if "\x00" in content:
        violations.append(
            FieldViolation("content", "must not contain NUL characters", "INVALID_CHARACTER")
        )
    return violations


def rfc3339(value: datetime | None) -> str:
    """UTC with exactly six fractional digits (``2026-04-30T16:20:00.123456Z``); empty for none."""
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def list_filter(
    scope_filter: ScopeFilter | None, agent_id: str, workspace_id: str = ""
) -> ScopeFilter:
    """The filter a ListBlocks request names; ``None`` stands for a value not taken.

    Raises:
        InvalidArgument: an unknown filter, or an agent or workspace id the filter
            cannot use.
    """
    violations: list[FieldViolation] = []
    if scope_filter is None:
        violations.append(
            FieldViolation(
                "scope_filter",
                "must be BLOCK_SCOPE_FILTER_USER, BLOCK_SCOPE_FILTER_AGENT, "
                "BLOCK_SCOPE_FILTER_WORKSPACE or BLOCK_SCOPE_FILTER_ALL",
                "INVALID_SCOPE_FILTER",
            )
        )
    if scope_filter in (ScopeFilter.USER, ScopeFilter.WORKSPACE) and agent_id:
        violations.append(
            FieldViolation(
                "agent_id",
                f"must be empty for BLOCK_SCOPE_FILTER_{scope_filter.name}",
                "NOT_ALLOWED",
            )
        )
    elif agent_id:
        violations += name_violations("agent_id", agent_id, max_chars=AGENT_ID_MAX_CHARS)
    if scope_filter in (ScopeFilter.USER, ScopeFilter.AGENT) and workspace_id:
        violations.append(
            FieldViolation(
                "workspace_id",
                f"must be empty for BLOCK_SCOPE_FILTER_{scope_filter.name}",
                "NOT_ALLOWED",
            )
        )
    elif scope_filter is ScopeFilter.WORKSPACE and not workspace_id:
        violations.append(
            FieldViolation(
                "workspace_id", "is required for BLOCK_SCOPE_FILTER_WORKSPACE", "REQUIRED"
            )
        )
    elif workspace_id:
        violations += name_violations("workspace_id", workspace_id, max_chars=AGENT_ID_MAX_CHARS)
    check(violations)
    if scope_filter is None:
        raise AssertionError  # unreachable: check() raised
    return scope_filter
