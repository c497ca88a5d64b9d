"""Export and import of one tenant (``agent-memory export`` and ``import``).

An export writes a header line, then every record of the tenant, one a line, in one
transaction. An import refuses a file that holds anything the API would refuse, and
then writes nothing: every record is read and checked before any is written, and the
records are written in one transaction that a refusal rolls back.

A record is checked as the API checks a write of the same data: first as the API's
own message (:class:`RecordFormat`: decoding, enums, secrets, line breaks), then by
the rules the write use cases apply (UpsertMemory and Memorize, WriteBlock,
RegisterCardType, RecordDecision, RecordReexamination and the conversation limits),
then by what only an import needs: ids that are ids, and times in order and not in
the future (beyond :data:`CLOCK_SKEW`). Memorize's normalisation applies as well:
tags are slugged, quotes cut, a conversation without a provider is ``unknown``'s.

Two rules of the API are left to the data: a decision's action and a
re-examination's suggested action are not checked against their card type's
vocabulary, nor a re-examination against the card type's ``re_examinable``, because
a card type registered again since may have changed them, and an export holds the
card type as it is now.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, Protocol

from agent_memory.domain.blocks import BlockLimits, content_violations
from agent_memory.domain.decisions import (
    CardType,
    Decision,
    NewDecision,
    NewReexamination,
    ResolutionStatus,
    validate_card_type,
    validate_decision,
    validate_reexamination,
)
from agent_memory.domain.errors import (
    Conflict,
    FieldViolation,
    InvalidArgument,
    ServiceError,
    Timeout,
    Unavailable,
    check,
    under,
)
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import (
    CONVERSATION_ID_MAX_CHARS,
    DEFAULT_PROVIDER,
    MAX_GROUNDINGS,
    PROVIDER_MAX_CHARS,
    Conversation,
    StoredConversation,
    conversation_violations,
    cut_quote,
    dangling_grounding_violations,
    grounding_violations,
    metadata_violations,
    normalise_tags,
    tag_violations,
    total_metadata_violations,
)
from agent_memory.domain.memory import (
    TTL_MAX,
    HoldReason,
    Memory,
    optional_text_violations,
    owner_violations,
    period_violations,
    validate_new_memory,
)
from agent_memory.domain.paging import PageKeyring
from agent_memory.domain.screening import memory_orders, refuse_instruction_lines
from agent_memory.domain.text_rules import DuplicateKey, parse_json, text_violations
from agent_memory.domain.transfer import (
    ENDS_SINCE,
    IMPORT_ACTOR,
    DecisionRecord,
    FormatError,
    MemoryRecord,
    Record,
    UserBlock,
    attest,
    attestation_key,
    attested,
    check_ending,
    check_header,
    ending,
    header,
    identities,
    kind_of,
)
from agent_memory.service.memories import validate_owner
from agent_memory.store.repositories import Store, Tx

# How far ahead of this clock a stored time may be: the exporting server's clock may
# run a little ahead. A time past that was never stored by a service.
CLOCK_SKEW = timedelta(minutes=5)

# Who reads a tenant for an export (no write is made as it).
EXPORT_ACTOR = "agent-memory:export"

_REASONS_SHOWN = 3


class RecordFormat(Protocol):
    """How a record is written as a JSON object and read back: the API's messages in
    proto JSON (:class:`agent_memory.api.transfer_convert.ProtoJsonRecords`)."""

    def encode(self, record: Record) -> dict[str, Any]: ...

    async def decode(self, fields: Any) -> Record:
        """Raises: FormatError, InvalidArgument — not a record the API would take."""
        ...


class ImportRefused(ServiceError):
    """The file holds something an import does not write; nothing was written.
    ``line`` is the line at fault, 1 for the header (``None``: the file as a whole)."""

    default_reason = "IMPORT_REFUSED"

    def __init__(self, line: int | None, detail: str) -> None:
        super().__init__(" ".join(detail.splitlines()))  # an operator's error is one line
        self.line = line


@dataclass
class Tally:
    """What an import did with the records of one kind."""

    imported: int = 0
    already_there: int = 0


class Transfer:
    def __init__(self, store: Store, records: RecordFormat, limits: BlockLimits) -> None:
        self._store = store
        self._records = records
        self._limits = limits

    async def export(self, tenant_id: str, write: Callable[[str], object]) -> dict[str, int]:
        """Hand ``write`` the header and then each record of the tenant, one line each
        (without its line break), in one transaction; how many records of each kind.

        Raises: what ``write`` raises (the reader went away), and nothing is
        written after that."""
        counts: dict[str, int] = {}
        keyring = await self._store.page_keyring()
        async with self._store.transaction(Principal(tenant_id, EXPORT_ACTOR)) as tx:
            write(_line(header(tenant_id, await tx.clock.now())))
            kinds: Sequence[Callable[[], Awaitable[Sequence[Record]]]] = (
                tx.transfer.card_types,
                tx.transfer.conversations,
                tx.transfer.memories,
                tx.transfer.blocks,
                tx.transfer.decisions,
            )
            for read in kinds:
                for record in await read():
                    if isinstance(record, MemoryRecord) and record.screened:
                        record = replace(record, attestation=attest(keyring, record.memory))
                    elif isinstance(record, UserBlock):
                        record = replace(record, attestation=attest(keyring, record))
                    write(_line(self._records.encode(record)))
                    kind = kind_of(record)
                    counts[kind] = counts.get(kind, 0) + 1
            write(_line(ending(sum(counts.values()))))
        return counts

    async def import_text(
        self, tenant_id: str, text: str, *, now: datetime | None = None
    ) -> dict[str, Tally]:
        """Read an export into the tenant: every record whose key nothing holds yet,
        all in one transaction; what was imported and what was already there, by kind.
        No time in the file may be later than ``now`` (default: the clock's), give or
        take :data:`CLOCK_SKEW`.

        Raises:
            ImportRefused: a line is not a record the API would take, or the store
                refuses one; nothing was written.
        """
        now = now or datetime.now(UTC)
        records = await self._read(text, now)
        # The keys that open the file's attestations, read before the import's
        # transaction holds a connection.
        sealed = [
            attestation_key(r.attestation)
            for _, r in records
            if (isinstance(r, MemoryRecord) and _attests(r))
            or (isinstance(r, UserBlock) and r.attestation)
        ]
        keyring = await self._store.page_keyring(knowing=max(sealed, default=0))
        # Judged before the transaction: the rules take CPU, not the database.
        for at, (number, record) in enumerate(records):
            try:
                records[at] = (number, await _judged(record, keyring, now))
            except ServiceError as exc:
                raise ImportRefused(number, _reason(exc)) from exc
        done: dict[str, Tally] = {}
        async with self._store.transaction(Principal(tenant_id, IMPORT_ACTOR)) as tx:
            snapshots: dict[tuple[str, str], Conversation] = {}
            replaced: dict[uuid.UUID, int] = {}  # written memories superseded: their lines
            for number, record in records:
                try:
                    written = await self._put(tx, record, snapshots)
                except (Unavailable, Timeout, Conflict):
                    raise  # the database's trouble, not the file's
                except ServiceError as exc:
                    raise ImportRefused(number, _reason(exc)) from exc
                tally = done.setdefault(kind_of(record), Tally())
                if written:
                    tally.imported += 1
                else:
                    tally.already_there += 1
                if written and isinstance(record, MemoryRecord) and record.memory.superseded_by:
                    replaced[record.memory.id] = number
            # Once every record is in: a replacement may come later in the file.
            crossed = await tx.transfer.superseded_across_owners(list(replaced)) if replaced else []
            if crossed:
                raise ImportRefused(
                    min(replaced[i] for i in crossed),
                    "memory.superseded_by: names a memory of another owner; a memory is "
                    "superseded only by one of its own owner, as Memorize keeps it",
                )
        return done

    async def _read(self, text: str, now: datetime) -> list[tuple[int, Record]]:
        # Lines end at "\n" only: a record's JSON may hold U+2028 or U+0085 as they are.
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()  # the break that ends the last line
        if not lines:
            raise ImportRefused(None, "the file is empty")
        try:
            first = _parsed(lines[0])
        except FormatError:
            first = None  # a blank line, or no JSON: no header either way
        try:
            version = check_header(first)
        except FormatError as exc:
            raise ImportRefused(1, str(exc)) from exc
        body = lines[1:]
        if version >= ENDS_SINCE:
            try:
                last = _parsed(body[-1]) if body else None
            except FormatError:
                last = None  # a line cut in two
            try:
                check_ending(last, len(body) - 1)
            except FormatError as exc:
                raise ImportRefused(len(lines), str(exc)) from exc
            body.pop()
        records: list[tuple[int, Record]] = []
        named: dict[tuple[str, ...], int] = {}
        for number, line in enumerate(body, start=2):
            try:
                if not line.strip():
                    raise FormatError("the line is empty: each line after the header is a record")
                record = self._checked(await self._records.decode(_parsed(line)), now)
                records.append((number, record))
            except FormatError as exc:
                raise ImportRefused(number, str(exc)) from exc
            except ServiceError as exc:
                raise ImportRefused(number, _reason(exc)) from exc
            for name in identities(record):
                first = named.setdefault(name, number)
                if first != number:
                    raise ImportRefused(
                        number,
                        f"the {' '.join(name)} is given on line {first} too: a file holds "
                        "each record once",
                    )
        return records

    def _checked(self, record: Record, now: datetime) -> Record:
        """The record as the API would store it. Raises: InvalidArgument."""
        if isinstance(record, CardType):
            check(_card_type_violations(record, now))
            return record
        if isinstance(record, StoredConversation):
            return _checked_conversation(record, now)
        if isinstance(record, MemoryRecord):
            return replace(record, memory=_checked_memory(record.memory, now))
        if isinstance(record, UserBlock):
            if not record.key.shared:
                violations = owner_violations("user_id", record.user_id)
            elif record.user_id:
                # A workspace's block is the tenant's: no user owns it.
                violations = [
                    FieldViolation("user_id", "must be empty for SCOPE_WORKSPACE", "NOT_ALLOWED")
                ]
            else:
                violations = []
            content = content_violations(record.key.label, record.content, self._limits)
            check(violations + _prefixed("block.", content))
            return record
        check(_decision_violations(record, now))
        return record

    async def _put(
        self,
        tx: Tx,
        record: Record,
        snapshots: dict[tuple[str, str], Conversation],
    ) -> bool:
        if isinstance(record, CardType):
            return await tx.transfer.put_card_type(record)
        if isinstance(record, StoredConversation):
            return await tx.transfer.put_conversation(record)
        if isinstance(record, MemoryRecord):
            if record.memory.groundings:
                check(await _grounding_violations(tx, record.memory, snapshots))
            return await tx.transfer.put_memory(record)
        if isinstance(record, UserBlock):
            return await tx.transfer.put_block(record, keep=self._limits.versions_kept)
        return await tx.transfer.put_decision(record)


async def _judged(record: Record, keyring: PageKeyring, now: datetime) -> Record:
    """The record as the import writes it: a memory read as needing no judging only
    where ``keyring`` opens its seal, and held where nothing vouches for a text that
    reads as an instruction; a block whose lines no seal vouches for judged as
    WriteBlock judges a model's.

    Raises:
        InvalidArgument: an unsealed block's line reads as an instruction.
    """
    if isinstance(record, MemoryRecord):
        return _held_if_ordering(_screened(record, keyring, now))
    if isinstance(record, UserBlock) and not (
        record.attestation and attested(keyring, record, record.attestation, now)
    ):
        # No seal of this service's says who wrote the lines, or that they were judged.
        await refuse_instruction_lines("block.content", record.content)
    return record


def _attests(record: MemoryRecord) -> bool:
    """Whether the record is of a memory not held, with an attestation."""
    return bool(record.attestation) and not record.memory.held_for_review


def _screened(record: MemoryRecord, keyring: PageKeyring, now: datetime) -> MemoryRecord:
    """The record, read as needing no judging only when ``keyring`` opens its attestation
    for its text (a memory held: never)."""
    trusted = _attests(record) and attested(keyring, record.memory, record.attestation, now)
    return replace(record, screened=trusted)


def _held_if_ordering(record: MemoryRecord) -> MemoryRecord:
    """The record, held for review when its key or value reads as an instruction to the
    assistant and nothing vouches for its text: no seal of this service's, no hold kept
    from the file. Not refused: the memory was stored where it was exported (by a writer
    that takes such text, or before the rules read it so), and a restore keeps it; a
    model reads it only once a person lets it go in the panel."""
    memory = record.memory
    if record.screened or memory.held_for_review:
        return record
    if memory_orders(memory.key, memory.value):
        held = replace(memory, held_for_review=True, hold_reason=HoldReason.INSTRUCTION)
        return replace(record, memory=held)
    return record


def _line(fields: Mapping[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, ensure_ascii=False)


def _parsed(line: str) -> Any:
    """Raises: FormatError — not JSON."""
    try:
        return parse_json(line)
    except json.JSONDecodeError as exc:
        # json's "Unterminated string starting at" names its column itself.
        raise FormatError(
            f"not JSON: {exc.msg.removesuffix(' at')} at column {exc.colno}"
        ) from None
    except DuplicateKey as exc:
        raise FormatError(str(exc)) from None
    except RecursionError:
        raise FormatError("not JSON this reads: nested too deeply") from None


def _reason(exc: ServiceError) -> str:
    """One line: the first few field violations, or the error's message."""
    if isinstance(exc, InvalidArgument) and exc.violations:
        shown = [f"{v.field}: {v.description}" for v in exc.violations[:_REASONS_SHOWN]]
        more = len(exc.violations) - _REASONS_SHOWN
        return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")
    return exc.message


def _prefixed(prefix: str, violations: list[FieldViolation]) -> list[FieldViolation]:
    return [replace(v, field=f"{prefix}{v.field}") for v in violations]


def _caught(call: Callable[[], object], prefix: str = "") -> list[FieldViolation]:
    """The field violations ``call`` raises, under ``prefix``."""
    try:
        with under(prefix):
            call()
    except InvalidArgument as exc:
        return exc.violations
    return []


def _time_violations(
    at: str, times: Sequence[tuple[str, datetime | None]], now: datetime
) -> list[FieldViolation]:
    """``times`` (name, time), in the order they happened: none later than the next,
    none in the future."""
    found: list[FieldViolation] = []
    latest = now + CLOCK_SKEW
    earlier: tuple[str, datetime] | None = None
    for name, when in times:
        if when is None:
            continue
        if when > latest:
            found.append(FieldViolation(f"{at}.{name}", "must not be in the future", "IN_FUTURE"))
        if earlier is not None and when < earlier[1]:
            found.append(
                FieldViolation(f"{at}.{name}", f"must not be before {earlier[0]}", "OUT_OF_ORDER")
            )
        earlier = (name, when)
    return found


def _card_type_violations(card_type: CardType, now: datetime) -> list[FieldViolation]:
    found = _caught(lambda: validate_card_type(card_type))
    times = [("created_at", card_type.created_at), ("updated_at", card_type.updated_at)]
    return found + _time_violations("card_type", times, now)


def _checked_conversation(stored: StoredConversation, now: datetime) -> StoredConversation:
    conversation = stored.conversation
    found = conversation_violations(conversation, "conversation")
    times = [("created_at", stored.created_at), ("updated_at", stored.updated_at)]
    check(found + _time_violations("conversation", times, now))
    if not conversation.provider:
        conversation = replace(conversation, provider=DEFAULT_PROVIDER)
    return replace(stored, conversation=conversation)


def _checked_memory(memory: Memory, now: datetime) -> Memory:
    """UpsertMemory's rules and Memorize's, and the import's: ids, times, evidence."""
    found = _caught(lambda: validate_owner(memory.owner, "memory"))
    found += _caught(
        lambda: validate_new_memory(
            key=memory.key,
            value=memory.value,
            importance=memory.importance,
            source=memory.source,
            prefix="memory.",
        )
    )
    found += optional_text_violations(vars(memory), "memory.")
    confidence = memory.confidence
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        found.append(
            FieldViolation(
                "memory.confidence", f"must be between 0 and 1 (got {confidence})", "OUT_OF_RANGE"
            )
        )
    found += tag_violations("memory.tags", memory.tags)
    found += metadata_violations("memory.metadata", memory.metadata)
    if len(memory.groundings) > MAX_GROUNDINGS:
        found.append(
            FieldViolation("memory.groundings", f"at most {MAX_GROUNDINGS} groundings", "TOO_MANY")
        )
    for i, g in enumerate(memory.groundings):
        found += grounding_violations(f"memory.groundings[{i}]", g)
    if not found:
        found += total_metadata_violations(memory.metadata, memory.groundings, "memory.")
    found += _conversation_named(memory)
    if memory.superseded_by == memory.id:
        found.append(
            FieldViolation("memory.superseded_by", "must not be the memory itself", "INVALID_ID")
        )
    times = [("created_at", memory.created_at), ("updated_at", memory.updated_at)]
    found += _time_violations("memory", times, now)
    if memory.expire_time is not None and memory.expire_time - now > TTL_MAX:
        found.append(
            FieldViolation(
                "memory.expire_time", f"must be at most {TTL_MAX.days} days away", "OUT_OF_RANGE"
            )
        )
    found += period_violations(memory.valid_start_time, memory.valid_end_time, prefix="memory.")
    check(found)
    return replace(
        memory,
        tags=normalise_tags(memory.tags),
        groundings=tuple(cut_quote(g) for g in memory.groundings),
    )


def _conversation_named(memory: Memory) -> list[FieldViolation]:
    """A memory names the snapshot it was drawn from by provider and id, or none; its
    groundings point into one."""
    provider, conversation_id = memory.conversation_provider, memory.conversation_id
    if conversation_id is None:
        if provider is not None:
            return [
                FieldViolation(
                    "memory.conversation_id", "is required with conversation_provider", "REQUIRED"
                )
            ]
        if memory.groundings:
            return [
                FieldViolation(
                    "memory.conversation_id",
                    "groundings point into a conversation snapshot: name it",
                    "REQUIRED",
                )
            ]
        return []
    found = text_violations(
        "memory.conversation_id", conversation_id, max_chars=CONVERSATION_ID_MAX_CHARS
    )
    if provider is None:
        found.append(
            FieldViolation(
                "memory.conversation_provider", "is required with conversation_id", "REQUIRED"
            )
        )
    else:
        found += text_violations(
            "memory.conversation_provider", provider, max_chars=PROVIDER_MAX_CHARS
        )
    return found


async def _grounding_violations(
    tx: Tx, memory: Memory, snapshots: dict[tuple[str, str], Conversation]
) -> list[FieldViolation]:
    """Memorize's rule: every grounding points into the snapshot as stored (the file's,
    written before it, or the tenant's)."""
    provider, conversation_id = memory.conversation_provider, memory.conversation_id
    assert provider is not None, "checked: a grounded memory names its conversation"
    assert conversation_id is not None, "checked: a grounded memory names its conversation"
    key = (provider, conversation_id)
    if key not in snapshots:
        stored = await tx.conversations.get(*key)
        if stored is None:
            return [
                FieldViolation(
                    "memory.conversation_id",
                    f"names no conversation snapshot of provider {key[0]!r} in the file "
                    "(before this line) or in the tenant",
                    "NOT_FOUND",
                )
            ]
        snapshots[key] = stored.conversation
    return _prefixed("memory.", dangling_grounding_violations(memory.groundings, snapshots[key]))


def _decision_violations(record: DecisionRecord, now: datetime) -> list[FieldViolation]:
    d = record.decision
    found = _caught(lambda: validate_decision(_as_new(d)))
    if (d.resolution_status is ResolutionStatus.OPEN) != (d.resolved_at is None):
        found.append(
            FieldViolation(
                "decision.resolved_at",
                "is set exactly when the decision is RESOLVED or EXPIRED",
                "INVALID_VALUE",
            )
        )
    times = [("created_at", d.created_at), ("resolved_at", d.resolved_at)]
    found += _time_violations("decision", times, now)
    for i, item in enumerate(record.reexaminations):
        at = f"reexaminations[{i}]"
        new = NewReexamination(
            d.id, item.run_id, item.conviction_score, item.notes, item.suggested_action
        )
        found += _caught(partial(validate_reexamination, new), f"{at}.")
        found += _time_violations(at, [("created_at", item.created_at)], now)
        if item.created_at < d.created_at:
            found.append(
                FieldViolation(
                    f"{at}.created_at",
                    "must not be before the decision's created_at",
                    "OUT_OF_ORDER",
                )
            )
    return found


def _as_new(d: Decision) -> NewDecision:
    return NewDecision(d.run_id, d.agent_id, d.card_type, d.action, d.summary, d.result or {})
