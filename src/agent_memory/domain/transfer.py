"""The export format as the service sees it: a header line, then one record a line
(see ``docs/export-format.md``); what a record holds, in domain types.

How a record is written as text (the API's own messages in proto JSON) is the API
layer's business (:mod:`agent_memory.api.transfer_convert`); what an import checks and
writes is the use case's (:mod:`agent_memory.service.transfer`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from agent_memory.domain.blocks import BlockKey
from agent_memory.domain.decisions import CardType, Decision, Reexamination
from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.memorize import StoredConversation
from agent_memory.domain.memory import Memory
from agent_memory.domain.paging import BINDING_BYTES, PageKeyring, seal, sealed_with, unseal

FORMAT = "agent-memory-export"
VERSION = 4
# The versions this one reads: version 3 is version 4 without a block's ``screened``,
# version 2 without a memory's either.
READS = (2, 3, 4)

# Kinds in the order an export writes them and an import needs them: a card type
# before the decisions that use it, a conversation before the memories grounded on it.
KINDS = ("card_type", "conversation", "memory", "block", "decision")

# Who the audit trail says created an imported memory.
IMPORT_ACTOR = "agent-memory:import"


@dataclass(frozen=True)
class UserBlock:
    """A block of one user of the tenant (blocks belong to a user, not only to a tenant),
    or of a workspace of the tenant (``user_id`` empty: the tenant's users share it)."""

    user_id: str
    key: BlockKey
    content: str
    # The seal of the exporting service over the block's owner, key and content
    # (:func:`attest`): the content is as that service took it, its lines judged there
    # as WriteBlock judges them.
    attestation: str = ""


@dataclass(frozen=True)
class MemoryRecord:
    """A memory, and whether its text needs no judging by the learned screens: they read
    it, a person wrote it, or a person let it go from a hold (a memory held now: never).
    The file says so with ``attestation``, sealed by the exporting service's key over
    the memory's key and value (:func:`attest`); an import trusts it only where its own
    keys open it for the text the record holds (:func:`attested`), so a text changed in
    the file, or a file from another service, is judged where it lands."""

    memory: Memory
    screened: bool = False
    attestation: str = ""


def _binding(subject: Memory | UserBlock) -> bytes:
    if isinstance(subject, Memory):
        said = ["agent-memory:screened", subject.key, subject.value]
    else:
        k = subject.key
        said = ["agent-memory:block", subject.user_id, k.scope.value, k.owner_id, k.label.value]
        said.append(subject.content)
    spelled = json.dumps(said, ensure_ascii=False)
    return hashlib.sha256(spelled.encode("utf-8", "surrogatepass")).digest()[:BINDING_BYTES]


def attest(keyring: PageKeyring, subject: Memory | UserBlock) -> str:
    """The seal saying the screens need not judge a memory's key and value again, or a
    block's lines (of that owner and key)."""
    return seal(keyring, _binding(subject), ())


def attestation_key(attestation: str) -> int:
    """The id of the key an attestation says it was sealed with (0: none of ours)."""
    return sealed_with(attestation) or 0


def attested(
    keyring: PageKeyring, subject: Memory | UserBlock, attestation: str, now: datetime
) -> bool:
    """Whether one of ``keyring``'s keys sealed ``attestation`` for a memory's key and
    value, or a block's owner, key and content, as they are; False for anything else
    (another service's, a changed text, a key expired since)."""
    try:
        opened = unseal(keyring, attestation, now)
    except InvalidArgument:
        return False
    return opened.binding == _binding(subject) and opened.position == []


@dataclass(frozen=True)
class DecisionRecord:
    """A decision with its re-examinations, oldest first."""

    decision: Decision
    reexaminations: tuple[Reexamination, ...] = ()


Record = CardType | StoredConversation | MemoryRecord | UserBlock | DecisionRecord


def identities(record: Record) -> tuple[tuple[str, ...], ...]:
    """What names the record where it is stored, each as the words a refusal shows: a
    file holds each of them once (an import writes a record only where nothing holds
    its names yet, so a second record of one name would be dropped)."""
    if isinstance(record, CardType):
        return (("card type", repr(record.name)),)
    if isinstance(record, StoredConversation):
        c = record.conversation
        return (("conversation", f"{c.provider!r}/{c.conversation_id!r}"),)
    if isinstance(record, MemoryRecord):
        m = record.memory
        return (
            ("memory id", str(m.id)),
            ("memory key", f"{m.key!r} of {m.owner.scope.value} {m.owner.id!r}"),
        )
    if isinstance(record, UserBlock):
        whose = f" of user {record.user_id!r}" if record.user_id else ""
        return (("block", record.key.describe() + whose),)
    return (
        ("decision id", str(record.decision.id)),
        ("decision of run", repr(record.decision.run_id)),
        *(("re-examination id", str(r.id)) for r in record.reexaminations),
        *(("re-examination of run", repr(r.run_id)) for r in record.reexaminations),
    )


def kind_of(record: Record) -> str:
    """The record's ``kind`` in the format."""
    if isinstance(record, CardType):
        return "card_type"
    if isinstance(record, StoredConversation):
        return "conversation"
    if isinstance(record, MemoryRecord):
        return "memory"
    if isinstance(record, UserBlock):
        return "block"
    return "decision"


class FormatError(ValueError):
    """A line that is not what the format says."""


def header(tenant_id: str, exported_at: datetime) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "tenant": tenant_id,
        "exported_at": exported_at.isoformat(),
    }


def check_header(line: Any) -> int:
    """The file's version.

    Raises: FormatError — not the header of a file this version reads."""
    if not isinstance(line, Mapping) or line.get("format") != FORMAT:
        raise FormatError(f"the first line is not an {FORMAT} header")
    version = line.get("version")
    if version not in READS:
        said = ", ".join(map(str, READS[:-1])) + f" and {READS[-1]}"
        raise FormatError(
            f"format version {version!r}; this agent-memory reads versions {said}: "
            "export the data again with this version"
        )
    return cast(int, version)


# From this version on a file ends with a last line saying how many records it holds:
# a file cut short (a disk that filled, a copy stopped) is told from a whole one.
ENDS_SINCE = 4


def ending(records: int) -> dict[str, Any]:
    """The last line of an export of ``records`` records."""
    return {"end": FORMAT, "records": records}


def check_ending(line: Any, records: int) -> None:
    """Raises: FormatError — ``line`` is not the last line of an export of ``records``
    records."""
    cut = (
        f'the file ends without the last line an export writes ({{"end": "{FORMAT}", '
        '"records": N}): it was cut short; export it again'
    )
    if not isinstance(line, Mapping) or line.get("end") != FORMAT:
        raise FormatError(cut)
    if set(line) != {"end", "records"} or line["records"] != records:
        raise FormatError(
            f"the last line says the export wrote {line.get('records')!r} records, and the "
            f"file holds {records}: it was changed or cut; export it again"
        )
