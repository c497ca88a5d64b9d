"""What the service takes in each field of a request, as the OpenAPI document states it.

The domain refuses what breaks its rules (``domain/text_rules.py`` and the limits of
each module); this table says which rule, with which limit, a field of the contract
meets, so the document states the same limits from the same constants and patterns.
A field is named by its full proto name, or by its bare name for the fields that mean
one thing wherever they appear (an ``agent_id`` is an agent's name in every request).
Beyond what a JSON Schema can say (a value that carries a secret or reads as an
instruction, a filter's grammar, a page token this server issued), the field's
comment says it and the server answers 400 naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from google.protobuf.descriptor import FieldDescriptor

from agent_memory.api.convert import UPDATABLE_MEMORY_FIELDS, source_value_name
from agent_memory.api.memory_servicer import SETTINGS_SWITCHES, WORKSPACE_SETTINGS
from agent_memory.domain import (
    active_sessions,
    agents,
    blocks,
    decisions,
    extraction,
    memorize,
    memory,
    memory_query,
    paging,
    recall,
)
from agent_memory.domain.text_rules import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS
from agent_memory.service.keys import IDENTITY_MAX_CHARS
from agent_memory.service.memories import MAX_CHAIN, UPSERT_SOURCES

Lines = Literal["any", "one", "identifier", "name", "token"]

# What each kind of text must not hold, as the inside of a regular expression class.
_NO_NUL = r"\x00"
FORBIDDEN: Mapping[str, str] = {
    # text_violations: no NUL.
    "any": _NO_NUL,
    # ... and on one line (the domain's one-line texts: a summary, a note).
    "one": _NO_NUL + r"\r\n\u2028\u2029\x85",
    # identifier_violations: no control characters, nothing that shows nothing.
    "identifier": CONTROL_CHARACTERS + INVISIBLE_CHARACTERS,
    # name_violations: an identifier that is one segment of a path.
    "name": "/" + CONTROL_CHARACTERS + INVISIBLE_CHARACTERS,
    # A session id as the model reported it: no whitespace or control characters.
    "token": active_sessions.SESSION_ID_FORBIDDEN,
}


# identifier_violations: no space at either end, nor two in a row.
WORD_SPACING = r"(?!\s)(?!.*\s$)(?!.*\s\s)"


# text_violations of a text that must hold something: more than spaces (or nothing,
# where the field may be left out).
NOT_BLANK = r"(?=[\s\S]*\S)"


def without(forbidden: str, *, spaced_as_words: bool = False, blank: bool = True) -> str:
    """A pattern of a whole text holding none of the characters of a class (and, with
    ``spaced_as_words``, spaces only one at a time between other characters; without
    ``blank``, something besides spaces, or nothing at all)."""
    if not blank:
        return f"^(?:{NOT_BLANK}[^{forbidden}]*)?$"
    return f"^{WORD_SPACING if spaced_as_words else ''}[^{forbidden}]*$"


@dataclass(frozen=True)
class Text:
    """A string of ``min_chars`` to ``max_chars`` code points (no upper end when None),
    holding what ``lines`` allows, or matching ``pattern`` whole. ``min_chars`` holds
    where the text is given: a field whose empty value means unset (proto3 without
    presence) may be left empty, and is then absent."""

    max_chars: int | None
    lines: Lines = "any"
    pattern: str = ""
    min_chars: int = 1

    def schema(self, *, given: bool, also: str = "") -> dict[str, Any]:
        """The keywords of the rule. ``given``: whether an empty text is one given (else
        it is absent, and the pattern takes it); ``also``: characters the text must not
        hold beyond the rule's (a regular expression class's inside)."""
        found: dict[str, Any] = {}
        if given and self.min_chars:
            found["minLength"] = self.min_chars
        if self.max_chars is not None:
            found["maxLength"] = self.max_chars
        if self.pattern:
            found["pattern"] = f"^(?:{self.pattern})$" if given else f"^(?:{self.pattern})?$"
        elif self.lines in ("identifier", "name"):
            found["pattern"] = without(FORBIDDEN[self.lines], spaced_as_words=True)
        elif self.lines == "token":
            found["pattern"] = without(FORBIDDEN[self.lines])  # no control character at all
        else:
            found["pattern"] = without(FORBIDDEN[self.lines] + also, blank=not self.min_chars)
        if self.lines == "name":
            found["not"] = {"enum": [".", ".."]}
        return found


@dataclass(frozen=True)
class Number:
    """A number from ``minimum`` to ``maximum`` (either end open when None)."""

    minimum: float | None = None
    maximum: float | None = None

    def schema(self, *, given: bool, also: str = "") -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.minimum is not None:
            found["minimum"] = self.minimum
        if self.maximum is not None:
            found["maximum"] = self.maximum
        return found


@dataclass(frozen=True)
class Items:
    """A list of at most ``max_items`` (no limit when None), each meeting ``each``,
    none twice when ``unique``."""

    max_items: int | None
    each: Text | Number | None = None
    unique: bool = False

    def schema(self, *, given: bool, also: str = "") -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.max_items is not None:
            found["maxItems"] = self.max_items
        if self.unique:
            found["uniqueItems"] = True
        return found


@dataclass(frozen=True)
class Mask:
    """A field mask naming only ``paths`` (each by its proto or JSON name), at least
    ``min_paths`` of them."""

    paths: tuple[str, ...]
    min_paths: int = 0

    def schema(self, *, given: bool, also: str = "") -> dict[str, Any]:
        names = "|".join(sorted({form for path in self.paths for form in (path, _camel(path))}))
        one = rf"[ ]*(?:{names})[ ]*"
        listed = rf"{one}(?:,{one})*"
        return {"pattern": f"^{listed}$" if self.min_paths else f"^(?:{listed})?$"}


@dataclass(frozen=True)
class Span:
    """A duration (its JSON form: seconds and an ``s``) from zero to ``max_seconds``."""

    max_seconds: int

    def schema(self, *, given: bool, also: str = "") -> dict[str, Any]:
        below = rf"{at_most(self.max_seconds - 1)}(?:\.[0-9]{{1,9}})?"
        return {"pattern": rf"^(?:{below}|{self.max_seconds}(?:\.0{{1,9}})?)s$"}


@dataclass(frozen=True)
class Choice:
    """An enum field that takes only ``names`` of its values (its unset value too, when
    the field may be left out)."""

    names: tuple[str, ...]

    def schema(self, *, given: bool, also: str = "") -> dict[str, Any]:
        return {"enum": list(self.names)}


Rule = Text | Number | Items | Mask | Span | Choice


def at_most(limit: int) -> str:
    """A regular expression of the decimal numbers from 0 to ``limit``."""
    digits = str(limit)
    shorter = f"[0-9]{{1,{len(digits) - 1}}}" if len(digits) > 1 else ""
    options = [shorter] if shorter else []
    for i, digit in enumerate(digits):
        rest = len(digits) - i - 1
        if digit != "0":
            low = "1" if i == 0 and len(digits) > 1 else "0"
            if int(digit) - 1 >= int(low):
                tail = f"[0-9]{{{rest}}}" if rest else ""
                options.append(f"{digits[:i]}[{low}-{int(digit) - 1}]{tail}")
    options.append(digits)
    return "(?:" + "|".join(options) + ")"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


_OWNER = Text(memory.OWNER_ID_MAX_CHARS, "name")
_KEY = Text(memory.KEY_MAX_CHARS, "identifier")
_VALUE = Text(memory.VALUE_MAX_CHARS)
_RUN_ID = Text(active_sessions.RUN_ID_MAX_CHARS)
_SESSION_ID = Text(active_sessions.SESSION_ID_MAX_CHARS, "token")
_TAGS = Items(memorize.MAX_TAGS, Text(memorize.TAG_INPUT_MAX_CHARS, min_chars=0))
_CARD_TYPE = Text(decisions.CARD_TYPE_NAME_MAX_CHARS, pattern=decisions.CARD_TYPE_NAME_PATTERN)
_ACTION = Text(decisions.ACTION_MAX_CHARS, pattern=decisions.ACTION_PATTERN)
_ACTIONS = Items(decisions.MAX_ACTIONS, _ACTION, unique=True)
_POSITION = Number(0)
_SCORE = Number(0, 1)
_PERCENT = Number(memory.IMPORTANCE_MIN, memory.IMPORTANCE_MAX)
_SLIDE = Span(int(agents.EXPIRY_SLIDE_MAX.total_seconds()))
_PAGE_TOKEN = Text(paging.MAX_TOKEN_CHARS, pattern="[A-Za-z0-9_-]*")
# "*" (the resource as it is now) may come with spaces around it.
_MEMORY_ETAG = Text(None, pattern=rf"[ \t]*\*[ \t]*|{memory.ETAG_PATTERN}")
_BLOCK_ETAG = Text(None, pattern=rf"[ \t]*(?:\*|{blocks.BLOCK_ETAG_PATTERN})[ \t]*")
_ORDER_NAMES = "|".join(
    sorted({form for name in memory_query.ORDER_FIELDS for form in (name, _camel(name))})
)
_ORDER_ONE = rf"(?:{_ORDER_NAMES})(?:\s+(?:[aA][sS][cC]|[dD][eE][sS][cC]))?"
# Fields comma-separated (AIP-132), each with its direction.
_ORDER = rf"\s*(?:{_ORDER_ONE}(?:\s*,\s*{_ORDER_ONE})*)?\s*"

# By the field's bare name: fields that mean one thing wherever a request holds them.
BY_NAME: Mapping[str, Rule] = {
    "agent_id": _OWNER,
    "workspace_id": _OWNER,
    "chain_agent_ids": Items(MAX_CHAIN, _OWNER),
    "page_token": _PAGE_TOKEN,
    # Whose blocks an orchestrator reads, or a key's user.
    "user_id": Text(IDENTITY_MAX_CHARS, "name"),
}

# By full name: the rest.
_V1 = "agentmemory.v1."
_RULES: dict[str, Rule] = {
    "UpsertMemoryRequest.key": _KEY,
    "UpsertMemoryRequest.value": _VALUE,
    "UpsertMemoryRequest.importance": _PERCENT,
    # Memorize writes its own memories: an upsert writes the other sources.
    "UpsertMemoryRequest.source": Choice(
        ("MEMORY_SOURCE_UNSPECIFIED", *(source_value_name(s) for s in UPSERT_SOURCES))
    ),
    "Memory.key": _KEY,
    "Memory.value": _VALUE,
    "Memory.importance": _PERCENT,
    "Memory.tags": _TAGS,
    "Memory.confidence": _SCORE,
    "UpdateMemoryRequest.update_mask": Mask(UPDATABLE_MEMORY_FIELDS, min_paths=1),
    "UpdateMemoryRequest.etag": _MEMORY_ETAG,
    "DeleteMemoryRequest.etag": _MEMORY_ETAG,
    "ListMemoriesRequest.filter": Text(memory_query.FILTER_MAX_CHARS),
    "ListMemoriesRequest.order_by": Text(None, pattern=_ORDER),
    "MemorizeRequest.content": _VALUE,
    "MemorizeRequest.memory_key": _KEY,
    "MemorizeRequest.tags": _TAGS,
    "MemorizeRequest.confidence": _SCORE,
    "MemorizeRequest.supersedes": Items(memorize.MAX_SUPERSEDES),
    "MemorizeRequest.groundings": Items(memorize.MAX_GROUNDINGS),
    "Conversation.conversation_id": Text(memorize.CONVERSATION_ID_MAX_CHARS),
    "Conversation.provider": Text(memorize.PROVIDER_MAX_CHARS, min_chars=0),
    "Conversation.messages": Items(memorize.MAX_MESSAGES),
    "Conversation.raw_events": Items(
        memorize.MAX_RAW_EVENTS, Text(memorize.RAW_EVENT_MAX_CHARS, min_chars=0)
    ),
    "ConversationMessage.content": Text(None),
    "ConversationMessage.role": Text(memorize.ROLE_MAX_CHARS, "identifier", min_chars=0),
    "ConversationMessage.provider_message_id": Text(
        memorize.MESSAGE_ID_MAX_CHARS, "identifier", min_chars=0
    ),
    "Grounding.quote": Text(None, min_chars=0),
    "Grounding.provider_message_id": Text(memorize.MESSAGE_ID_MAX_CHARS, min_chars=0),
    "Grounding.message_position": _POSITION,
    "Grounding.start_character": _POSITION,
    "Grounding.end_character": _POSITION,
    "Grounding.raw_event_index": _POSITION,
    "Grounding.raw_start_character": _POSITION,
    "Grounding.raw_end_character": _POSITION,
    "RecordLearningRequest.content": _VALUE,
    "ExtractMemoriesRequest.session_id": Text(extraction.RUN_NAME_MAX_CHARS),
    "ExtractMemoriesRequest.chain_id": Text(extraction.RUN_NAME_MAX_CHARS),
    "ExtractMemoriesRequest.transcript": Text(extraction.TRANSCRIPT_MAX_CHARS, min_chars=0),
    "RecordRunSessionRequest.run_id": _RUN_ID,
    "RecordRunSessionRequest.session_id_before": _SESSION_ID,
    "RecordRunSessionRequest.session_id_after": _SESSION_ID,
    "WriteBlockRequest.etag": _BLOCK_ETAG,
    "DeleteBlockRequest.etag": _BLOCK_ETAG,
    "RecallRequest.query": Text(recall.QUERY_MAX_CHARS),
    "RecallRequest.min_score": _SCORE,
    "RenderPromptRequest.persona": Text(recall.PERSONA_MAX_CHARS, min_chars=0),
    "RenderPromptRequest.user_message": Text(recall.USER_MESSAGE_MAX_CHARS, min_chars=0),
    "UpdateAgentSettingsRequest.update_mask": Mask(tuple(sorted(SETTINGS_SWITCHES))),
    "AgentSettings.expiry_slide": _SLIDE,
    "UpdateWorkspaceSettingsRequest.update_mask": Mask(tuple(sorted(WORKSPACE_SETTINGS))),
    "WorkspaceSettings.expiry_slide": _SLIDE,
    "MemoryPolicy.archival_limit": Number(0, recall.MAX_LIMIT),
    "MemoryPolicy.archival_min_score": _SCORE,
    "MemoryPolicy.recent_decisions_limit": Number(0, decisions.RECENT_MAX),
    "CardType.name": _CARD_TYPE,
    "CardType.actions": _ACTIONS,
    "CardType.decision_actions": _ACTIONS,
    "Decision.run_id": Text(decisions.RUN_ID_MAX_CHARS, "identifier"),
    "Decision.card_type": _CARD_TYPE,
    "Decision.action": _ACTION,
    "Decision.summary": Text(decisions.SUMMARY_MAX_CHARS, "one"),
    "ListRecentDecisionsRequest.card_type": _CARD_TYPE,
    "RecordReexaminationRequest.run_id": Text(decisions.RUN_ID_MAX_CHARS, "identifier"),
    "RecordReexaminationRequest.conviction_score": Number(
        decisions.CONVICTION_MIN, decisions.CONVICTION_MAX
    ),
    "RecordReexaminationRequest.notes": Text(decisions.NOTES_MAX_CHARS, "one"),
    "RecordReexaminationRequest.suggested_action": _ACTION,
}
# A memory's optional texts, as the domain bounds them (a new one is covered here too).
_RULES.update(
    {
        f"{message}.{name}": Text(most, "one", min_chars=0)
        for name, most in memory.OPTIONAL_TEXT_MAX_CHARS.items()
        for message in ("UpsertMemoryRequest", "Memory")
    }
)
BY_FIELD: Mapping[str, Rule] = {_V1 + name: rule for name, rule in _RULES.items()}


def rule_of(field: FieldDescriptor) -> Rule | None:
    """The rule a field of a request meets, when the table names one."""
    return BY_FIELD.get(field.full_name) or BY_NAME.get(field.name)
