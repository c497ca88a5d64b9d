"""One frozen settings object, built once at start-up and passed down."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

DEFAULT_LISTEN = "127.0.0.1:50051"
# The user's data folder (e.g. ~/.local/share/agent-memory), whatever the current folder.
DEFAULT_DATA_DIR = platformdirs.user_data_dir("agent-memory")


class SettingsError(ValueError):
    """A setting from the environment or the command line cannot be used."""


@dataclass(frozen=True)
class Settings:
    """Server settings. Each field has an environment variable ``MEMORY_<NAME>``."""

    listen: str = DEFAULT_LISTEN
    database_url: str | None = None
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    insecure_local: bool = False
    log_level: str = "INFO"
    # Server processes sharing the port (SO_REUSEPORT), each with its own pool.
    workers: int = 1
    # How long a verified API key is trusted without asking the database (0 to 5 s):
    # a revoked key stops working on every replica within this time.
    auth_cache_seconds: float = 5.0
    core_max_chars: int = 4000
    core_max_entries: int = 20
    archival_max_chars: int = 8000
    block_versions_kept: int = 50
    shutdown_grace_seconds: float = 10.0
    db_pool_size: int = 10
    db_statement_timeout_ms: int = 10_000
    max_message_bytes: int = 4 * 1024 * 1024
    render_agent_memory_cap: int = 50
    render_workspace_memory_cap: int = 30
    # Automatic extraction: the model, its price table and every guardrail.
    extraction_model: str = "claude-haiku-4-5-20251001"
    extraction_prices: str = ""  # JSON {"model": [usd_per_mtok_in, usd_per_mtok_out]}
    extraction_budget_usd: float = 0.03
    extraction_min_chars: int = 200
    extraction_max_chars: int = 12_000
    extraction_max_facts: int = 5
    extraction_min_confidence: float = 0.6
    extraction_hint_count: int = 20
    extraction_dedup_rows: int = 100
    extraction_jaccard_threshold: float = 0.8
    extraction_timeout_seconds: float = 30.0
    extraction_sdk_retries: int = 1
    extraction_settle_seconds: float = 30.0
    extraction_workers: int = 1
    extraction_poll_seconds: float = 1.0
    extraction_max_attempts: int = 3
    extraction_retry_base_seconds: float = 5.0
    extraction_lease_seconds: float = 300.0
    # Active memory: past this many runs since a reset, a reset is suggested.
    active_memory_warning_runs: int = 20
    # Recall by meaning: an OpenAI-compatible embeddings API (base URL, ending in /v1).
    # Unset: recall is lexical. Used only where PostgreSQL has pgvector.
    embedder_url: str | None = None
    embedder_model: str = ""
    embedder_api_key: str = field(default="", repr=False)
    embedder_timeout_seconds: float = 5.0
    embedding_weight: float = 0.3

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read ``MEMORY_*`` variables, then apply explicit (command-line) overrides."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(f"MEMORY_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = _parse(f.name, raw, cls.__dataclass_fields__[f.name].type)
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        settings.validate()
        return settings

    def with_overrides(self, **overrides: Any) -> Settings:
        return replace(self, **overrides)

    def validate(self) -> None:
        positive = (
            "core_max_chars",
            "core_max_entries",
            "archival_max_chars",
            "block_versions_kept",
            "db_pool_size",
            "max_message_bytes",
            "active_memory_warning_runs",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise SettingsError(f"MEMORY_{name.upper()} must be positive")
        if not 0 <= self.extraction_min_confidence <= 1:
            raise SettingsError("MEMORY_EXTRACTION_MIN_CONFIDENCE must be between 0 and 1")
        if not 0 <= self.extraction_jaccard_threshold <= 1:
            raise SettingsError("MEMORY_EXTRACTION_JACCARD_THRESHOLD must be between 0 and 1")
        for name in (
            "extraction_budget_usd",
            "extraction_settle_seconds",
            "extraction_retry_base_seconds",
            "extraction_sdk_retries",
        ):
            if getattr(self, name) < 0:
                raise SettingsError(f"MEMORY_{name.upper()} must not be negative")
        for name in (
            "extraction_max_chars",
            "extraction_max_facts",
            "extraction_max_attempts",
            "extraction_timeout_seconds",
            "extraction_poll_seconds",
            "extraction_lease_seconds",
        ):
            if getattr(self, name) <= 0:
                raise SettingsError(f"MEMORY_{name.upper()} must be positive")
        if self.extraction_prices:
            from agent_memory.extract.budget import parse_prices

            try:
                parse_prices(self.extraction_prices)
            except ValueError as exc:
                raise SettingsError(f"MEMORY_EXTRACTION_PRICES: {exc}") from exc
        if not 0 <= self.embedding_weight <= 1:
            raise SettingsError("MEMORY_EMBEDDING_WEIGHT must be between 0 and 1")
        if self.embedder_timeout_seconds <= 0:
            raise SettingsError("MEMORY_EMBEDDER_TIMEOUT_SECONDS must be positive")
        if self.embedder_url and not self.embedder_url.startswith(("http://", "https://")):
            raise SettingsError("MEMORY_EMBEDDER_URL must be an http:// or https:// URL")
        if self.shutdown_grace_seconds < 0:
            raise SettingsError("MEMORY_SHUTDOWN_GRACE_SECONDS must not be negative")
        _, colon, port = self.listen.rpartition(":")
        if not colon or not port.isdigit() or int(port) > 65535:
            raise SettingsError(
                f"--listen {self.listen!r}: must be HOST:PORT with a port from 0 to 65535 "
                "(--listen or MEMORY_LISTEN)"
            )
        if self.workers < 1:
            raise SettingsError("--workers (MEMORY_WORKERS) must be at least 1")
        if self.workers > 1 and not (
            sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
        ):
            raise SettingsError(
                f"--workers {self.workers} needs SO_REUSEPORT, which only Linux offers here; "
                "run one worker (--workers 1) per replica instead"
            )
        if not 0 <= self.auth_cache_seconds <= 5:
            raise SettingsError("MEMORY_AUTH_CACHE_SECONDS must be between 0 and 5")


def _parse(name: str, raw: str, annotation: object) -> Any:
    kind = str(annotation)
    try:
        if kind == "bool":
            lowered = raw.strip().lower()
            if lowered in {"1", "true", "yes", "on"}:
                return True
            if lowered in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "Path":
            return Path(raw)
    except ValueError as exc:
        raise SettingsError(f"MEMORY_{name.upper()}={raw!r} is not a valid {kind}") from exc
    return raw
