"""The per-pass cost cap, enforced before the call.

Input tokens are bounded by the UTF-8 byte count of everything sent (a
byte-level tokenizer never emits more tokens than bytes), plus a fixed
allowance for the request framing and the tool-use system prompt. Only when
that bound does not fit is the exact count asked of the API. ``max_tokens``
is then what the rest of the budget buys at the output price, so the worst
case of the call still fits.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FRAMING_TOKENS = 600
MIN_OUTPUT_TOKENS = 256
MAX_OUTPUT_TOKENS = 4096


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6


DEFAULT_PRICES: Mapping[str, Price] = {
    "claude-haiku-4-5": Price(1.0, 5.0),
    "claude-sonnet-4-5": Price(3.0, 15.0),
    "claude-sonnet-4": Price(3.0, 15.0),
    "claude-opus-4-1": Price(15.0, 75.0),
    "claude-3-5-haiku": Price(0.8, 4.0),
}


def price_for(model: str, table: Mapping[str, Price]) -> Price | None:
    """The price of ``model``: an exact entry, else the longest entry it starts with
    (so a dated id such as ``claude-haiku-4-5-20251001`` finds ``claude-haiku-4-5``)."""
    if model in table:
        return table[model]
    matches = [name for name in table if model.startswith(name)]
    return table[max(matches, key=len)] if matches else None


def prices(raw: str) -> Mapping[str, Price]:
    """The price table a server goes by: ``raw`` (the setting) parsed, or without it the
    built-in one."""
    return parse_prices(raw) if raw else DEFAULT_PRICES


def parse_prices(raw: str) -> dict[str, Price]:
    """``{"model": [input_per_mtok, output_per_mtok], ...}`` from a setting."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("the price table must be a JSON object")
    table: dict[str, Price] = {}
    for model, pair in data.items():
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, int | float) and v >= 0 for v in pair)
        ):
            raise ValueError(f"price of {model!r} must be [input_per_mtok, output_per_mtok]")
        table[str(model)] = Price(float(pair[0]), float(pair[1]))
    return table


def input_token_bound(system: str, messages: list[dict[str, Any]], tools: list[Any]) -> int:
    payload = json.dumps([system, messages, tools], ensure_ascii=False)
    return len(payload.encode()) + FRAMING_TOKENS


@dataclass(frozen=True)
class Allowance:
    """What one call may spend: its output cap, or why it may not run."""

    max_tokens: int
    worst_case_usd: float
    refusal: str = ""


def allowance(input_tokens: int, price: Price, budget_usd: float) -> Allowance:
    """The largest ``max_tokens`` whose worst case stays within ``budget_usd``."""
    input_cost = price.cost(input_tokens, 0)
    remaining = budget_usd - input_cost
    if remaining < 0:
        affordable = 0
    elif price.output_per_mtok <= 0:
        affordable = MAX_OUTPUT_TOKENS
    else:
        affordable = math.floor(remaining * 1e6 / price.output_per_mtok)
    max_tokens = min(affordable, MAX_OUTPUT_TOKENS)
    worst = price.cost(input_tokens, max(max_tokens, 0))
    if max_tokens < MIN_OUTPUT_TOKENS:
        return Allowance(
            0,
            worst,
            f"input of at most {input_tokens} tokens costs up to ${input_cost:.4f}, leaving "
            f"room for {max(affordable, 0)} output tokens within ${budget_usd:.4f} "
            f"(at least {MIN_OUTPUT_TOKENS} needed)",
        )
    return Allowance(max_tokens, worst)
