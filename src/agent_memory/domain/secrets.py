"""Secret detection for every write path: memory points at credentials, never holds them.

Known credential formats come from ``detect-secrets`` (its pattern detectors,
not its entropy scanners, which flag every hash and UUID). On top of those:
provider API keys it does not know, bearer tokens, and long random-looking
tokens, with git SHAs, UUIDs and other hex digests explicitly let through.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

from agent_memory.domain.errors import FieldViolation, InvalidArgument

# detect-secrets detectors that say nothing about secrets in free text.
_IGNORED_DETECTORS = {"IPPublicDetector"}

_PROVIDER_KEYS = re.compile(
    r"\b(?:"
    r"sk-ant-[A-Za-z0-9_\-]{20,}"  # Anthropic
    r"|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{32,}"  # OpenAI-style
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API keys
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab
    r"|gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub
    r"|github_pat_[A-Za-z0-9_]{60,}"
    r")"
)
_BEARER = re.compile(r"\bbearer\s+[A-Za-z0-9\-._~+/]{16,}=*", re.IGNORECASE)
# Bounded scheme and parts: an unbounded scheme made this quadratic on long words.
_PASSWORD_IN_URL = re.compile(
    r"\b[a-z][a-z0-9+.\-]{0,31}://[^\s:/@]{1,256}:[^\s@/]{1,256}@", re.IGNORECASE
)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-=.]{24,}")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HIGH_ENTROPY_BITS = 4.0
# Scanning takes about half a millisecond per 1,000 characters: longer texts are
# scanned on a worker thread, so the event loop goes on serving other calls.
OFF_LOOP_CHARS = 2000
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class SecretFinding:
    """What kind of secret was found; never the secret itself."""

    kind: str


@cache
def _detectors() -> tuple[tuple[str, RegexBasedDetector], ...]:
    found: list[tuple[str, RegexBasedDetector]] = []
    classes: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
    for secret_type, cls in sorted(classes.items()):
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in _IGNORED_DETECTORS:
            found.append((_kind(secret_type), cls()))
    return tuple(found)


def _kind(secret_type: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", secret_type.upper()).strip("_")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _random_looking(token: str) -> bool:
    core = token.strip("=.-_")
    if len(core) < 24 or _HEX.fullmatch(core) or _UUID.search(core):
        return False
    if "." in core and not any(c.isdigit() for c in core.split(".")[-1]):
        return False  # a dotted name (module.path.like_this), not a token
    if _looks_like_identifier(core):
        return False
    classes = sum(
        (
            any(c.islower() for c in core),
            any(c.isupper() for c in core),
            any(c.isdigit() for c in core),
        )
    )
    return classes == 3 and _entropy(core) >= _HIGH_ENTROPY_BITS


def _looks_like_identifier(token: str) -> bool:
    """CamelCase or snake_case made of words (``OAuth2AuthorizationCodeFlow``): every
    lowercase run belongs to a word of three letters or more, acronyms and digit runs
    stay short. Random tokens almost always break one of these."""
    parts = [p for p in re.split(r"[_\-]", token) if p]
    for part in parts:
        if not part.isalnum() or not part.isascii():
            return False
        for word in _WORDS.findall(part):
            if word.isdigit():
                if len(word) > 4:
                    return False
            elif word.isupper():
                if len(word) > 5:
                    return False
            elif len(word) < 3:
                return False
        if "".join(_WORDS.findall(part)) != part:
            return False
    return True


def find_secrets(text: str) -> list[SecretFinding]:
    """Every kind of secret in ``text``, each kind once, in a stable order."""
    kinds: list[str] = []

    def add(kind: str) -> None:
        if kind not in kinds:
            kinds.append(kind)

    for kind, detector in _detectors():
        if any(True for _ in detector.analyze_string(text)):
            add(kind)
    if _PROVIDER_KEYS.search(text):
        add("PROVIDER_API_KEY")
    if _BEARER.search(text):
        add("BEARER_TOKEN")
    if _PASSWORD_IN_URL.search(text):
        add("PASSWORD_IN_URL")
    if any(_random_looking(m.group()) for m in _TOKEN.finditer(text)):
        add("HIGH_ENTROPY_TOKEN")
    return [SecretFinding(k) for k in kinds]


def refuse_secrets(field: str, text: str) -> None:
    """Raise ``SECRET_IN_VALUE`` naming the kinds found (never the secret).

    Raises:
        InvalidArgument: ``text`` carries a secret.
    """
    findings = find_secrets(text)
    if not findings:
        return
    kinds = ", ".join(f.kind for f in findings)
    raise InvalidArgument(
        [
            FieldViolation(
                field,
                f"looks like it holds a secret ({kinds}); store where the credential "
                "lives, never the credential",
                "SECRET_IN_VALUE",
            )
        ],
        reason="SECRET_IN_VALUE",
        metadata={"field": field, "kinds": kinds},
    )


async def refuse_secrets_in(fields: Sequence[tuple[str, str]]) -> None:
    """:func:`refuse_secrets` for each (field, text), in order; off the event loop when
    the texts are long.

    Raises:
        InvalidArgument: a text carries a secret (the first such field is named).
    """

    def scan() -> None:
        for field, text in fields:
            refuse_secrets(field, text)

    if sum(len(text) for _, text in fields) <= OFF_LOOP_CHARS:
        scan()
    else:
        await asyncio.to_thread(scan)
