# Written by scripts/generate_types.py from the contract (proto/agentmemory/v1); never
# edit it by hand: change the protos, then run `make generate`.
"""The records the clients answer with: every message an RPC answers with, and every
message those carry, as a frozen dataclass of plain Python values (aware UTC
datetimes, timedeltas, enums, tuples, dicts, and None for what is unset), with its
protobuf message one attribute away (``.proto``).

    from agent_memory_client.types import Memory, MemorySource

    memory = client.get_memory(memory_id)
    if memory.source is MemorySource.MANUAL and memory.expire_time is not None:
        print(memory.key, memory.expire_time.isoformat())

Records compare by their fields; ``Memory.from_proto(message)`` reads a message into
its record, and a record made by hand (``Grounding(message_position=1)``) builds its
message from its fields when asked for ``.proto``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Self

from google.protobuf.message import Message

from agent_memory_client._records import (
    ProtoEnum,
    Record,
    datetime_of,
    dict_of,
    duration_of,
    struct_of,
    timedelta_of,
    timestamp_of,
)
from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    decision_pb2,
    decision_service_pb2,
    memory_pb2,
    memory_service_pb2,
    recall_pb2,
    recall_service_pb2,
)


class BlockLabel(ProtoEnum):
    """Which block of a scope."""

    UNSPECIFIED = 0
    """Not set. Rejected wherever a label is required."""

    CORE = 1
    """Injected into every prompt. Limits: 4000 characters and 20 entries (an
    entry is a non-empty line) by default."""

    ARCHIVAL = 2
    """Searched on demand by Recall. Limit: 8000 characters by default."""


class ReExaminable(ProtoEnum):
    """Whether decisions of a card type may be re-examined."""

    UNSPECIFIED = 0
    """Not set. Treated as RE_EXAMINABLE_NEVER on RegisterCardType."""

    NEVER = 1
    """Decisions of the type are never re-examined."""

    ALWAYS = 2
    """Decisions of the type may be re-examined whatever their status."""

    UNTIL_RESOLVED = 3
    """Decisions of the type may be re-examined while they are OPEN; once
    RESOLVED or EXPIRED they are closed to re-examination."""


class ResolutionStatus(ProtoEnum):
    """Where a decision stands. The user, not a re-examination, is the source of
    truth: only ResolveDecision changes it."""

    UNSPECIFIED = 0
    """Not set."""

    OPEN = 1
    """Still live, e.g. a trade that is still open."""

    RESOLVED = 2
    """Settled, e.g. a trade that hit its target or was closed."""

    EXPIRED = 3
    """Lapsed without being settled."""


class Scope(ProtoEnum):
    """Who a memory belongs to."""

    UNSPECIFIED = 0
    """Not set. Rejected wherever a scope is required."""

    AGENT = 1
    """Owned by one agent (memories) or by the user plus one agent (blocks)."""

    WORKSPACE = 2
    """Owned by one workspace and shared by every agent that runs in it."""

    USER = 3
    """Owned by the authenticated user in the tenant (blocks only)."""


class MemorySource(ProtoEnum):
    """What wrote a memory. Only MANUAL memories are editable by callers."""

    UNSPECIFIED = 0
    """Not set. Treated as MEMORY_SOURCE_MANUAL on write."""

    MANUAL = 1
    """Written under a key its writer chose: by a person, by an orchestrator, or by
    an agent through the MCP server's memory_upsert."""

    AUTO = 2
    """Written by automatic extraction (ExtractMemories)."""

    DIRECTOR = 3
    """A director learning (RecordLearning)."""

    MEMORIZE = 4
    """Written by the Memorize tool."""


class HoldReason(ProtoEnum):
    """Why a memory is held for review."""

    UNSPECIFIED = 0
    """Not held, or held before reasons were kept."""

    INSTRUCTION = 1
    """The learned screen read the text as an instruction to the assistant
    rather than a fact. Approve it only if it is a fact or a preference."""

    CREDENTIAL = 2
    """The learned screen read the text as a credential (a password, code, PIN
    or key). Delete it unless it is not one: a memory is no place for one."""

    REQUESTED = 3
    """A caller held it with UpdateMemory."""


class MemoryEventType(ProtoEnum):
    """What happened to a memory."""

    UNSPECIFIED = 0
    """Not set."""

    CREATED = 1
    """The memory was created."""

    UPDATED = 2
    """The memory's key, value, importance or annotations changed."""

    PINNED = 3
    """The memory was pinned."""

    UNPINNED = 4
    """The memory was unpinned."""

    DELETED = 5
    """The memory was deleted."""

    SUPERSEDED = 6
    """The memory was superseded by another (see Memory.superseded_by)."""


class ExtractionOutcome(ProtoEnum):
    """How one extraction pass ended."""

    UNSPECIFIED = 0
    """Not set."""

    COMPLETED = 1
    """The model's facts were considered; some may have been written."""

    SKIPPED_TOO_SHORT = 2
    """The transcript was under the minimum length; no model call was made."""

    SKIPPED_BUDGET = 3
    """The pass could not fit the per-pass budget; no model call was made."""

    MODEL_ERROR = 4
    """The model call failed; nothing was written."""

    TIMEOUT = 5
    """The model call timed out; nothing was written."""

    REFUSED = 6
    """The model refused; nothing was written."""

    MALFORMED_REPLY = 7
    """The model's reply could not be parsed; nothing was written."""

    QUEUED = 8
    """The pass was queued to run later; see job_id."""

    NO_FACTS = 9
    """The model found no facts worth keeping."""

    SKIPPED_MEMORY_DISABLED = 10
    """Agent memory is off and the run has no workspace, so nothing could be
    written; no model call was made."""


class ExtractionJobState(ProtoEnum):
    """Where a queued extraction pass stands."""

    UNSPECIFIED = 0
    """Not set."""

    QUEUED = 1
    """Waiting for its run to settle, or for a retry after a model error."""

    RUNNING = 2
    """A worker is running the pass."""

    DONE = 3
    """The pass ended; outcome says how."""


class RunKind(ProtoEnum):
    """What started a run."""

    UNSPECIFIED = 0
    """Not set: read as RUN_KIND_SCHEDULED."""

    SCHEDULED = 1
    """A heartbeat run, fired on its schedule or by hand. Counts toward
    runs_since_reset and its warning."""

    CHAT = 2
    """A chat turn. Shares the session, but does not count toward
    runs_since_reset."""


class ActiveSessionStatus(ProtoEnum):
    """Whether an agent's next run resumes a shared model session."""

    UNSPECIFIED = 0
    """Not set."""

    FRESH = 1
    """No session to resume: active memory is off, or no run has reported a
    session id since it was enabled or reset. The next run starts clean."""

    CARRYING_CONTEXT = 2
    """A session id is stored; the next run resumes it."""


