"""The model behind a small protocol, and its Anthropic implementation."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import anthropic

from agent_memory.domain.extraction import Action, Candidate, ExtractionOutcome
from agent_memory.domain.memory import Scope, period_violations
from agent_memory.extract.prompt import TOOL_NAME

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelCall:
    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_tokens: int = 0


@dataclass(frozen=True)
class ModelReply:
    """What one call produced: candidates, or an outcome that says why there are none."""

    outcome: ExtractionOutcome
    candidates: list[Candidate] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    detail: str = ""


class ExtractionModel(Protocol):
    async def count_tokens(self, call: ModelCall) -> int:
        """Exact input tokens of ``call``. Raises: anything, meaning "unknown"."""
        ...

    async def extract(self, call: ModelCall) -> ModelReply:
        """Run ``call``; never raises: failures come back as the reply's outcome."""
        ...


NOT_CONFIGURED = (
    "no model is configured: the server has no ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) "
    "in its environment"
)


def model_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the SDK will find credentials where it looks for them, the environment."""
    env = os.environ if environ is None else environ
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


class AnthropicModel:
    """The Messages API through the official SDK, which reads ANTHROPIC_API_KEY and
    ANTHROPIC_BASE_URL from the environment as it always does."""

    def __init__(self, *, timeout_seconds: float, max_retries: int) -> None:
        self._timeout = timeout_seconds
        self._max_retries = max_retries
        self._client: anthropic.AsyncAnthropic | None = None

    def _sdk(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                timeout=self._timeout, max_retries=self._max_retries
            )
        return self._client

    async def count_tokens(self, call: ModelCall) -> int:
        counted = await self._sdk().messages.count_tokens(
            model=call.model,
            system=call.system,
            messages=call.messages,  # type: ignore[arg-type]
            tools=call.tools,  # type: ignore[arg-type]
            tool_choice={"type": "tool", "name": TOOL_NAME},
        )
        return int(counted.input_tokens)

    async def extract(self, call: ModelCall) -> ModelReply:
        if not model_configured():
            return ModelReply(ExtractionOutcome.MODEL_ERROR, detail=NOT_CONFIGURED)
        try:
            response = await self._sdk().messages.create(  # type: ignore[call-overload]
                model=call.model,
                max_tokens=call.max_tokens,
                system=call.system,
                messages=call.messages,
                tools=call.tools,
                tool_choice={"type": "tool", "name": TOOL_NAME},
            )
        except anthropic.APITimeoutError:
            return ModelReply(ExtractionOutcome.TIMEOUT, detail="the model call timed out")
        except anthropic.APIStatusError as exc:
            return ModelReply(
                ExtractionOutcome.MODEL_ERROR,
                detail=f"the model API answered {exc.status_code}",
            )
        except (anthropic.APIError, anthropic.AnthropicError) as exc:
            return ModelReply(ExtractionOutcome.MODEL_ERROR, detail=type(exc).__name__)
        except Exception as exc:
            # e.g. no credentials configured: the SDK raises TypeError at request time.
            log.warning("extraction model call failed: %s", exc)
            return ModelReply(ExtractionOutcome.MODEL_ERROR, detail=type(exc).__name__)
        usage = getattr(response, "usage", None)
        if usage is None:
            # A 200 whose body is not a message: the SDK hands back the raw text.
            return ModelReply(
                ExtractionOutcome.MALFORMED_REPLY, detail="the reply is not a message"
            )
        input_tokens = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        output_tokens = usage.output_tokens
        if response.stop_reason == "refusal":
            return ModelReply(
                ExtractionOutcome.REFUSED, [], input_tokens, output_tokens, "the model refused"
            )
        blocks = [b for b in response.content if b.type == "tool_use" and b.name == TOOL_NAME]
        if len(blocks) != 1:
            return ModelReply(
                ExtractionOutcome.MALFORMED_REPLY,
                [],
                input_tokens,
                output_tokens,
                f"expected one {TOOL_NAME} call, got {len(blocks)}",
            )
        try:
            candidates = parse_candidates(blocks[0].input)
        except ValueError as exc:
            return ModelReply(
                ExtractionOutcome.MALFORMED_REPLY, [], input_tokens, output_tokens, str(exc)
            )
        outcome = ExtractionOutcome.COMPLETED if candidates else ExtractionOutcome.NO_FACTS
        return ModelReply(outcome, candidates, input_tokens, output_tokens)


def parse_candidates(data: object) -> list[Candidate]:
    """The tool input as candidates. Raises ValueError when it is not the schema's shape."""
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise ValueError("the tool input has no list of facts")
    candidates = []
    for i, fact in enumerate(data["facts"]):
        if not isinstance(fact, dict):
            raise ValueError(f"fact {i} is not an object")
        key, value = fact.get("key"), fact.get("value")
        confidence, scope = fact.get("confidence"), fact.get("scope")
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError(f"fact {i} lacks a text key or value")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            raise ValueError(f"fact {i} lacks a numeric confidence")
        if not math.isfinite(confidence):
            raise ValueError(f"fact {i} has a non-finite confidence")
        if not 0 <= confidence <= 1:
            # The tool's schema bounds it; a memory never holds one past (Memorize
            # refuses it, and so would an import of what a pass wrote).
            raise ValueError(f"fact {i} has a confidence outside 0 to 1")
        if scope not in {"agent", "workspace"}:
            raise ValueError(f"fact {i} has scope {scope!r}")
        action, target = fact.get("action") or Action.ADD.value, fact.get("target") or ""
        if action not in {a.value for a in Action}:
            raise ValueError(f"fact {i} has action {action!r}")
        if not isinstance(target, str):
            raise ValueError(f"fact {i} has a target that is not text")
        start, end = fact_day(fact.get("valid_from")), fact_day(fact.get("valid_until"))
        if period_violations(start, end):
            start = end = None  # a period that ends before it starts says nothing
        candidates.append(
            Candidate(
                key=key,
                value=value,
                confidence=float(confidence),
                scope=Scope.WORKSPACE if scope == "workspace" else Scope.AGENT,
                action=Action(action),
                target=target.strip(),
                valid_start_time=start,
                valid_end_time=end,
            )
        )
    return candidates


def fact_day(raw: object) -> datetime | None:
    """A day of a fact's period as the model gave it: an ISO date (its start, UTC) or
    an RFC 3339 instant (one without a zone read as UTC). None for anything else: a bad
    date costs the fact its bound, never the fact."""
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 64:
        return None
    try:
        when = datetime.fromisoformat(raw.strip().replace("z", "Z"))
    except ValueError:
        return None
    if when.tzinfo is None:
        return when.replace(tzinfo=UTC)
    try:
        return when.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
