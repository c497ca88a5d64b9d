"""One frozen settings object, built once at start-up and passed down."""

from __future__ import annotations

import ipaddress
import math
import os
import socket
import ssl
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

DEFAULT_LISTEN = "127.0.0.1:50051"
# What MEMORY_METRICS_ENDPOINT may say.
METRICS_OFF, METRICS_KEYED, METRICS_OPEN = "off", "on", "open"
# The user's data folder (e.g. ~/.local/share/agent-memory), whatever the current folder.
DEFAULT_DATA_DIR = platformdirs.user_data_dir("agent-memory")


class SettingsError(ValueError):
    """A setting from the environment or the command line cannot be used."""


@dataclass(frozen=True)
class Settings:
    """Server settings. Each field has an environment variable ``MEMORY_<NAME>``."""

    listen: str = DEFAULT_LISTEN
    # HTTP/JSON and the memory panel on a second port; unset: no HTTP.
    http_listen: str | None = None
    database_url: str | None = None
    # At start, how long to keep retrying a database that does not answer yet.
    database_wait_seconds: float = 30.0
    # A hot standby of database_url for the reads that may lag (Recall, RenderPrompt,
    # listings); reads go to the primary while it lags past standby_max_lag_seconds,
    # and a caller's for read_your_writes_seconds after it wrote.
    database_read_url: str | None = None
    standby_max_lag_seconds: float = 5.0
    read_your_writes_seconds: float = 5.0
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    insecure_local: bool = False
    # TLS on the serving port: a PEM certificate chain and its key; with a client CA,
    # callers must present a certificate it signed.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    log_level: str = "INFO"
    # How often the server asks the database whether it answers (health follows it).
    health_check_seconds: float = 2.0
    # Server processes sharing the port (SO_REUSEPORT), each with its own pool.
    workers: int = 1
    # How long a verified API key is trusted without asking the database (0 to 5 s):
    # a revoked key stops working on every replica within this time.
    auth_cache_seconds: float = 5.0
    core_max_chars: int = 4000
    core_max_entries: int = 20
    archival_max_chars: int = 8000
    block_versions_kept: int = 50
    # How long the history behind as-of reads is kept: memory events and block
    # versions older than this are pruned (each memory and block keeps its state at
    # that horizon); as_of_time may reach back this far.
    history_days: int = 90
    shutdown_grace_seconds: float = 10.0
    # How long the index worker `serve` started may take to stop before it is killed.
    index_stop_seconds: float = 15.0
    # How long `serve --workers N` waits for every worker to serve before it gives up
    # (each opens its pool and loads the query model: slow on a loaded machine).
    worker_start_seconds: float = 180.0
    # HTTP against slow or vanished clients: a request's headers must arrive within
    # http_header_timeout_seconds of its connection (or of the response before it), its
    # body within http_body_timeout_seconds of its headers; past
    # http_max_connections open connections, new requests are answered 503.
    http_header_timeout_seconds: float = 10.0
    http_body_timeout_seconds: float = 20.0
    http_max_connections: int = 256
    # /metrics on the HTTP port, in the Prometheus text format: "off", "on" (an
    # orchestrator's API key required, as the API asks for one) or "open" (no key).
    metrics_endpoint: str = METRICS_OFF
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
    # Expired memories are invisible at once; the sweeper deletes them this often, in
    # batches of expiry_sweep_batch (each one statement).
    expiry_sweep_seconds: float = 60.0
    expiry_sweep_batch: int = 500
    # Active memory: past this many runs since a reset, a reset is suggested.
    active_memory_warning_runs: int = 20
    # Recall by meaning: "local" (a model in the process), "http" (an OpenAI-compatible
    # embeddings API at embedder_url) or "none" (lexical). Unset: http when a URL is
    # given, else local where the model is installed. Needs pgvector in PostgreSQL.
    embedder: str = ""
    embedder_url: str | None = None
    embedder_model: str = ""
    embedder_api_key: str = field(default="", repr=False)
    embedder_timeout_seconds: float = 5.0
    embedder_query_prefix: str = ""
    embedder_passage_prefix: str = ""
    # Cores an index worker's local model uses (a serving process embeds queries on one);
    # 0: every core, which the worker leaves to anything else that wants it.
    embedder_threads: int = 0
    embedding_weight: float = 0.5
    # Recall reads an owner's archival lines (and memories) as they are up to this many;
    # past it, at most recall_candidates of them, through indexes.
    recall_scan_rows: int = 2000
    recall_candidates: int = 200
    # Who embeds lines and memories: "child", one index worker process that `serve`
    # starts beside itself (and restarts); "none", only workers started apart
    # (`agent-memory index`).
    indexer: str = "child"
    # The index workers: lines and rows claimed per round, how often an idle one looks
    # for work, and how long a claim holds before another may take it.
    index_batch: int = 32
    index_poll_seconds: float = 1.0
    index_lease_seconds: float = 60.0
    # The share of its time an index worker embeds while other processes keep the
    # machine busy (1: as fast as it can, whatever else runs).
    index_busy_share: float = 0.1

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
            "history_days",
            "db_pool_size",
            "max_message_bytes",
            "active_memory_warning_runs",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise SettingsError(f"MEMORY_{name.upper()} must be positive")
        if self.max_message_bytes > MAX_MESSAGE_BYTES:
            raise SettingsError(
                f"MEMORY_MAX_MESSAGE_BYTES must be at most {MAX_MESSAGE_BYTES} (2 GiB less a "
                "byte, the most gRPC takes)"
            )
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
            "expiry_sweep_seconds",
            "expiry_sweep_batch",
            "index_batch",
            "index_poll_seconds",
            "recall_candidates",
            "index_lease_seconds",
            "http_header_timeout_seconds",
            "http_body_timeout_seconds",
            "http_max_connections",
        ):
            if getattr(self, name) <= 0:
                raise SettingsError(f"MEMORY_{name.upper()} must be positive")
        if self.extraction_prices:
            from agent_memory.extract.budget import parse_prices

            try:
                parse_prices(self.extraction_prices)
            except ValueError as exc:
                raise SettingsError(f"MEMORY_EXTRACTION_PRICES: {exc}") from exc
        if self.recall_scan_rows < 0:
            raise SettingsError("MEMORY_RECALL_SCAN_ROWS must not be negative")
        if not 0 < self.index_busy_share <= 1:
            raise SettingsError("MEMORY_INDEX_BUSY_SHARE must be above 0 and at most 1")
        if not 0 <= self.embedding_weight <= 1:
            raise SettingsError("MEMORY_EMBEDDING_WEIGHT must be between 0 and 1")
        if self.embedder_timeout_seconds <= 0:
            raise SettingsError("MEMORY_EMBEDDER_TIMEOUT_SECONDS must be positive")
        if self.embedder_url and not self.embedder_url.startswith(("http://", "https://")):
            raise SettingsError(
                f"--embedder-url {self.embedder_url!r}: give an http:// or https:// URL "
                "(--embedder-url or MEMORY_EMBEDDER_URL)"
            )
        if self.embedder == "none" and self.embedder_url:
            raise SettingsError(
                "--embedder none with --embedder-url: the URL would be ignored; drop one "
                "(--embedder or MEMORY_EMBEDDER, --embedder-url or MEMORY_EMBEDDER_URL)"
            )
        if self.database_read_url and not self.database_url:
            raise SettingsError(
                "--database-read-url needs --database-url: a standby is of a server's "
                "database, not of the embedded one (MEMORY_DATABASE_READ_URL, "
                "MEMORY_DATABASE_URL)"
            )
        if self.indexer not in ("child", "none"):
            raise SettingsError(
                f"--indexer {self.indexer!r}: use child (an index worker beside the server) "
                "or none (workers started apart with agent-memory index) "
                "(--indexer or MEMORY_INDEXER)"
            )
        if self.embedder not in ("", "local", "http", "none"):
            raise SettingsError(
                f"--embedder {self.embedder!r}: use local, http or none "
                "(--embedder or MEMORY_EMBEDDER)"
            )
        if self.embedder_threads < 0:
            raise SettingsError("MEMORY_EMBEDDER_THREADS must not be negative")
        if self.shutdown_grace_seconds < 0:
            raise SettingsError("MEMORY_SHUTDOWN_GRACE_SECONDS must not be negative")
        if self.index_stop_seconds < 0:
            raise SettingsError("MEMORY_INDEX_STOP_SECONDS must not be negative")
        if self.worker_start_seconds <= 0:
            raise SettingsError("MEMORY_WORKER_START_SECONDS must be positive")
        check_address("--listen", "MEMORY_LISTEN", self.listen)
        if self.http_listen is not None:
            check_address("--http-listen", "MEMORY_HTTP_LISTEN", self.http_listen)
        self._validate_metrics()
        if not 1 <= self.workers <= MAX_WORKERS:
            raise SettingsError(
                f"--workers (MEMORY_WORKERS) must be from 1 to {MAX_WORKERS}: a worker is a "
                "process of its own (some 130 MB); one per core is the most that helps"
            )
        if self.workers > 1 and not (
            sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
        ):
            raise SettingsError(
                f"--workers {self.workers} needs SO_REUSEPORT, which only Linux offers here; "
                "run one worker (--workers 1) per replica instead"
            )
        if not 0 <= self.auth_cache_seconds <= 5:
            raise SettingsError("MEMORY_AUTH_CACHE_SECONDS must be between 0 and 5")
        if self.standby_max_lag_seconds <= 0:
            raise SettingsError("MEMORY_STANDBY_MAX_LAG_SECONDS must be positive")
        if self.read_your_writes_seconds < 0:
            raise SettingsError("MEMORY_READ_YOUR_WRITES_SECONDS must not be negative")
        for setting in fields(self):
            value = getattr(self, setting.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise SettingsError(
                    f"MEMORY_{setting.name.upper()}={value!r}: give a finite number"
                )
        if self.database_wait_seconds < 0:
            raise SettingsError(
                "--database-wait (MEMORY_DATABASE_WAIT_SECONDS) must not be negative"
            )
        if self.health_check_seconds < 0.1:
            raise SettingsError("MEMORY_HEALTH_CHECK_SECONDS must be at least 0.1")
        if self.log_level.upper() not in LOG_LEVELS:
            raise SettingsError(
                f"--log-level {self.log_level!r}: use one of {', '.join(LOG_LEVELS)} "
                "(--log-level or MEMORY_LOG_LEVEL)"
            )
        self._validate_tls()
        for flag, address in (("--listen", self.listen), ("--http-listen", self.http_listen)):
            if self.insecure_local and address and not is_loopback(address.rpartition(":")[0]):
                raise SettingsError(
                    f"--insecure-local serves without API keys, so it only listens on "
                    f"loopback, not {address!r}: use {flag} 127.0.0.1:PORT, or drop "
                    "--insecure-local and create keys with 'agent-memory keys create'"
                )
        if not self.database_url:
            self._validate_data_dir()

    def _validate_metrics(self) -> None:
        if self.metrics_endpoint not in (METRICS_OFF, METRICS_KEYED, METRICS_OPEN):
            raise SettingsError(
                f"MEMORY_METRICS_ENDPOINT={self.metrics_endpoint!r}: use off, on (an "
                "orchestrator's API key required) or open (no key)"
            )
        if self.metrics_endpoint != METRICS_OFF and self.http_listen is None:
            raise SettingsError(
                f"MEMORY_METRICS_ENDPOINT={self.metrics_endpoint} serves /metrics on the HTTP "
                "port, and there is none: give --http-listen HOST:PORT (MEMORY_HTTP_LISTEN) "
                "too, or push metrics over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT) instead"
            )

    def _validate_tls(self) -> None:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise SettingsError(
                "--tls-cert and --tls-key go together (MEMORY_TLS_CERT, MEMORY_TLS_KEY): "
                "give both, or neither for plaintext"
            )
        if self.tls_client_ca is not None and self.tls_cert is None:
            raise SettingsError(
                "--tls-client-ca needs --tls-cert and --tls-key: client certificates are "
                "checked only over TLS"
            )
        for flag, path in (
            ("--tls-cert", self.tls_cert),
            ("--tls-key", self.tls_key),
            ("--tls-client-ca", self.tls_client_ca),
        ):
            if path is not None and not (path.is_file() and os.access(path, os.R_OK)):
                env = "MEMORY_" + flag.removeprefix("--").replace("-", "_").upper()
                raise SettingsError(
                    f"{flag} {str(path)!r}: not a readable file; give the path of a PEM "
                    f"file ({flag} or {env})"
                )
        if self.tls_cert is None or self.tls_key is None:
            return
        # Checked here, at start, so a wrong file is one clear line rather than every
        # handshake failing later.
        check = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            check.load_cert_chain(self.tls_cert, self.tls_key)
        except (ssl.SSLError, OSError) as exc:
            raise SettingsError(
                f"--tls-cert {str(self.tls_cert)!r} with --tls-key {str(self.tls_key)!r}: not "
                f"a PEM certificate chain and its own private key ({_reason(exc)}); check "
                "the two files (MEMORY_TLS_CERT, MEMORY_TLS_KEY)"
            ) from exc
        if self.tls_client_ca is not None:
            try:
                check.load_verify_locations(cafile=self.tls_client_ca)
            except (ssl.SSLError, OSError) as exc:
                raise SettingsError(
                    f"--tls-client-ca {str(self.tls_client_ca)!r}: not PEM CA certificates "
                    f"({_reason(exc)}); check the file (MEMORY_TLS_CLIENT_CA)"
                ) from exc

    def _validate_data_dir(self) -> None:
        folder = self.data_dir.expanduser()
        fix = "give a folder this user may write with --data-dir (or MEMORY_DATA_DIR)"
        try:
            self._check_data_dir(folder, fix)
        except OSError as exc:  # a folder on the way this user may not look into
            raise SettingsError(f"--data-dir {str(folder)!r}: {exc.strerror}: {fix}") from exc

    @staticmethod
    def _check_data_dir(folder: Path, fix: str) -> None:
        if folder.exists() and not folder.is_dir():
            raise SettingsError(f"--data-dir {str(folder)!r} is a file, not a folder: {fix}")
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
            raise SettingsError(
                f"--data-dir {str(folder)!r}: {str(existing)!r} is not writable: {fix}"
            )
        if not existing.is_dir():
            raise SettingsError(
                f"--data-dir {str(folder)!r}: {str(existing)!r} is not a folder: {fix}"
            )


# What each setting means, for the configuration table of the README, which
# scripts/settings_table.py writes from these and the defaults above (CI checks that
# it is current). A second text, when given, is the default as the table shows it.
SETTING_DOCS: dict[str, tuple[str, str | None]] = {
    "listen": ("address to bind; port 0 picks a free port", None),
    "http_listen": (
        "HTTP/JSON, `/healthz` and the memory panel on this address; port 0 picks a free "
        "port; TLS as set by `--tls-*`",
        "unset (no HTTP)",
    ),
    "database_url": (
        "any PostgreSQL 14+ (`postgresql://user:pass@host:5432/db`); unset starts the embedded one",
        None,
    ),
    "database_wait_seconds": (
        "at start, how long to retry a database that does not answer yet",
        None,
    ),
    "database_read_url": (
        "a hot standby of the database, for Recall, RenderPrompt and listings",
        "unset (every read on the primary)",
    ),
    "standby_max_lag_seconds": (
        "past this replay lag the standby's reads go to the primary",
        None,
    ),
    "read_your_writes_seconds": (
        "after a caller writes, its reads go to the primary for this long",
        None,
    ),
    "data_dir": (
        "the embedded database's folder",
        "the user data folder, e.g. `~/.local/share/agent-memory`",
    ),
    "insecure_local": (
        "no API keys; identity from `x-tenant-id` / `x-user-id`; loopback addresses only",
        None,
    ),
    "tls_cert": ("serve TLS with this PEM certificate chain (needs the key)", None),
    "tls_key": ("the PEM private key of the TLS certificate", None),
    "tls_client_ca": ("also require client certificates signed by these PEM CAs", None),
    "log_level": ("`DEBUG`, `INFO`, `WARNING`, `ERROR` or `CRITICAL`", None),
    "health_check_seconds": (
        "how often the database is asked whether it answers; health follows it",
        None,
    ),
    "workers": ("server processes sharing the port (Linux), each with its own pool", None),
    "auth_cache_seconds": (
        "how long a verified API key is trusted without asking the database (0 to 5)",
        None,
    ),
    "core_max_chars": ("core block limit, in characters", None),
    "core_max_entries": ("core block limit, in non-empty lines", None),
    "archival_max_chars": ("archival block limit, in characters", None),
    "block_versions_kept": (
        "versions kept per block, whatever their age (younger ones are kept for as-of reads)",
        None,
    ),
    "history_days": (
        "days of memory events and block versions kept for as-of reads and audit",
        None,
    ),
    "shutdown_grace_seconds": ("how long in-flight calls may finish after SIGTERM", None),
    "index_stop_seconds": (
        "how long the index worker `serve` started may take to stop before it is killed",
        None,
    ),
    "worker_start_seconds": (
        "how long `serve --workers N` waits for every worker to serve before it exits 1",
        None,
    ),
    "http_header_timeout_seconds": (
        "an HTTP request's headers must arrive within this of its connection (or of the "
        "response before it); past it the connection is closed",
        None,
    ),
    "http_body_timeout_seconds": (
        "an HTTP request's body must arrive within this of its headers; past it, 408",
        None,
    ),
    "http_max_connections": (
        "open HTTP connections per server process; past it new requests are answered 503",
        None,
    ),
    "metrics_endpoint": (
        "`/metrics` on the HTTP port (Prometheus text): `off`, `on` (an orchestrator's API "
        "key required) or `open` (no key); metrics also go to an OTLP endpoint when "
        "`OTEL_EXPORTER_OTLP_ENDPOINT` is set",
        None,
    ),
    "db_pool_size": ("at most this many connections per server process", None),
    "db_statement_timeout_ms": ("PostgreSQL `statement_timeout`", None),
    "max_message_bytes": ("larger requests are `RESOURCE_EXHAUSTED`", None),
    "render_agent_memory_cap": ("agent memories rendered into a prompt", None),
    "render_workspace_memory_cap": ("workspace memories rendered into a prompt", None),
    "extraction_model": ("the extraction model", None),
    "extraction_prices": (
        'JSON `{"model": [usd_per_mtok_in, usd_per_mtok_out]}`',
        "built in",
    ),
    "extraction_budget_usd": ("hard cap per pass, enforced before the call", None),
    "extraction_min_chars": ("shorter transcripts are skipped", None),
    "extraction_max_chars": ("longer transcripts are cut to this", None),
    "extraction_max_facts": ("facts kept per pass", None),
    "extraction_min_confidence": ("facts below this confidence are dropped", None),
    "extraction_hint_count": (
        "existing memories shown to the model, which a fact may repeat, update or supersede",
        None,
    ),
    "extraction_dedup_rows": (
        "recent memories a fact is checked against for near-duplicates (and the "
        "memories shown are chosen from)",
        None,
    ),
    "extraction_jaccard_threshold": (
        "a fact more similar than this to one of them is a duplicate",
        None,
    ),
    "extraction_timeout_seconds": ("the model call's timeout", None),
    "extraction_sdk_retries": ("the SDK's retries of one model call", None),
    "extraction_settle_seconds": (
        "queued passes wait this long after the last enqueue",
        None,
    ),
    "extraction_workers": ("in-server workers for queued passes", None),
    "extraction_poll_seconds": ("how often idle workers look for due passes", None),
    "extraction_max_attempts": ("attempts of a queued pass whose model call fails", None),
    "extraction_retry_base_seconds": (
        "first wait before another attempt; it doubles each time",
        None,
    ),
    "extraction_lease_seconds": (
        "a worker holds a queued pass this long; past it, another worker may take it",
        None,
    ),
    "expiry_sweep_seconds": ("how often expired memories are deleted", None),
    "expiry_sweep_batch": ("expired memories deleted per statement", None),
    "active_memory_warning_runs": (
        "runs of a shared session after which GetActiveSession suggests a reset",
        None,
    ),
    "embedder": (
        "recall by meaning: `local` (multilingual-e5-small in the process), `http` (an "
        "OpenAI-compatible embeddings API) or `none` (lexical); needs pgvector",
        "`http` with a URL, else `local` where installed",
    ),
    "embedder_url": (
        "base URL of an OpenAI-compatible embeddings API (`http://127.0.0.1:8080/v1`) "
        "for `--embedder http`",
        None,
    ),
    "embedder_model": ("the `model` sent to `<url>/embeddings`", None),
    "embedder_api_key": ("sent as `Authorization: Bearer` when set", "unset"),
    "embedder_timeout_seconds": (
        "one embeddings call; on failure recall goes on lexically and indexing retries",
        None,
    ),
    "embedder_query_prefix": (
        "put before every query sent to the API (`query: ` for e5, `search_query: ` for "
        "nomic-embed)",
        None,
    ),
    "embedder_passage_prefix": (
        "put before every line and memory sent to the API (`passage: `, `search_document: `)",
        None,
    ),
    "embedder_threads": (
        "cores an index worker's local model uses (at the lowest CPU priority); a serving "
        "process embeds queries on one",
        "0: every core",
    ),
    "embedding_weight": ("share of meaning in the recall score, 0 to 1", None),
    "recall_scan_rows": (
        "an owner's archival lines (and memories) Recall reads as they are; past it, "
        "candidates through indexes",
        None,
    ),
    "recall_candidates": (
        "past `recall_scan_rows`, at most this many lines (and memories) holding the "
        "query's rarest terms are read",
        None,
    ),
    "indexer": (
        "`child`: `serve` starts one index worker process beside itself and restarts it; "
        "`none`: only workers started apart (`agent-memory index`)",
        None,
    ),
    "index_batch": ("lines and memories an index worker embeds per round", None),
    "index_poll_seconds": ("how often an idle index worker looks for new lines and memories", None),
    "index_lease_seconds": (
        "an index worker holds what it claimed this long; past it, another may take it",
        None,
    ),
    "index_busy_share": (
        "the share of its time an index worker embeds while other processes keep the "
        "machine busy (it then embeds one passage per core at a time, resting between); "
        "1: as fast as it can",
        None,
    ),
}


def is_address(address: str, *, host_needed: bool = False) -> bool:
    """Whether ``address`` is HOST:PORT with a port from 0 to 65535; the host may be left
    out (every interface, for a listener) unless ``host_needed`` (a server to reach)."""
    host, colon, port = address.rpartition(":")
    # isascii: int() also reads digits of other scripts, which no port is written in.
    return (
        bool(colon)
        and (bool(host) or not host_needed)
        and port.isascii()
        and port.isdigit()
        and int(port) <= 65535
    )


def check_address(flag: str, env: str, address: str) -> None:
    """Raises: SettingsError — ``address`` is not HOST:PORT (given with ``flag`` or the
    variable ``env``)."""
    if not is_address(address):
        where = flag if flag == env else f"{flag} or {env}"
        raise SettingsError(
            f"{flag} {address!r}: must be HOST:PORT with a port from 0 to 65535 ({where})"
        )


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
# The most server processes `serve --workers` starts, and the largest message gRPC takes.
MAX_WORKERS = 64
MAX_MESSAGE_BYTES = 2**31 - 1


def _reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
    return str(reason).lower().replace("_", " ")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 maybe in brackets) is this machine only."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
        if kind in {"Path", "Path | None"}:
            return Path(raw)
    except ValueError as exc:
        raise SettingsError(f"MEMORY_{name.upper()}={raw!r} is not a valid {kind}") from exc
    return raw