class RecallMode(ProtoEnum):
    """How Recall ranks on a server."""

    UNSPECIFIED = 0
    """Not set."""

    LEXICAL = 1
    """By words only: no embedder, or no pgvector in the database."""

    HYBRID = 2
    """By words and meaning: lines and memories with a vector of the server's
    model are also found by what they mean."""


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Block(Record[block_pb2.Block]):
    """A full-replacement memory block: of a user (SCOPE_USER), of a user plus one
    agent (SCOPE_AGENT), or of a workspace (SCOPE_WORKSPACE), which every user of
    the tenant who names the workspace shares."""

    MESSAGE = block_pb2.Block

    label: BlockLabel = BlockLabel.UNSPECIFIED
    """Output only. The block's label."""

    scope: Scope = Scope.UNSPECIFIED
    """Output only. SCOPE_USER, SCOPE_AGENT or SCOPE_WORKSPACE."""

    agent_id: str = ""
    """Output only. The agent id for SCOPE_AGENT; empty otherwise."""

    content: str = ""
    """Output only. The whole block text."""

    char_count: int = 0
    """Output only. Length of content in characters."""

    entry_count: int = 0
    """Output only. Number of non-empty lines in content."""

    updated_at: datetime | None = None
    """Output only. When the block was last written, at microsecond precision.
    Send it back as expected_updated_at to replace the block."""

    version: int = 0
    """Output only. Number of the latest version, starting at 1."""

    created_at: datetime | None = None
    """Output only. When the block was first written."""

    indexed_line_count: int = 0
    """Output only. Archival blocks: how many of the entry_count lines have a
    vector of the model recall runs, so that recall finds them by meaning as
    well as by their words. Lines are embedded in the background after a
    write (a line whose text the block held before keeps its vector); 0 for
    core blocks and when recall is by words only. Counted up to 100,000: a
    larger block says 100,000 once that many are embedded."""

    etag: str = ""
    """Output only. The block's concurrency token (AIP-154): it changes with every
    write. Send it back as the etag of WriteBlock or DeleteBlock (or in
    If-Match over HTTP) to change the block only as it was read."""

    workspace_id: str = ""
    """Output only. The workspace id for SCOPE_WORKSPACE; empty otherwise."""

    @classmethod
    def from_proto(cls, message: block_pb2.Block) -> Self:
        return cls(
            label=BlockLabel(message.label),
            scope=Scope(message.scope),
            agent_id=message.agent_id,
            content=message.content,
            char_count=message.char_count,
            entry_count=message.entry_count,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
            version=message.version,
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
            indexed_line_count=message.indexed_line_count,
            etag=message.etag,
            workspace_id=message.workspace_id,
        )._kept(message)

    def _to_proto(self) -> block_pb2.Block:
        return block_pb2.Block(
            label=self.label.number,
            scope=self.scope.number,
            agent_id=self.agent_id,
            content=self.content,
            char_count=self.char_count,
            entry_count=self.entry_count,
            updated_at=timestamp_of(self.updated_at),
            version=self.version,
            created_at=timestamp_of(self.created_at),
            indexed_line_count=self.indexed_line_count,
            etag=self.etag,
            workspace_id=self.workspace_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class BlockVersion(Record[block_pb2.BlockVersion]):
    """One accepted write of a block."""

    MESSAGE = block_pb2.BlockVersion

    version: int = 0
    """Output only. The version number, starting at 1."""

    content: str = ""
    """Output only. The whole block text as written."""

    writer_user_id: str = ""
    """Output only. The user whose credentials wrote it."""

    written_at: datetime | None = None
    """Output only. When it was written; equals the block's updated_at then."""

    char_count: int = 0
    """Output only. Length of content in characters."""

    @classmethod
    def from_proto(cls, message: block_pb2.BlockVersion) -> Self:
        return cls(
            version=message.version,
            content=message.content,
            writer_user_id=message.writer_user_id,
            written_at=datetime_of(message.written_at) if message.HasField("written_at") else None,
            char_count=message.char_count,
        )._kept(message)

    def _to_proto(self) -> block_pb2.BlockVersion:
        return block_pb2.BlockVersion(
            version=self.version,
            content=self.content,
            writer_user_id=self.writer_user_id,
            written_at=timestamp_of(self.written_at),
            char_count=self.char_count,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetBlockResponse(Record[block_service_pb2.GetBlockResponse]):
    """Response for GetBlock."""

    MESSAGE = block_service_pb2.GetBlockResponse

    block: Block | None = None
    """The block."""

    @classmethod
    def from_proto(cls, message: block_service_pb2.GetBlockResponse) -> Self:
        return cls(
            block=Block.from_proto(message.block) if message.HasField("block") else None,
        )._kept(message)

    def _to_proto(self) -> block_service_pb2.GetBlockResponse:
        return block_service_pb2.GetBlockResponse(
            block=None if self.block is None else self.block.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class DeleteBlockResponse(Record[block_service_pb2.DeleteBlockResponse]):
    """Response for DeleteBlock. Empty; may grow fields."""

    MESSAGE = block_service_pb2.DeleteBlockResponse

    @classmethod
    def from_proto(cls, message: block_service_pb2.DeleteBlockResponse) -> Self:
        return cls()._kept(message)

    def _to_proto(self) -> block_service_pb2.DeleteBlockResponse:
        return block_service_pb2.DeleteBlockResponse()


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListBlocksResponse(Record[block_service_pb2.ListBlocksResponse]):
    """Response for ListBlocks."""

    MESSAGE = block_service_pb2.ListBlocksResponse

    blocks: tuple[Block, ...] = ()
    """The blocks."""

    @classmethod
    def from_proto(cls, message: block_service_pb2.ListBlocksResponse) -> Self:
        return cls(
            blocks=tuple(Block.from_proto(v) for v in message.blocks),
        )._kept(message)

    def _to_proto(self) -> block_service_pb2.ListBlocksResponse:
        return block_service_pb2.ListBlocksResponse(
            blocks=[v.proto for v in self.blocks],
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class WriteBlockResponse(Record[block_service_pb2.WriteBlockResponse]):
    """Response for WriteBlock."""

    MESSAGE = block_service_pb2.WriteBlockResponse

    block: Block | None = None
    """The block as stored."""

    @classmethod
    def from_proto(cls, message: block_service_pb2.WriteBlockResponse) -> Self:
        return cls(
            block=Block.from_proto(message.block) if message.HasField("block") else None,
        )._kept(message)

    def _to_proto(self) -> block_service_pb2.WriteBlockResponse:
        return block_service_pb2.WriteBlockResponse(
            block=None if self.block is None else self.block.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListBlockVersionsResponse(Record[block_service_pb2.ListBlockVersionsResponse]):
    """Response for ListBlockVersions."""

    MESSAGE = block_service_pb2.ListBlockVersionsResponse

    versions: tuple[BlockVersion, ...] = ()
    """The page of versions, newest first."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    @classmethod
    def from_proto(cls, message: block_service_pb2.ListBlockVersionsResponse) -> Self:
        return cls(
            versions=tuple(BlockVersion.from_proto(v) for v in message.versions),
            next_page_token=message.next_page_token,
        )._kept(message)

    def _to_proto(self) -> block_service_pb2.ListBlockVersionsResponse:
        return block_service_pb2.ListBlockVersionsResponse(
            versions=[v.proto for v in self.versions],
            next_page_token=self.next_page_token,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CardType(Record[decision_pb2.CardType]):
    """A kind of decision card. Registering one is configuration: adding a card
    type needs no code change."""

    MESSAGE = decision_pb2.CardType

    name: str = ""
    """Required. A short slug unique in the tenant: lowercase letters, digits,
    `-` and `_`, starting with a letter, at most 64 characters, e.g.
    `trade-decision`."""

    re_examinable: ReExaminable = ReExaminable.UNSPECIFIED
    """Optional. Whether its decisions may be re-examined. Unset means
    RE_EXAMINABLE_NEVER."""

    actions: tuple[str, ...] = ()
    """Optional. The vocabulary of a re-examination's suggested_action, e.g.
    HOLD, CLOSE, SCALE. Each an uppercase word matching
    `^[A-Z][A-Z0-9_]*$`, at most 32 characters; at most 50 words. Empty
    allows any such word."""

    decision_actions: tuple[str, ...] = ()
    """Optional. The vocabulary of a decision's action, e.g. LONG, SHORT, WAIT.
    Same format as actions. Empty allows any such word."""

    created_at: datetime | None = None
    """Output only. When the card type was first registered."""

    updated_at: datetime | None = None
    """Output only. When the card type was last registered."""

    @classmethod
    def from_proto(cls, message: decision_pb2.CardType) -> Self:
        return cls(
            name=message.name,
            re_examinable=ReExaminable(message.re_examinable),
            actions=tuple(message.actions),
            decision_actions=tuple(message.decision_actions),
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
        )._kept(message)

    def _to_proto(self) -> decision_pb2.CardType:
        return decision_pb2.CardType(
            name=self.name,
            re_examinable=self.re_examinable.number,
            actions=self.actions,
            decision_actions=self.decision_actions,
            created_at=timestamp_of(self.created_at),
            updated_at=timestamp_of(self.updated_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Decision(Record[decision_pb2.Decision]):
    """One run's structured result, as a decision card. Its result is written
    once and never changed; re-examinations annotate it from beside it."""

    MESSAGE = decision_pb2.Decision

    id: str = ""
    """Output only. Server-assigned opaque id."""

    run_id: str = ""
    """Required. The orchestrator's own id of the run that decided, 1 to 255
    characters; one decision per run."""

    agent_id: str = ""
    """Required. The orchestrator's own agent id."""

    card_type: str = ""
    """Required. The name of a registered card type."""

    action: str = ""
    """Required. The decision in one uppercase word, e.g. WAIT: matching
    `^[A-Z][A-Z0-9_]*$`, at most 32 characters, and in the card type's
    decision_actions when it has any."""

    summary: str = ""
    """Required. One line, at most 200 characters, e.g. "range unresolved".
    Must not carry a secret."""

    result: dict[str, Any] | None = None
    """Optional. The run's full structured result, at most 64 KiB as JSON,
    nested at most 20 levels (TOO_DEEP).
    Must not carry a secret. Omitted by ListRecentDecisions unless
    include_result is set."""

    resolution_status: ResolutionStatus = ResolutionStatus.UNSPECIFIED
    """Output only. OPEN when recorded; changed by ResolveDecision."""

    created_at: datetime | None = None
    """Output only. When the decision was recorded."""

    resolved_at: datetime | None = None
    """Output only. When it became RESOLVED or EXPIRED; unset while OPEN."""

    compact: str = ""
    """Output only. The compact review line, e.g.
    "2d ago · WAIT · range unresolved": age by the server's clock (whole
    s, m, h or d), action, summary. Set by ListRecentDecisions."""

    latest_conviction_score: int | None = None
    """Output only. The conviction score of the newest re-examination; unset
    when there is none."""

    reexamination_count: int = 0
    """Output only. How many re-examinations the decision has."""

    @classmethod
    def from_proto(cls, message: decision_pb2.Decision) -> Self:
        return cls(
            id=message.id,
            run_id=message.run_id,
            agent_id=message.agent_id,
            card_type=message.card_type,
            action=message.action,
            summary=message.summary,
            result=dict_of(message.result) if message.HasField("result") else None,
            resolution_status=ResolutionStatus(message.resolution_status),
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
            resolved_at=datetime_of(message.resolved_at)
            if message.HasField("resolved_at")
            else None,
            compact=message.compact,
            latest_conviction_score=message.latest_conviction_score
            if message.HasField("latest_conviction_score")
            else None,
            reexamination_count=message.reexamination_count,
        )._kept(message)

    def _to_proto(self) -> decision_pb2.Decision:
        return decision_pb2.Decision(
            id=self.id,
            run_id=self.run_id,
            agent_id=self.agent_id,
            card_type=self.card_type,
            action=self.action,
            summary=self.summary,
            result=struct_of(self.result),
            resolution_status=self.resolution_status.number,
            created_at=timestamp_of(self.created_at),
            resolved_at=timestamp_of(self.resolved_at),
            compact=self.compact,
            latest_conviction_score=self.latest_conviction_score,
            reexamination_count=self.reexamination_count,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Reexamination(Record[decision_pb2.Reexamination]):
    """A later run's fresh read on a decision. An annotation beside the
    decision: the decision itself never changes."""

    MESSAGE = decision_pb2.Reexamination

    id: str = ""
    """Output only. Server-assigned opaque id."""

    parent_decision_id: str = ""
    """Required. The decision re-examined."""

    run_id: str = ""
    """Required. The orchestrator's own id of the re-examining run, 1 to 255
    characters; one re-examination per run."""

    conviction_score: int | None = None
    """Required. 0 (the original conclusion is fully invalidated) to 100
    (fully confirmed)."""

    notes: str = ""
    """Required. One sentence on what changed since the decision: one line, at
    most 500 characters. Must not carry a secret."""

    suggested_action: str = ""
    """Required. Advisory only: the card type's actions when it has any,
    otherwise any uppercase word matching `^[A-Z][A-Z0-9_]*$` of at most 32
    characters."""

    created_at: datetime | None = None
    """Output only. When the re-examination was recorded."""

    @classmethod
    def from_proto(cls, message: decision_pb2.Reexamination) -> Self:
        return cls(
            id=message.id,
            parent_decision_id=message.parent_decision_id,
            run_id=message.run_id,
            conviction_score=message.conviction_score
            if message.HasField("conviction_score")
            else None,
            notes=message.notes,
            suggested_action=message.suggested_action,
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
        )._kept(message)

    def _to_proto(self) -> decision_pb2.Reexamination:
        return decision_pb2.Reexamination(
            id=self.id,
            parent_decision_id=self.parent_decision_id,
            run_id=self.run_id,
            conviction_score=self.conviction_score,
            notes=self.notes,
            suggested_action=self.suggested_action,
            created_at=timestamp_of(self.created_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RegisterCardTypeResponse(Record[decision_service_pb2.RegisterCardTypeResponse]):
    """Response for RegisterCardType."""

    MESSAGE = decision_service_pb2.RegisterCardTypeResponse

    card_type: CardType | None = None
    """The card type as stored."""

    created: bool = False
    """True when the call registered a new name, false when it replaced one."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.RegisterCardTypeResponse) -> Self:
        return cls(
            card_type=CardType.from_proto(message.card_type)
            if message.HasField("card_type")
            else None,
            created=message.created,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.RegisterCardTypeResponse:
        return decision_service_pb2.RegisterCardTypeResponse(
            card_type=None if self.card_type is None else self.card_type.proto,
            created=self.created,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecordDecisionResponse(Record[decision_service_pb2.RecordDecisionResponse]):
    """Response for RecordDecision."""

    MESSAGE = decision_service_pb2.RecordDecisionResponse

    decision: Decision | None = None
    """The decision as stored, with its id."""

    created: bool = False
    """True when the call recorded it, false when the run id already had it."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.RecordDecisionResponse) -> Self:
        return cls(
            decision=Decision.from_proto(message.decision)
            if message.HasField("decision")
            else None,
            created=message.created,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.RecordDecisionResponse:
        return decision_service_pb2.RecordDecisionResponse(
            decision=None if self.decision is None else self.decision.proto,
            created=self.created,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetDecisionResponse(Record[decision_service_pb2.GetDecisionResponse]):
    """Response for GetDecision."""

    MESSAGE = decision_service_pb2.GetDecisionResponse

    decision: Decision | None = None
    """The decision, with its result."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.GetDecisionResponse) -> Self:
        return cls(
            decision=Decision.from_proto(message.decision)
            if message.HasField("decision")
            else None,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.GetDecisionResponse:
        return decision_service_pb2.GetDecisionResponse(
            decision=None if self.decision is None else self.decision.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListRecentDecisionsResponse(Record[decision_service_pb2.ListRecentDecisionsResponse]):
    """Response for ListRecentDecisions."""

    MESSAGE = decision_service_pb2.ListRecentDecisionsResponse

    decisions: tuple[Decision, ...] = ()
    """The decisions, newest first, each with its compact line."""

    as_of: datetime | None = None
    """The server time the compact lines' ages are measured from."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.ListRecentDecisionsResponse) -> Self:
        return cls(
            decisions=tuple(Decision.from_proto(v) for v in message.decisions),
            as_of=datetime_of(message.as_of) if message.HasField("as_of") else None,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.ListRecentDecisionsResponse:
        return decision_service_pb2.ListRecentDecisionsResponse(
            decisions=[v.proto for v in self.decisions],
            as_of=timestamp_of(self.as_of),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ResolveDecisionResponse(Record[decision_service_pb2.ResolveDecisionResponse]):
    """Response for ResolveDecision."""

    MESSAGE = decision_service_pb2.ResolveDecisionResponse

    decision: Decision | None = None
    """The decision as stored, with its result."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.ResolveDecisionResponse) -> Self:
        return cls(
            decision=Decision.from_proto(message.decision)
            if message.HasField("decision")
            else None,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.ResolveDecisionResponse:
        return decision_service_pb2.ResolveDecisionResponse(
            decision=None if self.decision is None else self.decision.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecordReexaminationResponse(Record[decision_service_pb2.RecordReexaminationResponse]):
    """Response for RecordReexamination."""

    MESSAGE = decision_service_pb2.RecordReexaminationResponse

    reexamination: Reexamination | None = None
    """The re-examination as stored."""

    created: bool = False
    """True when the call recorded it, false when the run id already had it."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.RecordReexaminationResponse) -> Self:
        return cls(
            reexamination=Reexamination.from_proto(message.reexamination)
            if message.HasField("reexamination")
            else None,
            created=message.created,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.RecordReexaminationResponse:
        return decision_service_pb2.RecordReexaminationResponse(
            reexamination=None if self.reexamination is None else self.reexamination.proto,
            created=self.created,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListReexaminationsResponse(Record[decision_service_pb2.ListReexaminationsResponse]):
    """Response for ListReexaminations."""

    MESSAGE = decision_service_pb2.ListReexaminationsResponse

    reexaminations: tuple[Reexamination, ...] = ()
    """The re-examinations, oldest first."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.ListReexaminationsResponse) -> Self:
        return cls(
            reexaminations=tuple(Reexamination.from_proto(v) for v in message.reexaminations),
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.ListReexaminationsResponse:
        return decision_service_pb2.ListReexaminationsResponse(
            reexaminations=[v.proto for v in self.reexaminations],
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RenderReexaminationPromptResponse(
    Record[decision_service_pb2.RenderReexaminationPromptResponse]
):
    """Response for RenderReexaminationPrompt."""

    MESSAGE = decision_service_pb2.RenderReexaminationPromptResponse

    prompt: str = ""
    """The whole prompt of the re-examination run, as the agent reads it."""

    decision_id: str = ""
    """The decision the prompt re-examines."""

    card_type: str = ""
    """The decision's card type."""

    allowed_actions: tuple[str, ...] = ()
    """The words the reply's suggested_action may take: the card type's
    actions. Empty when the card type declares none, and then any uppercase
    word matching `^[A-Z][A-Z0-9_]*$` of at most 32 characters will do."""

    reexamination_count: int = 0
    """How many earlier re-examinations the prompt lists."""

    @classmethod
    def from_proto(cls, message: decision_service_pb2.RenderReexaminationPromptResponse) -> Self:
        return cls(
            prompt=message.prompt,
            decision_id=message.decision_id,
            card_type=message.card_type,
            allowed_actions=tuple(message.allowed_actions),
            reexamination_count=message.reexamination_count,
        )._kept(message)

    def _to_proto(self) -> decision_service_pb2.RenderReexaminationPromptResponse:
        return decision_service_pb2.RenderReexaminationPromptResponse(
            prompt=self.prompt,
            decision_id=self.decision_id,
            card_type=self.card_type,
            allowed_actions=self.allowed_actions,
            reexamination_count=self.reexamination_count,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Grounding(Record[memory_pb2.Grounding]):
    """A span of a conversation that supports a memory."""

    MESSAGE = memory_pb2.Grounding

    message_position: int = 0
    """Required. Zero-based position of the message in the conversation. Memorize
    refuses a grounding whose message, span (start_character, end_character
    within the message's content), raw event or raw span does not exist in the
    snapshot as it is stored after the call: a grounding needs a conversation."""

    provider_message_id: str = ""
    """Optional. The provider's id of the grounding message."""

    start_character: int = 0
    """Optional. Start offset (inclusive, in characters) in the message content."""

    end_character: int = 0
    """Optional. End offset (exclusive, in characters) in the message content."""

    quote: str = ""
    """Optional. The quoted text. At most 2000 characters; longer quotes are cut
    to 2000 characters."""

    raw_event_index: int | None = None
    """Optional. Index of the raw provider event the span came from, in the
    snapshot's raw_events. A grounding that sets it and leaves
    message_position, start_character and end_character at zero points into
    the raw event only."""

    raw_start_character: int | None = None
    """Optional. Start offset (inclusive, in characters) in the raw event; needs
    raw_event_index."""

    raw_end_character: int | None = None
    """Optional. End offset (exclusive, in characters) in the raw event; needs
    raw_event_index."""

    metadata: dict[str, Any] | None = None
    """Optional. Free-form metadata about the grounding, at most 64 KiB as JSON
    (no NaN, infinities or NUL characters), nested at most 20 levels. See
    MemorizeRequest.metadata for
    the limit of a memory's metadata as a whole."""

    @classmethod
    def from_proto(cls, message: memory_pb2.Grounding) -> Self:
        return cls(
            message_position=message.message_position,
            provider_message_id=message.provider_message_id,
            start_character=message.start_character,
            end_character=message.end_character,
            quote=message.quote,
            raw_event_index=message.raw_event_index
            if message.HasField("raw_event_index")
            else None,
            raw_start_character=message.raw_start_character
            if message.HasField("raw_start_character")
            else None,
            raw_end_character=message.raw_end_character
            if message.HasField("raw_end_character")
            else None,
            metadata=dict_of(message.metadata) if message.HasField("metadata") else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.Grounding:
        return memory_pb2.Grounding(
            message_position=self.message_position,
            provider_message_id=self.provider_message_id,
            start_character=self.start_character,
            end_character=self.end_character,
            quote=self.quote,
            raw_event_index=self.raw_event_index,
            raw_start_character=self.raw_start_character,
            raw_end_character=self.raw_end_character,
            metadata=struct_of(self.metadata),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ConversationMessage(Record[memory_pb2.ConversationMessage]):
    """One message of a conversation snapshot."""

    MESSAGE = memory_pb2.ConversationMessage

    role: str = ""
    """Required. The speaker, e.g. "user", "assistant", "tool"."""

    content: str = ""
    """Required. The message text."""

    provider_message_id: str = ""
    """Optional. The provider's id of the message."""

    created_at: datetime | None = None
    """Optional. When the message was created."""

    @classmethod
    def from_proto(cls, message: memory_pb2.ConversationMessage) -> Self:
        return cls(
            role=message.role,
            content=message.content,
            provider_message_id=message.provider_message_id,
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.ConversationMessage:
        return memory_pb2.ConversationMessage(
            role=self.role,
            content=self.content,
            provider_message_id=self.provider_message_id,
            created_at=timestamp_of(self.created_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Conversation(Record[memory_pb2.Conversation]):
    """A snapshot of the conversation a memory was drawn from, stored once per
    (provider, conversation_id) and replaced by each later Memorize of it,
    except that a message or raw event a stored grounding points into is never
    lost or changed."""

    MESSAGE = memory_pb2.Conversation

    provider: str = ""
    """Optional. The model provider, e.g. "anthropic"; empty means "unknown"."""

    conversation_id: str = ""
    """Required. The provider's or orchestrator's conversation id, 1 to 255
    characters: Memorize needs it, and every stored snapshot has one."""

    messages: tuple[ConversationMessage, ...] = ()
    """Optional. The messages, oldest first; at most 10000."""

    raw_events: tuple[str, ...] = ()
    """Optional. The raw provider events, oldest first, each as the provider sent
    it (usually JSON text); at most 10000, each at most 100000 characters,
    without NUL characters. Like every string of Memorize, refused when it
    carries a secret."""

    message_count: int = 0
    """Output only. How many messages the stored snapshot holds (also when
    messages are left out of the view)."""

    raw_event_count: int = 0
    """Output only. How many raw events the stored snapshot holds."""

    created_at: datetime | None = None
    """Output only. When the snapshot was first stored."""

    updated_at: datetime | None = None
    """Output only. When the snapshot was last replaced."""

    @classmethod
    def from_proto(cls, message: memory_pb2.Conversation) -> Self:
        return cls(
            provider=message.provider,
            conversation_id=message.conversation_id,
            messages=tuple(ConversationMessage.from_proto(v) for v in message.messages),
            raw_events=tuple(message.raw_events),
            message_count=message.message_count,
            raw_event_count=message.raw_event_count,
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.Conversation:
        return memory_pb2.Conversation(
            provider=self.provider,
            conversation_id=self.conversation_id,
            messages=[v.proto for v in self.messages],
            raw_events=self.raw_events,
            message_count=self.message_count,
            raw_event_count=self.raw_event_count,
            created_at=timestamp_of(self.created_at),
            updated_at=timestamp_of(self.updated_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Memory(Record[memory_pb2.Memory]):
    """A scoped key/value memory."""

    MESSAGE = memory_pb2.Memory

    id: str = ""
    """Output only. Server-assigned opaque id."""

    scope: Scope = Scope.UNSPECIFIED
    """Output only. SCOPE_AGENT or SCOPE_WORKSPACE, derived from the owner."""

    agent_id: str = ""
    """Output only. The owning agent id; empty for workspace memories."""

    workspace_id: str = ""
    """Output only. The owning workspace id; empty for agent memories."""

    key: str = ""
    """Required. 1 to 255 characters, unique per owner."""

    value: str = ""
    """Required. 1 to 2000 characters. Must not carry a secret."""

    pinned: bool = False
    """Optional. Pinned memories sort first. Default false."""

    importance: int = 0
    """Optional. 0 to 100; higher sorts first. Default 0."""

    source: MemorySource = MemorySource.UNSPECIFIED
    """Output only. What wrote the memory."""

    read_only: bool = False
    """Output only. True unless the source is MEMORY_SOURCE_MANUAL."""

    tags: tuple[str, ...] = ()
    """Optional. Tags, lowercase slugs of letters and digits in any script
    joined by dashes (Memorize and UpdateMemory slug what they are given; a tag
    of punctuation or symbols alone slugs to nothing and is dropped)."""

    confidence: float | None = None
    """Optional. Confidence in [0, 1] that the memory is true."""

    metadata: dict[str, Any] | None = None
    """Optional. Free-form metadata."""

    groundings: tuple[Grounding, ...] = ()
    """Optional. Conversation spans that support the memory."""

    created_at: datetime | None = None
    """Output only. When the memory was created."""

    updated_at: datetime | None = None
    """Output only. When the memory was last changed."""

    etag: str = ""
    """Output only. Changes on every write; send it back to guard an update or
    delete (AIP-154)."""

    conversation_id: str = ""
    """Output only. Id of the conversation snapshot the memory was drawn from."""

    conversation_provider: str = ""
    """Output only. The provider of the conversation the memory was drawn from
    (Memorize only)."""

    expire_time: datetime | None = None
    """When the memory expires (AIP-214); unset when it never does. An expired
    memory is never listed (unless asked), read, rendered or recalled, and is
    deleted by the server within minutes. Set by UpsertMemory and Memorize,
    changed or cleared by UpdateMemory, and moved later by a use when its
    owner's settings slide expiries (AgentSettings.expiry_slide,
    WorkspaceSettings.expiry_slide)."""

    superseded_by: str = ""
    """Output only. Id of the memory that replaced this one because it updated
    or contradicted it; empty while the memory is current. A superseded
    memory stays readable by id and in the audit trail, and is left out of
    listings (unless asked), rendering and recall. The replacement may since
    have been deleted."""

    last_used_time: datetime | None = None
    """Output only. When the memory last reached a model: rendered into a prompt
    by RenderPrompt or returned by Recall (to the minute: a use within a minute
    of the last one is not written again). Unset until then. Using a memory
    changes neither its etag nor its updated_at."""

    embedded: bool | None = None
    """Output only. Whether the memory can be recalled by meaning: true once the
    background indexer has stored its vector, made from its key and value as
    they are now with the model recall runs; false until then, and again
    after a write changes the key or value, until the indexer catches up
    (recall by words finds a memory at once either way); always false where
    the database cannot store vectors (no pgvector). Unset when the server
    runs no embedder, in a MemoryEvent's snapshots, and in export records."""

    valid_start_time: datetime | None = None
    """Optional. When the fact starts to hold in the world; unset: it always has.
    Not expire_time, which deletes the memory: a fact outside its period stays
    stored, listed and readable, but is not rendered into a prompt nor
    recalled. Set by UpsertMemory and Memorize, changed or cleared by
    UpdateMemory; must be before valid_end_time."""

    valid_end_time: datetime | None = None
    """Optional. When the fact stops holding in the world; unset: it holds on.
    Must be after valid_start_time. Superseding the memory sets it to the time
    of the supersession when it was unset or later."""

    note: str = ""
    """Optional. A note about the memory for the people who read it, one line of
    at most 2000 characters. Set by UpsertMemory, changed by UpdateMemory."""

    held_for_review: bool = False
    """Optional. True while the memory is held for review: it is stored, listed
    and readable, but not rendered into a prompt (a past read included),
    recalled, listed as a learning, nor shown to an extraction pass. The
    service's index worker holds a memory of any source whose text its
    learned screens read as an instruction to the assistant or as a
    credential rather than a fact, when the local model first embeds the text
    and whenever the text changes (a memory embedded before the screens
    existed: once, from its vector), unless a person wrote that text (a key
    of the editor role) or let it go; a hold is a new version. It never lets
    one go. A person approves a held memory by setting it false with
    UpdateMemory, or holds any memory by setting it true. An import keeps it.
    hold_reason says why."""

    hold_reason: HoldReason = HoldReason.UNSPECIFIED
    """Output only. Why the memory is held for review, for the person who
    decides: what a screen read its text as, or that a caller held it.
    Unset when it is not held (and for a hold made before reasons were
    kept). Set with the hold and cleared with it; a hold on a memory held
    already keeps its reason. A held memory whose text changes is judged
    again: a screen that holds the new text gives the reason, a screen's
    reason for the old text goes with it (leaving none), and a caller's
    request stands. An import keeps it."""

    @classmethod
    def from_proto(cls, message: memory_pb2.Memory) -> Self:
        return cls(
            id=message.id,
            scope=Scope(message.scope),
            agent_id=message.agent_id,
            workspace_id=message.workspace_id,
            key=message.key,
            value=message.value,
            pinned=message.pinned,
            importance=message.importance,
            source=MemorySource(message.source),
            read_only=message.read_only,
            tags=tuple(message.tags),
            confidence=message.confidence if message.HasField("confidence") else None,
            metadata=dict_of(message.metadata) if message.HasField("metadata") else None,
            groundings=tuple(Grounding.from_proto(v) for v in message.groundings),
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
            etag=message.etag,
            conversation_id=message.conversation_id,
            conversation_provider=message.conversation_provider,
            expire_time=datetime_of(message.expire_time)
            if message.HasField("expire_time")
            else None,
            superseded_by=message.superseded_by,
            last_used_time=datetime_of(message.last_used_time)
            if message.HasField("last_used_time")
            else None,
            embedded=message.embedded if message.HasField("embedded") else None,
            valid_start_time=datetime_of(message.valid_start_time)
            if message.HasField("valid_start_time")
            else None,
            valid_end_time=datetime_of(message.valid_end_time)
            if message.HasField("valid_end_time")
            else None,
            note=message.note,
            held_for_review=message.held_for_review,
            hold_reason=HoldReason(message.hold_reason),
        )._kept(message)

    def _to_proto(self) -> memory_pb2.Memory:
        return memory_pb2.Memory(
            id=self.id,
            scope=self.scope.number,
            agent_id=self.agent_id,
            workspace_id=self.workspace_id,
            key=self.key,
            value=self.value,
            pinned=self.pinned,
            importance=self.importance,
            source=self.source.number,
            read_only=self.read_only,
            tags=self.tags,
            confidence=self.confidence,
            metadata=struct_of(self.metadata),
            groundings=[v.proto for v in self.groundings],
            created_at=timestamp_of(self.created_at),
            updated_at=timestamp_of(self.updated_at),
            etag=self.etag,
            conversation_id=self.conversation_id,
            conversation_provider=self.conversation_provider,
            expire_time=timestamp_of(self.expire_time),
            superseded_by=self.superseded_by,
            last_used_time=timestamp_of(self.last_used_time),
            embedded=self.embedded,
            valid_start_time=timestamp_of(self.valid_start_time),
            valid_end_time=timestamp_of(self.valid_end_time),
            note=self.note,
            held_for_review=self.held_for_review,
            hold_reason=self.hold_reason.number,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MemoryEvent(Record[memory_pb2.MemoryEvent]):
    """One entry of a memory's audit history."""

    MESSAGE = memory_pb2.MemoryEvent

    id: str = ""
    """Output only. Server-assigned opaque id."""

    memory_id: str = ""
    """Output only. The memory the event is about."""

    type: MemoryEventType = MemoryEventType.UNSPECIFIED
    """Output only. What happened."""

    actor_user_id: str = ""
    """Output only. The user whose credentials made the change."""

    occurred_at: datetime | None = None
    """Output only. When it happened."""

    old_memory: Memory | None = None
    """Output only. The memory before the change; unset for CREATED."""

    new_memory: Memory | None = None
    """Output only. The memory after the change; unset for DELETED."""

    @classmethod
    def from_proto(cls, message: memory_pb2.MemoryEvent) -> Self:
        return cls(
            id=message.id,
            memory_id=message.memory_id,
            type=MemoryEventType(message.type),
            actor_user_id=message.actor_user_id,
            occurred_at=datetime_of(message.occurred_at)
            if message.HasField("occurred_at")
            else None,
            old_memory=Memory.from_proto(message.old_memory)
            if message.HasField("old_memory")
            else None,
            new_memory=Memory.from_proto(message.new_memory)
            if message.HasField("new_memory")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.MemoryEvent:
        return memory_pb2.MemoryEvent(
            id=self.id,
            memory_id=self.memory_id,
            type=self.type.number,
            actor_user_id=self.actor_user_id,
            occurred_at=timestamp_of(self.occurred_at),
            old_memory=None if self.old_memory is None else self.old_memory.proto,
            new_memory=None if self.new_memory is None else self.new_memory.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AgentSettings(Record[memory_pb2.AgentSettings]):
    """Per-agent memory settings."""

    MESSAGE = memory_pb2.AgentSettings

    agent_id: str = ""
    """Required. The orchestrator's own agent id."""

    memory_enabled: bool = False
    """Optional. Gates agent memory in rendering and automatic writes.
    Default false."""

    updated_at: datetime | None = None
    """Output only. When the settings last changed; unset if never written."""

    active_memory_enabled: bool = False
    """Optional. Makes the agent's chat and scheduled runs share one model
    session (see ActiveSession). Default false. Turning it on starts fresh,
    like ResetActiveSession; turning it off keeps the stored session but
    GetActiveSession no longer offers it."""

    review_decisions: bool = False
    """Optional. Review previous decisions: RenderPrompt adds the agent's recent
    decision cards when its request does not say
    (memory_policy.include_recent_decisions unset). Independent of active
    memory. Default false."""

    expiry_slide: timedelta | None = None
    """Optional. Keeps what is used: when set above zero, a memory of the agent
    that has an expire_time and is rendered by RenderPrompt or returned by
    Recall gets expire_time = max(expire_time, the use's last_used_time +
    expiry_slide). A memory without an expire_time keeps none. Marked as a
    use is (at most once a minute per memory), the move writes no audit
    event and changes neither the memory's etag nor its updated_at: a use is
    not an edit, and an event per render would outgrow the memories. A read
    as of an earlier instant (as_of_time) still finds a memory that uses
    kept alive: one stored and live now never expired.
    From 0 (unset: off, the default) to 3650 days."""

    @classmethod
    def from_proto(cls, message: memory_pb2.AgentSettings) -> Self:
        return cls(
            agent_id=message.agent_id,
            memory_enabled=message.memory_enabled,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
            active_memory_enabled=message.active_memory_enabled,
            review_decisions=message.review_decisions,
            expiry_slide=timedelta_of(message.expiry_slide)
            if message.HasField("expiry_slide")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.AgentSettings:
        return memory_pb2.AgentSettings(
            agent_id=self.agent_id,
            memory_enabled=self.memory_enabled,
            updated_at=timestamp_of(self.updated_at),
            active_memory_enabled=self.active_memory_enabled,
            review_decisions=self.review_decisions,
            expiry_slide=duration_of(self.expiry_slide),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class WorkspaceSettings(Record[memory_pb2.WorkspaceSettings]):
    """Per-workspace memory settings."""

    MESSAGE = memory_pb2.WorkspaceSettings

    workspace_id: str = ""
    """Required. The workspace's id."""

    expiry_slide: timedelta | None = None
    """Optional. As AgentSettings.expiry_slide, for the workspace's memories.
    From 0 (unset: off, the default) to 3650 days."""

    updated_at: datetime | None = None
    """Output only. When the settings last changed; unset if never written."""

    @classmethod
    def from_proto(cls, message: memory_pb2.WorkspaceSettings) -> Self:
        return cls(
            workspace_id=message.workspace_id,
            expiry_slide=timedelta_of(message.expiry_slide)
            if message.HasField("expiry_slide")
            else None,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.WorkspaceSettings:
        return memory_pb2.WorkspaceSettings(
            workspace_id=self.workspace_id,
            expiry_slide=duration_of(self.expiry_slide),
            updated_at=timestamp_of(self.updated_at),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ExtractionUsage(Record[memory_pb2.ExtractionUsage]):
    """Token usage and cost of one extraction pass."""

    MESSAGE = memory_pb2.ExtractionUsage

    input_tokens: int = 0
    """Output only. Input tokens billed."""

    output_tokens: int = 0
    """Output only. Output tokens billed."""

    cost_usd: float = 0.0
    """Output only. Cost in US dollars."""

    @classmethod
    def from_proto(cls, message: memory_pb2.ExtractionUsage) -> Self:
        return cls(
            input_tokens=message.input_tokens,
            output_tokens=message.output_tokens,
            cost_usd=message.cost_usd,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.ExtractionUsage:
        return memory_pb2.ExtractionUsage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class DroppedFact(Record[memory_pb2.DroppedFact]):
    """A fact the model proposed that was not written."""

    MESSAGE = memory_pb2.DroppedFact

    key: str = ""
    """Output only. The key the fact would have had."""

    value: str = ""
    """Output only. The proposed value; empty when the reason is
    SECRET_IN_VALUE or INSTRUCTION_NOT_FACT, so neither a secret nor an
    injection is ever echoed."""

    scope: Scope = Scope.UNSPECIFIED
    """Output only. The scope the model chose."""

    confidence: float = 0.0
    """Output only. The model's confidence in [0, 1]."""

    reason: str = ""
    """Output only. A stable UPPER_SNAKE word: LOW_CONFIDENCE, DUPLICATE,
    MEMORY_DISABLED, SECRET_IN_VALUE, INSTRUCTION_NOT_FACT (an order to the
    assistant, not a fact), OVER_LIMIT, ALREADY_KNOWN (the model
    said an existing memory holds it), UNKNOWN_TARGET (the memory it would
    update or supersede is not one it was shown), TARGET_PROTECTED (that
    memory was written by a person or a director), ..."""

    @classmethod
    def from_proto(cls, message: memory_pb2.DroppedFact) -> Self:
        return cls(
            key=message.key,
            value=message.value,
            scope=Scope(message.scope),
            confidence=message.confidence,
            reason=message.reason,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.DroppedFact:
        return memory_pb2.DroppedFact(
            key=self.key,
            value=self.value,
            scope=self.scope.number,
            confidence=self.confidence,
            reason=self.reason,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ExtractionJob(Record[memory_pb2.ExtractionJob]):
    """A queued extraction pass (ExtractMemories with queued set) and, once it is
    done, what it did. Its transcript is never returned."""

    MESSAGE = memory_pb2.ExtractionJob

    id: str = ""
    """Output only. Server-assigned opaque id, as ExtractMemories returned it."""

    state: ExtractionJobState = ExtractionJobState.UNSPECIFIED
    """Output only. Where the pass stands."""

    attempts: int = 0
    """Output only. How many times a worker has claimed the pass."""

    outcome: ExtractionOutcome = ExtractionOutcome.UNSPECIFIED
    """Output only. How the pass ended; unset (UNSPECIFIED) until it is done."""

    detail: str = ""
    """Output only. A human-readable note on the last attempt; never carries a
    secret."""

    synthetic_session_id: str = ""
    """Output only. The synthetic session id usage is recorded under."""

    agent_id: str = ""
    """Output only. The agent whose run the pass reads."""

    workspace_id: str = ""
    """Output only. The run's workspace; empty when it has none."""

    created_at: datetime | None = None
    """Output only. When the pass was queued."""

    updated_at: datetime | None = None
    """Output only. When the job last changed."""

    run_after: datetime | None = None
    """Output only. When the pass may run (next); kept once it is done."""

    written_memory_ids: tuple[str, ...] = ()
    """Output only. Once done: the ids of the memories the pass wrote (created
    or updated in place), as they were then."""

    dropped: tuple[DroppedFact, ...] = ()
    """Output only. Once done: the facts proposed but not written, each with a
    reason; a secret is never echoed."""

    usage: ExtractionUsage | None = None
    """Output only. Once done: token usage and cost of the pass (zero when no
    model call was made); unset before."""

    superseded_memory_ids: tuple[str, ...] = ()
    """Output only. Once done: the ids of the memories the pass superseded."""

    @classmethod
    def from_proto(cls, message: memory_pb2.ExtractionJob) -> Self:
        return cls(
            id=message.id,
            state=ExtractionJobState(message.state),
            attempts=message.attempts,
            outcome=ExtractionOutcome(message.outcome),
            detail=message.detail,
            synthetic_session_id=message.synthetic_session_id,
            agent_id=message.agent_id,
            workspace_id=message.workspace_id,
            created_at=datetime_of(message.created_at) if message.HasField("created_at") else None,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
            run_after=datetime_of(message.run_after) if message.HasField("run_after") else None,
            written_memory_ids=tuple(message.written_memory_ids),
            dropped=tuple(DroppedFact.from_proto(v) for v in message.dropped),
            usage=ExtractionUsage.from_proto(message.usage) if message.HasField("usage") else None,
            superseded_memory_ids=tuple(message.superseded_memory_ids),
        )._kept(message)

    def _to_proto(self) -> memory_pb2.ExtractionJob:
        return memory_pb2.ExtractionJob(
            id=self.id,
            state=self.state.number,
            attempts=self.attempts,
            outcome=self.outcome.number,
            detail=self.detail,
            synthetic_session_id=self.synthetic_session_id,
            agent_id=self.agent_id,
            workspace_id=self.workspace_id,
            created_at=timestamp_of(self.created_at),
            updated_at=timestamp_of(self.updated_at),
            run_after=timestamp_of(self.run_after),
            written_memory_ids=self.written_memory_ids,
            dropped=[v.proto for v in self.dropped],
            usage=None if self.usage is None else self.usage.proto,
            superseded_memory_ids=self.superseded_memory_ids,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UsageRecord(Record[memory_pb2.UsageRecord]):
    """Recorded model usage, attributed to a synthetic session id."""

    MESSAGE = memory_pb2.UsageRecord

    id: str = ""
    """Output only. Server-assigned opaque id."""

    synthetic_session_id: str = ""
    """Output only. `memory-extract:<sessionId>` or
    `memory-extract:chain:<first 8 chars of the chain id>`."""

    model: str = ""
    """Output only. The model that was called."""

    input_tokens: int = 0
    """Output only. Input tokens billed."""

    output_tokens: int = 0
    """Output only. Output tokens billed."""

    cost_usd: float = 0.0
    """Output only. Cost in US dollars."""

    recorded_at: datetime | None = None
    """Output only. When the usage was recorded."""

    agent_id: str = ""
    """Output only. The agent the pass ran for."""

    outcome: ExtractionOutcome = ExtractionOutcome.UNSPECIFIED
    """Output only. How the pass ended."""

    @classmethod
    def from_proto(cls, message: memory_pb2.UsageRecord) -> Self:
        return cls(
            id=message.id,
            synthetic_session_id=message.synthetic_session_id,
            model=message.model,
            input_tokens=message.input_tokens,
            output_tokens=message.output_tokens,
            cost_usd=message.cost_usd,
            recorded_at=datetime_of(message.recorded_at)
            if message.HasField("recorded_at")
            else None,
            agent_id=message.agent_id,
            outcome=ExtractionOutcome(message.outcome),
        )._kept(message)

    def _to_proto(self) -> memory_pb2.UsageRecord:
        return memory_pb2.UsageRecord(
            id=self.id,
            synthetic_session_id=self.synthetic_session_id,
            model=self.model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            recorded_at=timestamp_of(self.recorded_at),
            agent_id=self.agent_id,
            outcome=self.outcome.number,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AgentRun(Record[memory_pb2.AgentRun]):
    """One finished run of an agent, as recorded."""

    MESSAGE = memory_pb2.AgentRun

    run_id: str = ""
    """Output only. The orchestrator's run id."""

    kind: RunKind = RunKind.UNSPECIFIED
    """Output only. What started it."""

    session_id_before: str = ""
    """Output only. The session id it started with; empty when it started clean."""

    session_id_after: str = ""
    """Output only. The session id it ended with; empty when it failed."""

    carried: bool = False
    """Output only. Whether its session id became the agent's shared session
    (active memory was on and it reported one)."""

    recorded_at: datetime | None = None
    """Output only. When it was recorded."""

    render_time: datetime | None = None
    """Output only. When its prompt was rendered, as RecordRunSession was told;
    unset when it was not."""

    @classmethod
    def from_proto(cls, message: memory_pb2.AgentRun) -> Self:
        return cls(
            run_id=message.run_id,
            kind=RunKind(message.kind),
            session_id_before=message.session_id_before,
            session_id_after=message.session_id_after,
            carried=message.carried,
            recorded_at=datetime_of(message.recorded_at)
            if message.HasField("recorded_at")
            else None,
            render_time=datetime_of(message.render_time)
            if message.HasField("render_time")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.AgentRun:
        return memory_pb2.AgentRun(
            run_id=self.run_id,
            kind=self.kind.number,
            session_id_before=self.session_id_before,
            session_id_after=self.session_id_after,
            carried=self.carried,
            recorded_at=timestamp_of(self.recorded_at),
            render_time=timestamp_of(self.render_time),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ActiveSession(Record[memory_pb2.ActiveSession]):
    """The model session an agent's chat and scheduled runs share while active
    memory is on."""

    MESSAGE = memory_pb2.ActiveSession

    agent_id: str = ""
    """Output only. The orchestrator's own agent id."""

    session_id: str = ""
    """Output only. The session id the next run resumes; empty when there is
    none, and always empty while active memory is off."""

    status: ActiveSessionStatus = ActiveSessionStatus.UNSPECIFIED
    """Output only. FRESH or CARRYING_CONTEXT."""

    runs_since_reset: int = 0
    """Output only. Successful scheduled runs (those that reported
    session_id_after; chat turns are not counted) recorded since the last
    reset or enable. 0 while active memory is off."""

    session_age: timedelta | None = None
    """Output only. How long ago the session id was last updated; unset when
    there is no session id."""

    warning: bool = False
    """Output only. True once runs_since_reset passes warning_threshold: the
    session is growing and a reset would keep runs fast."""

    last_reset_at: datetime | None = None
    """Output only. The anchor of runs_since_reset: the last reset or enable.
    Unset when active memory was never enabled nor reset."""

    enabled: bool = False
    """Output only. Whether active memory is on for the agent."""

    updated_at: datetime | None = None
    """Output only. When the session id was last updated; unset when there is
    no session id."""

    warning_threshold: int = 0
    """Output only. The server's warning threshold, in runs."""

    @classmethod
    def from_proto(cls, message: memory_pb2.ActiveSession) -> Self:
        return cls(
            agent_id=message.agent_id,
            session_id=message.session_id,
            status=ActiveSessionStatus(message.status),
            runs_since_reset=message.runs_since_reset,
            session_age=timedelta_of(message.session_age)
            if message.HasField("session_age")
            else None,
            warning=message.warning,
            last_reset_at=datetime_of(message.last_reset_at)
            if message.HasField("last_reset_at")
            else None,
            enabled=message.enabled,
            updated_at=datetime_of(message.updated_at) if message.HasField("updated_at") else None,
            warning_threshold=message.warning_threshold,
        )._kept(message)

    def _to_proto(self) -> memory_pb2.ActiveSession:
        return memory_pb2.ActiveSession(
            agent_id=self.agent_id,
            session_id=self.session_id,
            status=self.status.number,
            runs_since_reset=self.runs_since_reset,
            session_age=duration_of(self.session_age),
            warning=self.warning,
            last_reset_at=timestamp_of(self.last_reset_at),
            enabled=self.enabled,
            updated_at=timestamp_of(self.updated_at),
            warning_threshold=self.warning_threshold,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UpsertMemoryResponse(Record[memory_service_pb2.UpsertMemoryResponse]):
    """Response for UpsertMemory."""

    MESSAGE = memory_service_pb2.UpsertMemoryResponse

    memory: Memory | None = None
    """The memory as stored."""

    created: bool = False
    """True when the call created the memory, false when it updated one."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.UpsertMemoryResponse) -> Self:
        return cls(
            memory=Memory.from_proto(message.memory) if message.HasField("memory") else None,
            created=message.created,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.UpsertMemoryResponse:
        return memory_service_pb2.UpsertMemoryResponse(
            memory=None if self.memory is None else self.memory.proto,
            created=self.created,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetMemoryResponse(Record[memory_service_pb2.GetMemoryResponse]):
    """Response for GetMemory."""

    MESSAGE = memory_service_pb2.GetMemoryResponse

    memory: Memory | None = None
    """The memory."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetMemoryResponse) -> Self:
        return cls(
            memory=Memory.from_proto(message.memory) if message.HasField("memory") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetMemoryResponse:
        return memory_service_pb2.GetMemoryResponse(
            memory=None if self.memory is None else self.memory.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UpdateMemoryResponse(Record[memory_service_pb2.UpdateMemoryResponse]):
    """Response for UpdateMemory."""

    MESSAGE = memory_service_pb2.UpdateMemoryResponse

    memory: Memory | None = None
    """The memory as stored."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.UpdateMemoryResponse) -> Self:
        return cls(
            memory=Memory.from_proto(message.memory) if message.HasField("memory") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.UpdateMemoryResponse:
        return memory_service_pb2.UpdateMemoryResponse(
            memory=None if self.memory is None else self.memory.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PinMemoryResponse(Record[memory_service_pb2.PinMemoryResponse]):
    """Response for PinMemory."""

    MESSAGE = memory_service_pb2.PinMemoryResponse

    memory: Memory | None = None
    """The memory as stored."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.PinMemoryResponse) -> Self:
        return cls(
            memory=Memory.from_proto(message.memory) if message.HasField("memory") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.PinMemoryResponse:
        return memory_service_pb2.PinMemoryResponse(
            memory=None if self.memory is None else self.memory.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class DeleteMemoryResponse(Record[memory_service_pb2.DeleteMemoryResponse]):
    """Response for DeleteMemory. Empty; may grow fields."""

    MESSAGE = memory_service_pb2.DeleteMemoryResponse

    @classmethod
    def from_proto(cls, message: memory_service_pb2.DeleteMemoryResponse) -> Self:
        return cls()._kept(message)

    def _to_proto(self) -> memory_service_pb2.DeleteMemoryResponse:
        return memory_service_pb2.DeleteMemoryResponse()


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListMemoriesResponse(Record[memory_service_pb2.ListMemoriesResponse]):
    """Response for ListMemories."""

    MESSAGE = memory_service_pb2.ListMemoriesResponse

    memories: tuple[Memory, ...] = ()
    """The page of memories, in list order."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    total_size: int | None = None
    """How many memories match the request across all pages; always present,
    0 included."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListMemoriesResponse) -> Self:
        return cls(
            memories=tuple(Memory.from_proto(v) for v in message.memories),
            next_page_token=message.next_page_token,
            total_size=message.total_size if message.HasField("total_size") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListMemoriesResponse:
        return memory_service_pb2.ListMemoriesResponse(
            memories=[v.proto for v in self.memories],
            next_page_token=self.next_page_token,
            total_size=self.total_size,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class MemorizeResponse(Record[memory_service_pb2.MemorizeResponse]):
    """Response for Memorize."""

    MESSAGE = memory_service_pb2.MemorizeResponse

    memory: Memory | None = None
    """The memory as stored."""

    created: bool = False
    """True when the call created the memory, false when it already existed."""

    superseded: tuple[Memory, ...] = ()
    """The memories named in supersedes, as stored after the call."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.MemorizeResponse) -> Self:
        return cls(
            memory=Memory.from_proto(message.memory) if message.HasField("memory") else None,
            created=message.created,
            superseded=tuple(Memory.from_proto(v) for v in message.superseded),
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.MemorizeResponse:
        return memory_service_pb2.MemorizeResponse(
            memory=None if self.memory is None else self.memory.proto,
            created=self.created,
            superseded=[v.proto for v in self.superseded],
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecordLearningResponse(Record[memory_service_pb2.RecordLearningResponse]):
    """Response for RecordLearning."""

    MESSAGE = memory_service_pb2.RecordLearningResponse

    memory: Memory | None = None
    """The learning as stored."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.RecordLearningResponse) -> Self:
        return cls(
            memory=Memory.from_proto(message.memory) if message.HasField("memory") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.RecordLearningResponse:
        return memory_service_pb2.RecordLearningResponse(
            memory=None if self.memory is None else self.memory.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListLearningsResponse(Record[memory_service_pb2.ListLearningsResponse]):
    """Response for ListLearnings."""

    MESSAGE = memory_service_pb2.ListLearningsResponse

    memories: tuple[Memory, ...] = ()
    """The learnings, newest first."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListLearningsResponse) -> Self:
        return cls(
            memories=tuple(Memory.from_proto(v) for v in message.memories),
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListLearningsResponse:
        return memory_service_pb2.ListLearningsResponse(
            memories=[v.proto for v in self.memories],
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListMemoryEventsResponse(Record[memory_service_pb2.ListMemoryEventsResponse]):
    """Response for ListMemoryEvents."""

    MESSAGE = memory_service_pb2.ListMemoryEventsResponse

    events: tuple[MemoryEvent, ...] = ()
    """The page of events."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListMemoryEventsResponse) -> Self:
        return cls(
            events=tuple(MemoryEvent.from_proto(v) for v in message.events),
            next_page_token=message.next_page_token,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListMemoryEventsResponse:
        return memory_service_pb2.ListMemoryEventsResponse(
            events=[v.proto for v in self.events],
            next_page_token=self.next_page_token,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetAgentSettingsResponse(Record[memory_service_pb2.GetAgentSettingsResponse]):
    """Response for GetAgentSettings."""

    MESSAGE = memory_service_pb2.GetAgentSettingsResponse

    settings: AgentSettings | None = None
    """The agent's settings."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetAgentSettingsResponse) -> Self:
        return cls(
            settings=AgentSettings.from_proto(message.settings)
            if message.HasField("settings")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetAgentSettingsResponse:
        return memory_service_pb2.GetAgentSettingsResponse(
            settings=None if self.settings is None else self.settings.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UpdateAgentSettingsResponse(Record[memory_service_pb2.UpdateAgentSettingsResponse]):
    """Response for UpdateAgentSettings."""

    MESSAGE = memory_service_pb2.UpdateAgentSettingsResponse

    settings: AgentSettings | None = None
    """The settings as stored."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.UpdateAgentSettingsResponse) -> Self:
        return cls(
            settings=AgentSettings.from_proto(message.settings)
            if message.HasField("settings")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.UpdateAgentSettingsResponse:
        return memory_service_pb2.UpdateAgentSettingsResponse(
            settings=None if self.settings is None else self.settings.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetWorkspaceSettingsResponse(Record[memory_service_pb2.GetWorkspaceSettingsResponse]):
    """Response for GetWorkspaceSettings."""

    MESSAGE = memory_service_pb2.GetWorkspaceSettingsResponse

    settings: WorkspaceSettings | None = None
    """The workspace's settings."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetWorkspaceSettingsResponse) -> Self:
        return cls(
            settings=WorkspaceSettings.from_proto(message.settings)
            if message.HasField("settings")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetWorkspaceSettingsResponse:
        return memory_service_pb2.GetWorkspaceSettingsResponse(
            settings=None if self.settings is None else self.settings.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UpdateWorkspaceSettingsResponse(Record[memory_service_pb2.UpdateWorkspaceSettingsResponse]):
    """Response for UpdateWorkspaceSettings."""

    MESSAGE = memory_service_pb2.UpdateWorkspaceSettingsResponse

    settings: WorkspaceSettings | None = None
    """The settings as stored."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.UpdateWorkspaceSettingsResponse) -> Self:
        return cls(
            settings=WorkspaceSettings.from_proto(message.settings)
            if message.HasField("settings")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.UpdateWorkspaceSettingsResponse:
        return memory_service_pb2.UpdateWorkspaceSettingsResponse(
            settings=None if self.settings is None else self.settings.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ExtractMemoriesResponse(Record[memory_service_pb2.ExtractMemoriesResponse]):
    """Response for ExtractMemories."""

    MESSAGE = memory_service_pb2.ExtractMemoriesResponse

    outcome: ExtractionOutcome = ExtractionOutcome.UNSPECIFIED
    """How the pass ended."""

    synthetic_session_id: str = ""
    """The synthetic session id usage is recorded under."""

    written: tuple[Memory, ...] = ()
    """The memories written (created or updated in place)."""

    dropped: tuple[DroppedFact, ...] = ()
    """The facts proposed but not written, each with a reason."""

    usage: ExtractionUsage | None = None
    """Token usage and cost of the pass; unset when no model call was made."""

    job_id: str = ""
    """The queued job's id; set only for EXTRACTION_OUTCOME_QUEUED."""

    detail: str = ""
    """A human-readable note on the outcome; never carries a secret."""

    superseded: tuple[Memory, ...] = ()
    """The memories the pass superseded: the model said a new fact updates or
    contradicts them (see Memory.superseded_by)."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ExtractMemoriesResponse) -> Self:
        return cls(
            outcome=ExtractionOutcome(message.outcome),
            synthetic_session_id=message.synthetic_session_id,
            written=tuple(Memory.from_proto(v) for v in message.written),
            dropped=tuple(DroppedFact.from_proto(v) for v in message.dropped),
            usage=ExtractionUsage.from_proto(message.usage) if message.HasField("usage") else None,
            job_id=message.job_id,
            detail=message.detail,
            superseded=tuple(Memory.from_proto(v) for v in message.superseded),
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ExtractMemoriesResponse:
        return memory_service_pb2.ExtractMemoriesResponse(
            outcome=self.outcome.number,
            synthetic_session_id=self.synthetic_session_id,
            written=[v.proto for v in self.written],
            dropped=[v.proto for v in self.dropped],
            usage=None if self.usage is None else self.usage.proto,
            job_id=self.job_id,
            detail=self.detail,
            superseded=[v.proto for v in self.superseded],
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetUsageResponse(Record[memory_service_pb2.GetUsageResponse]):
    """Response for GetUsage."""

    MESSAGE = memory_service_pb2.GetUsageResponse

    records: tuple[UsageRecord, ...] = ()
    """The matching records, oldest first: the first 1,000 of them. To read
    later ones, ask again with start_time at the last record's recorded_at."""

    total_input_tokens: int = 0
    """Sum of input_tokens over every matching record, those past the first
    1,000 included."""

    total_output_tokens: int = 0
    """Sum of output_tokens over every matching record."""

    total_cost_usd: float = 0.0
    """Sum of cost_usd over every matching record."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetUsageResponse) -> Self:
        return cls(
            records=tuple(UsageRecord.from_proto(v) for v in message.records),
            total_input_tokens=message.total_input_tokens,
            total_output_tokens=message.total_output_tokens,
            total_cost_usd=message.total_cost_usd,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetUsageResponse:
        return memory_service_pb2.GetUsageResponse(
            records=[v.proto for v in self.records],
            total_input_tokens=self.total_input_tokens,
            total_output_tokens=self.total_output_tokens,
            total_cost_usd=self.total_cost_usd,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetActiveSessionResponse(Record[memory_service_pb2.GetActiveSessionResponse]):
    """Response for GetActiveSession."""

    MESSAGE = memory_service_pb2.GetActiveSessionResponse

    session: ActiveSession | None = None
    """The agent's active session."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetActiveSessionResponse) -> Self:
        return cls(
            session=ActiveSession.from_proto(message.session)
            if message.HasField("session")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetActiveSessionResponse:
        return memory_service_pb2.GetActiveSessionResponse(
            session=None if self.session is None else self.session.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecordRunSessionResponse(Record[memory_service_pb2.RecordRunSessionResponse]):
    """Response for RecordRunSession."""

    MESSAGE = memory_service_pb2.RecordRunSessionResponse

    session: ActiveSession | None = None
    """The agent's active session after the run was recorded."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.RecordRunSessionResponse) -> Self:
        return cls(
            session=ActiveSession.from_proto(message.session)
            if message.HasField("session")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.RecordRunSessionResponse:
        return memory_service_pb2.RecordRunSessionResponse(
            session=None if self.session is None else self.session.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListAgentRunsResponse(Record[memory_service_pb2.ListAgentRunsResponse]):
    """Response for ListAgentRuns."""

    MESSAGE = memory_service_pb2.ListAgentRunsResponse

    runs: tuple[AgentRun, ...] = ()
    """The page of runs, newest first."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListAgentRunsResponse) -> Self:
        return cls(
            runs=tuple(AgentRun.from_proto(v) for v in message.runs),
            next_page_token=message.next_page_token,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListAgentRunsResponse:
        return memory_service_pb2.ListAgentRunsResponse(
            runs=[v.proto for v in self.runs],
            next_page_token=self.next_page_token,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ResetActiveSessionResponse(Record[memory_service_pb2.ResetActiveSessionResponse]):
    """Response for ResetActiveSession."""

    MESSAGE = memory_service_pb2.ResetActiveSessionResponse

    session: ActiveSession | None = None
    """The agent's active session after the reset: fresh, with no runs."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ResetActiveSessionResponse) -> Self:
        return cls(
            session=ActiveSession.from_proto(message.session)
            if message.HasField("session")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ResetActiveSessionResponse:
        return memory_service_pb2.ResetActiveSessionResponse(
            session=None if self.session is None else self.session.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ForgetCounts(Record[memory_service_pb2.ForgetCounts]):
    """What a forget removed (or, with validate_only, would remove), by kind."""

    MESSAGE = memory_service_pb2.ForgetCounts

    memories: int = 0
    """Memories, learnings included."""

    audit_events: int = 0
    """Audit events whose snapshots were emptied (the events stay as tombstones)."""

    conversations: int = 0
    """Conversation snapshots."""

    blocks: int = 0
    """Blocks (core and archival)."""

    block_versions: int = 0
    """Kept block versions."""

    archival_lines: int = 0
    """Archival lines."""

    decisions: int = 0
    """Decision cards."""

    reexaminations: int = 0
    """Re-examinations."""

    extraction_jobs: int = 0
    """Queued or ended extraction passes with their transcripts."""

    agent_state: int = 0
    """Agent or workspace settings, active sessions and recorded runs."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ForgetCounts) -> Self:
        return cls(
            memories=message.memories,
            audit_events=message.audit_events,
            conversations=message.conversations,
            blocks=message.blocks,
            block_versions=message.block_versions,
            archival_lines=message.archival_lines,
            decisions=message.decisions,
            reexaminations=message.reexaminations,
            extraction_jobs=message.extraction_jobs,
            agent_state=message.agent_state,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ForgetCounts:
        return memory_service_pb2.ForgetCounts(
            memories=self.memories,
            audit_events=self.audit_events,
            conversations=self.conversations,
            blocks=self.blocks,
            block_versions=self.block_versions,
            archival_lines=self.archival_lines,
            decisions=self.decisions,
            reexaminations=self.reexaminations,
            extraction_jobs=self.extraction_jobs,
            agent_state=self.agent_state,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ForgetAgentResponse(Record[memory_service_pb2.ForgetAgentResponse]):
    """Response for ForgetAgent."""

    MESSAGE = memory_service_pb2.ForgetAgentResponse

    removed: ForgetCounts | None = None
    """What was removed (with validate_only: what would be)."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ForgetAgentResponse) -> Self:
        return cls(
            removed=ForgetCounts.from_proto(message.removed)
            if message.HasField("removed")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ForgetAgentResponse:
        return memory_service_pb2.ForgetAgentResponse(
            removed=None if self.removed is None else self.removed.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ForgetWorkspaceResponse(Record[memory_service_pb2.ForgetWorkspaceResponse]):
    """Response for ForgetWorkspace."""

    MESSAGE = memory_service_pb2.ForgetWorkspaceResponse

    removed: ForgetCounts | None = None
    """What was removed (with validate_only: what would be)."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ForgetWorkspaceResponse) -> Self:
        return cls(
            removed=ForgetCounts.from_proto(message.removed)
            if message.HasField("removed")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ForgetWorkspaceResponse:
        return memory_service_pb2.ForgetWorkspaceResponse(
            removed=None if self.removed is None else self.removed.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ForgetUserResponse(Record[memory_service_pb2.ForgetUserResponse]):
    """Response for ForgetUser."""

    MESSAGE = memory_service_pb2.ForgetUserResponse

    removed: ForgetCounts | None = None
    """What was removed (with validate_only: what would be)."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ForgetUserResponse) -> Self:
        return cls(
            removed=ForgetCounts.from_proto(message.removed)
            if message.HasField("removed")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ForgetUserResponse:
        return memory_service_pb2.ForgetUserResponse(
            removed=None if self.removed is None else self.removed.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetConversationResponse(Record[memory_service_pb2.GetConversationResponse]):
    """Response for GetConversation."""

    MESSAGE = memory_service_pb2.GetConversationResponse

    conversation: Conversation | None = None
    """The snapshot, messages and raw events included."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetConversationResponse) -> Self:
        return cls(
            conversation=Conversation.from_proto(message.conversation)
            if message.HasField("conversation")
            else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetConversationResponse:
        return memory_service_pb2.GetConversationResponse(
            conversation=None if self.conversation is None else self.conversation.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListConversationsResponse(Record[memory_service_pb2.ListConversationsResponse]):
    """Response for ListConversations."""

    MESSAGE = memory_service_pb2.ListConversationsResponse

    conversations: tuple[Conversation, ...] = ()
    """The page of snapshots, most recently updated first."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListConversationsResponse) -> Self:
        return cls(
            conversations=tuple(Conversation.from_proto(v) for v in message.conversations),
            next_page_token=message.next_page_token,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListConversationsResponse:
        return memory_service_pb2.ListConversationsResponse(
            conversations=[v.proto for v in self.conversations],
            next_page_token=self.next_page_token,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetExtractionJobResponse(Record[memory_service_pb2.GetExtractionJobResponse]):
    """Response for GetExtractionJob."""

    MESSAGE = memory_service_pb2.GetExtractionJobResponse

    job: ExtractionJob | None = None
    """The job."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetExtractionJobResponse) -> Self:
        return cls(
            job=ExtractionJob.from_proto(message.job) if message.HasField("job") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetExtractionJobResponse:
        return memory_service_pb2.GetExtractionJobResponse(
            job=None if self.job is None else self.job.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetCallerResponse(Record[memory_service_pb2.GetCallerResponse]):
    """Response for GetCaller."""

    MESSAGE = memory_service_pb2.GetCallerResponse

    caller: Caller | None = None
    """The caller."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.GetCallerResponse) -> Self:
        return cls(
            caller=Caller.from_proto(message.caller) if message.HasField("caller") else None,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.GetCallerResponse:
        return memory_service_pb2.GetCallerResponse(
            caller=None if self.caller is None else self.caller.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Caller(Record[memory_service_pb2.Caller]):
    """Who calls: what its API key stands for."""

    MESSAGE = memory_service_pb2.Caller

    tenant_id: str = ""
    """Output only. The tenant every call of this caller reads and writes."""

    user_id: str = ""
    """Output only. The user the caller acts for."""

    role: str = ""
    """Output only. The key's role: reader, editor or orchestrator."""

    key_id: str = ""
    """Output only. The API key's id; empty in the unauthenticated local mode."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.Caller) -> Self:
        return cls(
            tenant_id=message.tenant_id,
            user_id=message.user_id,
            role=message.role,
            key_id=message.key_id,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.Caller:
        return memory_service_pb2.Caller(
            tenant_id=self.tenant_id,
            user_id=self.user_id,
            role=self.role,
            key_id=self.key_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListAgentsResponse(Record[memory_service_pb2.ListAgentsResponse]):
    """Response for ListAgents."""

    MESSAGE = memory_service_pb2.ListAgentsResponse

    agents: tuple[OwnerSummary, ...] = ()
    """The page of agents, by id."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListAgentsResponse) -> Self:
        return cls(
            agents=tuple(OwnerSummary.from_proto(v) for v in message.agents),
            next_page_token=message.next_page_token,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListAgentsResponse:
        return memory_service_pb2.ListAgentsResponse(
            agents=[v.proto for v in self.agents],
            next_page_token=self.next_page_token,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class ListWorkspacesResponse(Record[memory_service_pb2.ListWorkspacesResponse]):
    """Response for ListWorkspaces."""

    MESSAGE = memory_service_pb2.ListWorkspacesResponse

    workspaces: tuple[OwnerSummary, ...] = ()
    """The page of workspaces, by id."""

    next_page_token: str = ""
    """Opaque token for the next page; empty on the last page."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.ListWorkspacesResponse) -> Self:
        return cls(
            workspaces=tuple(OwnerSummary.from_proto(v) for v in message.workspaces),
            next_page_token=message.next_page_token,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.ListWorkspacesResponse:
        return memory_service_pb2.ListWorkspacesResponse(
            workspaces=[v.proto for v in self.workspaces],
            next_page_token=self.next_page_token,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class OwnerSummary(Record[memory_service_pb2.OwnerSummary]):
    """An agent or a workspace, as a list of them shows it."""

    MESSAGE = memory_service_pb2.OwnerSummary

    id: str = ""
    """Output only. The agent id (in ListAgents) or the workspace id (in
    ListWorkspaces)."""

    memory_count: int = 0
    """Output only. How many of its memories are current: neither expired nor
    superseded."""

    last_activity_time: datetime | None = None
    """Output only. When one of its memories (or, for an agent, its settings) last
    changed."""

    memory_enabled: bool = False
    """Output only. For an agent: whether memory is on for it. Always false for a
    workspace."""

    @classmethod
    def from_proto(cls, message: memory_service_pb2.OwnerSummary) -> Self:
        return cls(
            id=message.id,
            memory_count=message.memory_count,
            last_activity_time=datetime_of(message.last_activity_time)
            if message.HasField("last_activity_time")
            else None,
            memory_enabled=message.memory_enabled,
        )._kept(message)

    def _to_proto(self) -> memory_service_pb2.OwnerSummary:
        return memory_service_pb2.OwnerSummary(
            id=self.id,
            memory_count=self.memory_count,
            last_activity_time=timestamp_of(self.last_activity_time),
            memory_enabled=self.memory_enabled,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecallStatus(Record[recall_pb2.RecallStatus]):
    """What Recall runs on a server."""

    MESSAGE = recall_pb2.RecallStatus

    mode: RecallMode = RecallMode.UNSPECIFIED
    """Output only. How Recall ranks."""

    embedder: str = ""
    """Output only. The embedder: "local" (a model in the server's process),
    "http" (an OpenAI-compatible embeddings API) or "none"."""

    model: str = ""
    """Output only. The model vectors are made with; empty without an embedder."""

    detail: str = ""
    """Output only. One sentence: why Recall ranks as it does, and how to
    change it."""

    indexing: IndexingStatus | None = None
    """Output only. How the embedding of lines and memories stands; unset when
    Recall ranks by words only."""

    @classmethod
    def from_proto(cls, message: recall_pb2.RecallStatus) -> Self:
        return cls(
            mode=RecallMode(message.mode),
            embedder=message.embedder,
            model=message.model,
            detail=message.detail,
            indexing=IndexingStatus.from_proto(message.indexing)
            if message.HasField("indexing")
            else None,
        )._kept(message)

    def _to_proto(self) -> recall_pb2.RecallStatus:
        return recall_pb2.RecallStatus(
            mode=self.mode.number,
            embedder=self.embedder,
            model=self.model,
            detail=self.detail,
            indexing=None if self.indexing is None else self.indexing.proto,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class IndexingStatus(Record[recall_pb2.IndexingStatus]):
    """How the index workers keep up: what waits for a vector, and how fast
    vectors are made."""

    MESSAGE = recall_pb2.IndexingStatus

    waiting_count: int = 0
    """Output only. The caller's tenant's archival lines and memories whose text
    has no vector of the model yet (new or changed), counted up to 100,000 of
    each."""

    waiting_count_capped: bool = False
    """Output only. Whether more are waiting than waiting_count says."""

    worker_count: int = 0
    """Output only. Index workers of the model heard from in the last 30
    seconds (agent-memory index, or the one a server starts)."""

    per_second: float = 0.0
    """Output only. Lines and memories those workers give a vector per second,
    over their last minute."""

    waiting_line_count: int = 0
    """Output only. Of waiting_count, the archival lines (counted up to 100,000)."""

    waiting_memory_count: int = 0
    """Output only. Of waiting_count, the memories (counted up to 100,000)."""

    @classmethod
    def from_proto(cls, message: recall_pb2.IndexingStatus) -> Self:
        return cls(
            waiting_count=message.waiting_count,
            waiting_count_capped=message.waiting_count_capped,
            worker_count=message.worker_count,
            per_second=message.per_second,
            waiting_line_count=message.waiting_line_count,
            waiting_memory_count=message.waiting_memory_count,
        )._kept(message)

    def _to_proto(self) -> recall_pb2.IndexingStatus:
        return recall_pb2.IndexingStatus(
            waiting_count=self.waiting_count,
            waiting_count_capped=self.waiting_count_capped,
            worker_count=self.worker_count,
            per_second=self.per_second,
            waiting_line_count=self.waiting_line_count,
            waiting_memory_count=self.waiting_memory_count,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PromptSection(Record[recall_pb2.PromptSection]):
    """One named section of a rendered system prompt."""

    MESSAGE = recall_pb2.PromptSection

    name: str = ""
    """Output only. The section's name: "persona", "user_core", "agent_core",
    "workspace_core", "agent_memory", "workspace_memory"."""

    content: str = ""
    """Output only. The section's text as it reaches the model."""

    token_count: int | None = None
    """Output only. How many tokens the content is, counted with the tokenizer of
    the server's local embedding model (multilingual-e5-small) as a proxy for
    the reading model's: an estimate of the section's share of a context
    window. Set only when RenderPrompt was asked to count (count_tokens) and
    the server can."""

    @classmethod
    def from_proto(cls, message: recall_pb2.PromptSection) -> Self:
        return cls(
            name=message.name,
            content=message.content,
            token_count=message.token_count if message.HasField("token_count") else None,
        )._kept(message)

    def _to_proto(self) -> recall_pb2.PromptSection:
        return recall_pb2.PromptSection(
            name=self.name,
            content=self.content,
            token_count=self.token_count,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecallResponse(Record[recall_service_pb2.RecallResponse]):
    """Response for Recall: one match."""

    MESSAGE = recall_service_pb2.RecallResponse

    content: str = ""
    """The matching text: one archival line, or a memory's value."""

    score: float = 0.0
    """Relevance in [0, 1]; higher is better. It says how well the match
    answers the query, not only how it ranks: a query nothing answers scores
    low, so min_score keeps such matches out."""

    scope: Scope = Scope.UNSPECIFIED
    """The scope of the block or memory the match came from."""

    agent_id: str = ""
    """The agent id of the block or memory; empty for user or workspace scope."""

    block_label: BlockLabel = BlockLabel.UNSPECIFIED
    """The block's label; BLOCK_LABEL_UNSPECIFIED for a memory match."""

    line_number: int = 0
    """One-based line number in the block; 0 for a memory match."""

    memory_id: str = ""
    """The memory's id; empty for a block match."""

    workspace_id: str = ""
    """The workspace id of the block or memory; empty unless the match is of
    SCOPE_WORKSPACE."""

    @classmethod
    def from_proto(cls, message: recall_service_pb2.RecallResponse) -> Self:
        return cls(
            content=message.content,
            score=message.score,
            scope=Scope(message.scope),
            agent_id=message.agent_id,
            block_label=BlockLabel(message.block_label),
            line_number=message.line_number,
            memory_id=message.memory_id,
            workspace_id=message.workspace_id,
        )._kept(message)

    def _to_proto(self) -> recall_service_pb2.RecallResponse:
        return recall_service_pb2.RecallResponse(
            content=self.content,
            score=self.score,
            scope=self.scope.number,
            agent_id=self.agent_id,
            block_label=self.block_label.number,
            line_number=self.line_number,
            memory_id=self.memory_id,
            workspace_id=self.workspace_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RenderPromptResponse(Record[recall_service_pb2.RenderPromptResponse]):
    """Response for RenderPrompt."""

    MESSAGE = recall_service_pb2.RenderPromptResponse

    system_prompt: str = ""
    """The whole system prompt: the sections joined in order."""

    sections: tuple[PromptSection, ...] = ()
    """The sections that made it into the prompt, in prompt order."""

    system_reminders: tuple[str, ...] = ()
    """Hidden system reminders (ARCHIVAL_MODE_AUTO archival matches)."""

    warnings: tuple[str, ...] = ()
    """One line per section left out because its read failed."""

    memory_markdown: str = ""
    """The memory part alone (core blocks, agent and workspace memory, recent
    decisions; no persona) as a MEMORY.md-style Markdown document, for
    harnesses that load memory from files."""

    token_count: int | None = None
    """Output only. How many tokens the whole system_prompt is (the sections,
    with the fence and framing around the memory ones), counted as each
    section's token_count is. Set only when the request asks for counts, and
    the server can count."""

    render_time: datetime | None = None
    """Output only. The instant whose memory this render shows: its as_of_time,
    or when it read the memory. Give it to RecordRunSession as the run's
    render_time, and to as_of_time to render these bytes again."""

    @classmethod
    def from_proto(cls, message: recall_service_pb2.RenderPromptResponse) -> Self:
        return cls(
            system_prompt=message.system_prompt,
            sections=tuple(PromptSection.from_proto(v) for v in message.sections),
            system_reminders=tuple(message.system_reminders),
            warnings=tuple(message.warnings),
            memory_markdown=message.memory_markdown,
            token_count=message.token_count if message.HasField("token_count") else None,
            render_time=datetime_of(message.render_time)
            if message.HasField("render_time")
            else None,
        )._kept(message)

    def _to_proto(self) -> recall_service_pb2.RenderPromptResponse:
        return recall_service_pb2.RenderPromptResponse(
            system_prompt=self.system_prompt,
            sections=[v.proto for v in self.sections],
            system_reminders=self.system_reminders,
            warnings=self.warnings,
            memory_markdown=self.memory_markdown,
            token_count=self.token_count,
            render_time=timestamp_of(self.render_time),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GetRecallStatusResponse(Record[recall_service_pb2.GetRecallStatusResponse]):
    """Response for GetRecallStatus."""

    MESSAGE = recall_service_pb2.GetRecallStatusResponse

    status: RecallStatus | None = None
    """How Recall ranks on this server."""

    @classmethod
    def from_proto(cls, message: recall_service_pb2.GetRecallStatusResponse) -> Self:
        return cls(
            status=RecallStatus.from_proto(message.status) if message.HasField("status") else None,
        )._kept(message)

    def _to_proto(self) -> recall_service_pb2.GetRecallStatusResponse:
        return recall_service_pb2.GetRecallStatusResponse(
            status=None if self.status is None else self.status.proto,
        )


# Every record by the full name of its message.
RECORDS: dict[str, type[Record[Any]]] = {
    "agentmemory.v1.Block": Block,
    "agentmemory.v1.BlockVersion": BlockVersion,
    "agentmemory.v1.GetBlockResponse": GetBlockResponse,
    "agentmemory.v1.DeleteBlockResponse": DeleteBlockResponse,
    "agentmemory.v1.ListBlocksResponse": ListBlocksResponse,
    "agentmemory.v1.WriteBlockResponse": WriteBlockResponse,
    "agentmemory.v1.ListBlockVersionsResponse": ListBlockVersionsResponse,
    "agentmemory.v1.CardType": CardType,
    "agentmemory.v1.Decision": Decision,
    "agentmemory.v1.Reexamination": Reexamination,
    "agentmemory.v1.RegisterCardTypeResponse": RegisterCardTypeResponse,
    "agentmemory.v1.RecordDecisionResponse": RecordDecisionResponse,
    "agentmemory.v1.GetDecisionResponse": GetDecisionResponse,
    "agentmemory.v1.ListRecentDecisionsResponse": ListRecentDecisionsResponse,
    "agentmemory.v1.ResolveDecisionResponse": ResolveDecisionResponse,
    "agentmemory.v1.RecordReexaminationResponse": RecordReexaminationResponse,
    "agentmemory.v1.ListReexaminationsResponse": ListReexaminationsResponse,
    "agentmemory.v1.RenderReexaminationPromptResponse": RenderReexaminationPromptResponse,
    "agentmemory.v1.Grounding": Grounding,
    "agentmemory.v1.ConversationMessage": ConversationMessage,
    "agentmemory.v1.Conversation": Conversation,
    "agentmemory.v1.Memory": Memory,
    "agentmemory.v1.MemoryEvent": MemoryEvent,
    "agentmemory.v1.AgentSettings": AgentSettings,
    "agentmemory.v1.WorkspaceSettings": WorkspaceSettings,
    "agentmemory.v1.ExtractionUsage": ExtractionUsage,
    "agentmemory.v1.DroppedFact": DroppedFact,
    "agentmemory.v1.ExtractionJob": ExtractionJob,
    "agentmemory.v1.UsageRecord": UsageRecord,
    "agentmemory.v1.AgentRun": AgentRun,
    "agentmemory.v1.ActiveSession": ActiveSession,
    "agentmemory.v1.UpsertMemoryResponse": UpsertMemoryResponse,
    "agentmemory.v1.GetMemoryResponse": GetMemoryResponse,
    "agentmemory.v1.UpdateMemoryResponse": UpdateMemoryResponse,
    "agentmemory.v1.PinMemoryResponse": PinMemoryResponse,
    "agentmemory.v1.DeleteMemoryResponse": DeleteMemoryResponse,
    "agentmemory.v1.ListMemoriesResponse": ListMemoriesResponse,
    "agentmemory.v1.MemorizeResponse": MemorizeResponse,
    "agentmemory.v1.RecordLearningResponse": RecordLearningResponse,
    "agentmemory.v1.ListLearningsResponse": ListLearningsResponse,
    "agentmemory.v1.ListMemoryEventsResponse": ListMemoryEventsResponse,
    "agentmemory.v1.GetAgentSettingsResponse": GetAgentSettingsResponse,
    "agentmemory.v1.UpdateAgentSettingsResponse": UpdateAgentSettingsResponse,
    "agentmemory.v1.GetWorkspaceSettingsResponse": GetWorkspaceSettingsResponse,
    "agentmemory.v1.UpdateWorkspaceSettingsResponse": UpdateWorkspaceSettingsResponse,
    "agentmemory.v1.ExtractMemoriesResponse": ExtractMemoriesResponse,
    "agentmemory.v1.GetUsageResponse": GetUsageResponse,
    "agentmemory.v1.GetActiveSessionResponse": GetActiveSessionResponse,
    "agentmemory.v1.RecordRunSessionResponse": RecordRunSessionResponse,
    "agentmemory.v1.ListAgentRunsResponse": ListAgentRunsResponse,
    "agentmemory.v1.ResetActiveSessionResponse": ResetActiveSessionResponse,
    "agentmemory.v1.ForgetCounts": ForgetCounts,
    "agentmemory.v1.ForgetAgentResponse": ForgetAgentResponse,
    "agentmemory.v1.ForgetWorkspaceResponse": ForgetWorkspaceResponse,
    "agentmemory.v1.ForgetUserResponse": ForgetUserResponse,
    "agentmemory.v1.GetConversationResponse": GetConversationResponse,
    "agentmemory.v1.ListConversationsResponse": ListConversationsResponse,
    "agentmemory.v1.GetExtractionJobResponse": GetExtractionJobResponse,
    "agentmemory.v1.GetCallerResponse": GetCallerResponse,
    "agentmemory.v1.Caller": Caller,
    "agentmemory.v1.ListAgentsResponse": ListAgentsResponse,
    "agentmemory.v1.ListWorkspacesResponse": ListWorkspacesResponse,
    "agentmemory.v1.OwnerSummary": OwnerSummary,
    "agentmemory.v1.RecallStatus": RecallStatus,
    "agentmemory.v1.IndexingStatus": IndexingStatus,
    "agentmemory.v1.PromptSection": PromptSection,
    "agentmemory.v1.RecallResponse": RecallResponse,
    "agentmemory.v1.RenderPromptResponse": RenderPromptResponse,
    "agentmemory.v1.GetRecallStatusResponse": GetRecallStatusResponse,
}


def record_of(message: Message) -> Record[Any]:
    """The record of any message of :data:`RECORDS`, e.g. what ``call()`` answers."""
    try:
        record = RECORDS[message.DESCRIPTOR.full_name]
    except KeyError:
        msg = f"no record of {message.DESCRIPTOR.full_name}"
        raise TypeError(msg) from None
    return record.from_proto(message)
