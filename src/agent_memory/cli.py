"""The agent-memory command: serve, index, migrate, manage API keys, rotate the key of
page tokens, export and import a tenant, and serve the memory as MCP tools."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_memory import __version__
from agent_memory.config import LOG_LEVELS, Settings, SettingsError, is_address
from agent_memory.domain.errors import ServiceError
from agent_memory.domain.identity import Role

if TYPE_CHECKING:
    from agent_memory.store.database import Database


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-memory", description=__doc__)
    parser.add_argument("--version", action="version", version=f"agent-memory {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def database_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--database-url",
            metavar="URL",
            help="PostgreSQL URL (env MEMORY_DATABASE_URL); "
            "unset: an embedded PostgreSQL in --data-dir",
        )
        p.add_argument(
            "--data-dir",
            type=_folder,
            metavar="DIR",
            help="embedded database folder (env MEMORY_DATA_DIR, default: the user's data folder, "
            "e.g. ~/.local/share/agent-memory)",
        )
        p.add_argument(
            "--database-wait",
            type=float,
            metavar="SECONDS",
            help="at start, keep retrying a database that does not answer yet for this "
            "long (env MEMORY_DATABASE_WAIT_SECONDS, default 30)",
        )
        p.add_argument(
            "--log-level",
            metavar="LEVEL",
            help=f"{', '.join(LOG_LEVELS)} (env MEMORY_LOG_LEVEL, default INFO for serve, "
            "WARNING for the other commands)",
        )

    serve = commands.add_parser(
        "serve",
        help="run the service: gRPC, and HTTP/JSON with the memory panel when "
        "--http-listen is given",
    )
    serve.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="HOST:PORT to bind; port 0 picks a free one "
        "(env MEMORY_LISTEN, default 127.0.0.1:50051)",
    )
    serve.add_argument(
        "--http-listen",
        metavar="HOST:PORT",
        help="also serve HTTP/JSON and the memory panel here; port 0 picks a free one "
        "(env MEMORY_HTTP_LISTEN, default: no HTTP)",
    )
    serve.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="server processes sharing the port, each with its own database pool "
        "(env MEMORY_WORKERS, default 1; more than 1 needs Linux)",
    )
    serve.add_argument(
        "--insecure-local",
        action="store_true",
        default=None,
        help="no API keys: take tenant and user from x-tenant-id / x-user-id "
        "metadata (env MEMORY_INSECURE_LOCAL=1); for local development only, so it "
        "listens on loopback addresses only",
    )
    serve.add_argument(
        "--tls-cert",
        type=Path,
        metavar="FILE",
        help="serve TLS with this PEM certificate chain (env MEMORY_TLS_CERT); needs --tls-key",
    )
    serve.add_argument(
        "--tls-key",
        type=Path,
        metavar="FILE",
        help="the PEM private key of --tls-cert (env MEMORY_TLS_KEY)",
    )
    serve.add_argument(
        "--tls-client-ca",
        type=Path,
        metavar="FILE",
        help="require client certificates signed by these PEM CA certificates "
        "(env MEMORY_TLS_CLIENT_CA)",
    )

    def embedder_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--embedder",
            choices=("local", "http", "none"),
            help="recall by meaning: local (a model in this process), http (an OpenAI-"
            "compatible embeddings API at --embedder-url) or none (lexical) (env "
            "MEMORY_EMBEDDER, default: http when --embedder-url is set, else local where "
            "installed)",
        )
        p.add_argument(
            "--embedder-url",
            metavar="URL",
            help="base URL of the embeddings API for --embedder http, e.g. "
            "http://127.0.0.1:8080/v1 (env MEMORY_EMBEDDER_URL)",
        )

    embedder_options(serve)
    serve.add_argument(
        "--indexer",
        choices=("child", "none"),
        help="who embeds lines and memories: child (one index worker process beside the "
        "server, restarted when it dies) or none (workers started apart with agent-memory "
        "index) (env MEMORY_INDEXER, default child)",
    )
    serve.add_argument(
        "--database-read-url",
        metavar="URL",
        help="a hot standby of --database-url for Recall, RenderPrompt and listings "
        "(env MEMORY_DATABASE_READ_URL); reads go to the primary while it lags",
    )
    database_options(serve)

    index = commands.add_parser(
        "index",
        help="run an index worker: embed archival lines and memories for recall by "
        "meaning, at the lowest CPU priority; run as many as you like against one database",
    )
    embedder_options(index)
    database_options(index)

    health = commands.add_parser(
        "health",
        help="ask a running server whether it serves (exit 0) or not (exit 1); "
        "for container health checks",
    )
    health.add_argument(
        "--address",
        type=_host_port,
        help="HOST:PORT of the server (default: the address of --listen / MEMORY_LISTEN)",
    )
    health.add_argument(
        "--tls-ca",
        type=Path,
        metavar="FILE",
        help="the server speaks TLS: trust these PEM CA certificates "
        "(default: MEMORY_TLS_CERT when set)",
    )
    health.add_argument(
        "--tls-server-name",
        metavar="NAME",
        help="the name the server's certificate carries, when it is not the host asked "
        "(a container asking itself on 127.0.0.1)",
    )
    health.add_argument(
        "--timeout", type=_seconds, default=3.0, help="seconds, more than 0 (default 3)"
    )
    health.add_argument(
        "--verbose",
        action="store_true",
        help="also say how recall ranks (by words, or by words and meaning, with which "
        "model); asks with the key in MEMORY_API_KEY, or as the local mode's caller",
    )

    mcp = commands.add_parser(
        "mcp",
        help="serve an agent's memory as MCP tools (stdio, or streamable HTTP with --http), "
        "as a client of a running service",
        description="Serve an agent's memory as Model Context Protocol tools. The key "
        "comes from MEMORY_API_KEY (not a flag, so it stays out of process listings).",
    )
    mcp.add_argument(
        "--server",
        type=_host_port,
        help="HOST:PORT of the memory service (env MEMORY_SERVER, default 127.0.0.1:50051)",
    )
    mcp.add_argument(
        "--agent-id", help="the agent the tools speak for (env MEMORY_AGENT_ID; required)"
    )
    mcp.add_argument(
        "--workspace-id",
        help="also list and write this workspace's memories (env MEMORY_WORKSPACE_ID)",
    )
    mcp.add_argument(
        "--http",
        type=_host_port,
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp on a loopback address instead of "
        "stdio; every request must send Authorization: Bearer with the token in "
        "MEMORY_MCP_TOKEN, or with the one printed at start",
    )
    mcp.add_argument(
        "--tls-ca",
        type=Path,
        metavar="FILE",
        help="the service speaks TLS: trust these PEM CA certificates (env MEMORY_TLS_CA)",
    )

    export = commands.add_parser(
        "export",
        help="write a tenant's memories, conversations, blocks and decisions to stdout "
        "as JSON lines (docs/export-format.md)",
    )
    export.add_argument("--tenant", required=True, type=_tenant, help="the tenant to export")
    database_options(export)
    load = commands.add_parser(
        "import",
        help="read an export into a tenant, in one transaction; records whose key is "
        "taken are left as they are, so a second import changes nothing",
    )
    load.add_argument("--tenant", required=True, type=_tenant, help="the tenant to import into")
    load.add_argument("file", help="the export file, or - for standard input")
    database_options(load)

    migrate = commands.add_parser("migrate", help="bring the database schema up to date")
    migrate.add_argument(
        "--distribute",
        action="store_true",
        help="then, on a Citus coordinator, distribute the tenant tables by tenant_id "
        "(colocated) and make the reference tables; a second run changes nothing",
    )
    database_options(migrate)

    keys = commands.add_parser("keys", help="create, list and revoke API keys")
    key_commands = keys.add_subparsers(
        dest="keys_command", metavar="{create,list,revoke}", required=True
    )
    create = key_commands.add_parser("create", help="create a key; prints it once, last")
    create.add_argument(
        "--tenant", required=True, help="the tenant the key acts in: it sees only its rows"
    )
    create.add_argument(
        "--user", required=True, help="the user the key acts as (owns user-scoped blocks)"
    )
    create.add_argument("--name", default="", help="a label to recognise the key by")
    create.add_argument(
        "--role",
        choices=[r.value for r in Role],
        default=Role.ORCHESTRATOR.value,
        help="reader: read RPCs only; editor: also writes MANUAL memories and blocks "
        "(people using the memory panel); orchestrator: everything (default)",
    )
    database_options(create)
    listing = key_commands.add_parser("list", help="list keys (never their secrets)")
    listing.add_argument("--tenant", help="only this tenant's keys")
    database_options(listing)
    revoke = key_commands.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument(
        "key_id", type=_key_id, help="the key's id, as keys create and keys list print it"
    )
    database_options(revoke)

    rotate = commands.add_parser(
        "rotate-page-key",
        help="make a new key that seals page tokens; every server uses it within a "
        "minute, and tokens sealed before keep working for --keep-previous",
    )
    rotate.add_argument(
        "--keep-previous",
        type=_seconds_or_zero,
        default=86400.0,
        metavar="SECONDS",
        help="how long page tokens sealed before keep working, then they are refused "
        "as expired (default 86400, a day; 0: refused at once)",
    )
    database_options(rotate)
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        listen=getattr(args, "listen", None),
        http_listen=getattr(args, "http_listen", None),
        database_url=args.database_url,
        data_dir=args.data_dir,
        log_level=args.log_level,
        insecure_local=getattr(args, "insecure_local", None),
        workers=getattr(args, "workers", None),
        tls_cert=getattr(args, "tls_cert", None),
        tls_key=getattr(args, "tls_key", None),
        tls_client_ca=getattr(args, "tls_client_ca", None),
        database_wait_seconds=getattr(args, "database_wait", None),
        database_read_url=getattr(args, "database_read_url", None),
        embedder=getattr(args, "embedder", None),
        embedder_url=getattr(args, "embedder_url", None),
        indexer=getattr(args, "indexer", None),
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "health":
        return _health(args)
    if args.command == "mcp":
        return _mcp(args)
    try:
        settings = _settings(args)
    except SettingsError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        from agent_memory.app.serve import serve

        try:
            return serve(settings)
        except SettingsError as exc:
            print(f"agent-memory: {exc}", file=sys.stderr)
            return 2
    if args.command == "index":
        from agent_memory.app.index_process import run_index

        try:
            return run_index(settings)
        except SettingsError as exc:
            print(f"agent-memory: {exc}", file=sys.stderr)
            return 2
    from agent_memory.telemetry.logging import configure_logging

    configure_logging(settings.log_level if args.log_level else "WARNING")
    try:
        if args.command == "migrate":
            return _migrate(settings, distribute=args.distribute)
        if args.command in {"export", "import"}:
            return asyncio.run(_transfer(settings, args))
        if args.command == "rotate-page-key":
            return asyncio.run(_rotate_page_key(settings, args.keep_previous))
        return asyncio.run(_keys(settings, args))
    except SettingsError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    except ServiceError as exc:
        print(f"agent-memory: {exc.message}", file=sys.stderr)
        return 2


def _host_port(text: str) -> str:
    if not is_address(text, host_needed=True):
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT")
    return text


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value


# The longest a page token key is kept once rotated away: ten years.
KEEP_PREVIOUS_MOST_SECONDS = 10 * 365 * 86400


def holds_pem_certificate(pem: bytes) -> bool:
    """Whether ``pem`` holds a PEM certificate (gRPC's own check of one only logs)."""
    return b"-----BEGIN CERTIFICATE-----" in pem


def _seconds_or_zero(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 <= value <= KEEP_PREVIOUS_MOST_SECONDS):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of seconds from 0 to {KEEP_PREVIOUS_MOST_SECONDS} "
            "(ten years)"
        )
    return value


def _tenant(text: str) -> str:
    """A tenant as a key may name it (``keys create`` checks it the same way)."""
    from agent_memory.domain.text_rules import name_violations
    from agent_memory.service.keys import IDENTITY_MAX_CHARS

    violations = name_violations("tenant", text, max_chars=IDENTITY_MAX_CHARS)
    if violations:
        raise argparse.ArgumentTypeError(
            f"{violations[0].description}: name the tenant as a key names it"
        )
    return text


def _key_id(text: str) -> str:
    if text.count("_") >= 2:
        # A whole key: its secret is not repeated back, to a terminal or a log.
        raise argparse.ArgumentTypeError(
            "give the key's id (the part between the first two underscores, as 'keys "
            "list' shows it), not the whole key"
        )
    return text


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty folder name: give a folder, or leave --data-dir out for the default"
        )
    return Path(text)


def _health(args: argparse.Namespace) -> int:
    """One health check of a running server: 0 when it serves, 1 when not, 2 when the
    question cannot be asked."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from agent_memory.config import DEFAULT_LISTEN, SettingsError, check_address

    address = args.address or os.environ.get("MEMORY_LISTEN") or DEFAULT_LISTEN
    try:
        check_address("--address" if args.address else "MEMORY_LISTEN", "MEMORY_LISTEN", address)
    except SettingsError as exc:
        print(f"agent-memory: {exc}", file=sys.stderr)
        return 2
    host, _, port = address.rpartition(":")
    if host in {"", "0.0.0.0", "::", "[::]"}:  # a wildcard bind: ask on loopback
        address = f"127.0.0.1:{port}"
    ca = args.tls_ca or (
        Path(os.environ["MEMORY_TLS_CERT"]) if os.environ.get("MEMORY_TLS_CERT") else None
    )
    flag = "--tls-ca" if args.tls_ca else "MEMORY_TLS_CERT"
    try:
        pem = ca.read_bytes() if ca is not None else None
    except OSError as exc:
        print(f"agent-memory: {flag} {str(ca)!r}: cannot read it ({exc})", file=sys.stderr)
        return 2
    if pem is not None and not holds_pem_certificate(pem):
        print(
            f"agent-memory: {flag} {str(ca)!r}: holds no PEM certificate "
            "(-----BEGIN CERTIFICATE-----)",
            file=sys.stderr,
        )
        return 2
    if pem is None:
        channel = grpc.insecure_channel(address)
    else:
        options = (
            [("grpc.ssl_target_name_override", args.tls_server_name)]
            if args.tls_server_name
            else []
        )
        try:
            credentials = grpc.ssl_channel_credentials(pem)
        except ValueError as exc:
            print(
                f"agent-memory: {flag} {str(ca)!r}: not a CA certificate ({exc})", file=sys.stderr
            )
            return 2
        channel = grpc.secure_channel(address, credentials, options=options)
    with channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=args.timeout
            )
        except grpc.RpcError as exc:
            print(f"{address}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 1
        name = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        print(f"{address}: {name}")
        if args.verbose:
            for line in _recall_status(channel, args.timeout):
                print(f"{address}: {line}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def _recall_status(channel: Any, timeout: float) -> list[str]:
    """How the server ranks recall and how its indexing keeps up, as it says; or why it
    could not be asked."""
    import grpc

    from agentmemory.v1 import recall_service_pb2, recall_service_pb2_grpc

    key = os.environ.get("MEMORY_API_KEY", "")
    metadata = (("authorization", f"Bearer {key}"),) if key else ()
    try:
        stub = recall_service_pb2_grpc.RecallServiceStub(channel)  # type: ignore[no-untyped-call]
        reply = stub.GetRecallStatus(
            recall_service_pb2.GetRecallStatusRequest(), metadata=metadata, timeout=timeout
        )
    except grpc.RpcError as exc:
        if exc.code() is grpc.StatusCode.UNAUTHENTICATED and not key:
            return ["recall unknown: set MEMORY_API_KEY to a key of the server to ask"]
        if exc.code() is grpc.StatusCode.UNAUTHENTICATED:
            return [
                f"recall unknown: the server refused the key in MEMORY_API_KEY "
                f"({exc.details()}); set it to a key this server's database holds"
            ]
        return [f"recall unknown: {exc.code().name}: {exc.details()}"]
    lines = [f"recall {reply.status.detail}"]
    if reply.status.HasField("indexing"):
        lines.append(f"indexing: {_indexing(reply.status.indexing)}")
    return lines


def _indexing(status: Any) -> str:
    """One line for an ``IndexingStatus``."""
    at_least = "at least " if status.waiting_count_capped else ""
    lines, memories = status.waiting_line_count, status.waiting_memory_count
    waiting = (
        f"{at_least}{lines:,} {'line' if lines == 1 else 'lines'} and "
        f"{memories:,} {'memory' if memories == 1 else 'memories'}"
    )
    rows = "waits" if lines + memories == 1 else "wait"
    if not status.worker_count:
        return (
            f"no index worker is running; {waiting} {rows} for a vector (start agent-memory "
            "index, or serve with --indexer child)"
        )
    workers = "1 worker embeds" if status.worker_count == 1 else f"{status.worker_count} "
    if status.worker_count != 1:
        workers += "workers embed"
    return f"{workers} {status.per_second:.1f} a second; {waiting} {rows} for a vector"


def _mcp(args: argparse.Namespace) -> int:
    """``agent-memory mcp``: check the service answers with these credentials, then
    serve the tools until stdin closes (stdio) or a signal (HTTP)."""
    from agent_memory.mcp.server import check_service, note, serve
    from agent_memory.mcp.tools import MemoryTools
    from agent_memory.telemetry.logging import configure_logging
    from agent_memory_client import TLS, connection_from_env

    level = (os.environ.get("MEMORY_LOG_LEVEL") or "WARNING").upper()
    if level not in LOG_LEVELS:
        note(f"MEMORY_LOG_LEVEL {level!r}: use one of {', '.join(LOG_LEVELS)}")
        return 2
    # Before the MCP SDK sets up logging of its own; stdout stays the protocol's.
    configure_logging(level)

    agent_id = args.agent_id or os.environ.get("MEMORY_AGENT_ID")
    if not agent_id:
        note("--agent-id (or MEMORY_AGENT_ID) is required: the agent these tools speak for")
        return 2
    ca = args.tls_ca or os.environ.get("MEMORY_TLS_CA")
    flag = "--tls-ca" if args.tls_ca else "MEMORY_TLS_CA"
    try:
        pem = Path(ca).read_bytes() if ca else None
    except OSError as exc:
        note(f"{flag} {str(ca)!r}: cannot read it ({exc.strerror or exc})")
        return 2
    if pem is not None and not holds_pem_certificate(pem):
        note(f"{flag} {str(ca)!r}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        return 2
    try:
        connection = connection_from_env(
            target=args.server, tls=TLS(root_certificates=pem) if pem else None
        )
    except ValueError as exc:
        note(f"MEMORY_API_KEY, MEMORY_TENANT_ID or MEMORY_USER_ID: {exc}")
        return 2
    problem = check_service(connection, agent_id)
    if problem is not None:
        note(problem)
        return 2
    workspace_id = args.workspace_id or os.environ.get("MEMORY_WORKSPACE_ID") or None
    return serve(
        MemoryTools(connection, agent_id, workspace_id),
        args.http,
        token=os.environ.get("MEMORY_MCP_TOKEN") or None,
    )


def _migrate(settings: Settings, *, distribute: bool = False) -> int:
    from agent_memory.store.distribution import NoCitus
    from agent_memory.store.distribution import distribute as distribute_tables
    from agent_memory.store.embedded import describe_database
    from agent_memory.store.opening import open_database

    url, embedded, migration = open_database(settings)
    print(f"database: {describe_database(url, embedded)}", file=sys.stderr)
    try:
        print(migration.describe())
        if distribute:
            try:
                print(distribute_tables(url).describe())
            except NoCitus as exc:
                print(f"agent-memory migrate --distribute: {exc}", file=sys.stderr)
                return 2
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


@asynccontextmanager
async def _operator_database(settings: Settings) -> AsyncIterator[Database]:
    """The database an operator's command works on (the embedded one started, and
    stopped after, when no URL is given), with one connection."""
    from agent_memory.store.database import Database
    from agent_memory.store.embedded import describe_database
    from agent_memory.store.opening import open_database

    url, embedded, _ = await asyncio.to_thread(open_database, settings)
    print(f"database: {describe_database(url, embedded)}", file=sys.stderr)
    db: Database | None = None
    try:
        db = Database(url, pool_size=1)
        yield db
    finally:
        if db is not None:
            await db.close()
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


async def _keys(settings: Settings, args: argparse.Namespace) -> int:
    from agent_memory.service.keys import ApiKeys

    async with _operator_database(settings) as db:
        keys = ApiKeys(db)
        if args.keys_command == "create":
            new = await keys.create(
                tenant_id=args.tenant, user_id=args.user, name=args.name, role=Role(args.role)
            )
            print(
                f"created {new.info.role} key {new.info.key_id} for tenant "
                f"{new.info.tenant_id!r} user {new.info.user_id!r}; it is shown only now:"
            )
            print(new.key)
            return 0
        if args.keys_command == "list":
            rows = await keys.list(tenant_id=args.tenant)
            print(f"{'KEY ID':<18} {'TENANT':<20} {'USER':<20} {'ROLE':<13} {'CREATED':<26} STATUS")
            for k in rows:
                status = f"revoked {k.revoked_at:%Y-%m-%d %H:%M}" if k.revoked_at else "active"
                print(
                    f"{k.key_id:<18} {k.tenant_id:<20} {k.user_id:<20} {k.role:<13} "
                    f"{k.created_at:%Y-%m-%d %H:%M:%S%z}       {status}"
                )
            return 0
        revoked = await keys.revoke(args.key_id)
        if revoked is None:
            print(
                f"agent-memory: no key with id {args.key_id!r}: 'agent-memory keys list' "
                "shows the ids",
                file=sys.stderr,
            )
            return 1
        info, now = revoked
        if now:
            print(f"revoked key {info.key_id}")
        else:
            assert info.revoked_at is not None
            print(f"key {info.key_id} was already revoked, at {info.revoked_at:%Y-%m-%d %H:%M %Z}")
        return 0


async def _rotate_page_key(settings: Settings, keep_seconds: float) -> int:
    from datetime import timedelta

    from agent_memory.service.page_tokens import rotate_page_key

    async with _operator_database(settings) as db:
        keyring = await rotate_page_key(db, keep=timedelta(seconds=keep_seconds))
    print(f"page token key {keyring.newest} seals page tokens (every server within a minute)")
    for key in keyring.keys[:-1]:
        print(f"page token key {key.id} opens the tokens it sealed until {key.expires_at}")
    return 0


async def _transfer(settings: Settings, args: argparse.Namespace) -> int:
    """``export`` to stdout, or ``import`` from a file, of one tenant."""
    from agent_memory.api.transfer_convert import ProtoJsonRecords
    from agent_memory.service.blocks import block_limits
    from agent_memory.service.transfer import ImportRefused, Transfer

    text = ""
    if args.command == "import":
        try:
            source = Path("/dev/stdin" if args.file == "-" else args.file)
            # Bytes, not text mode: a line ends at "\n" and nowhere else.
            text = (await asyncio.to_thread(source.read_bytes)).decode("utf-8")
        except OSError as exc:
            print(f"agent-memory: import {args.file!r}: cannot read it ({exc})", file=sys.stderr)
            return 2
        except UnicodeDecodeError as exc:
            print(
                f"agent-memory: import {args.file!r}: not UTF-8 at byte {exc.start} (an export "
                "is UTF-8: this file was cut inside a character, or is not one); nothing was "
                "imported",
                file=sys.stderr,
            )
            return 2
    async with _operator_database(settings) as db:
        transfer = Transfer(db, ProtoJsonRecords(), block_limits(settings))
        if args.command == "export":
            sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
            try:
                counts = await transfer.export(args.tenant, print)
            except BrokenPipeError:  # `export | head`: not the database's fault
                # Nothing more can reach stdout, not even the flush at exit.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                print("agent-memory: export: standard output was closed early", file=sys.stderr)
                return 1
            summary = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "nothing"
            print(f"exported {summary} of tenant {args.tenant!r}", file=sys.stderr)
            return 0
        try:
            done = await transfer.import_text(args.tenant, text)
        except ImportRefused as exc:
            where = args.file if exc.line is None else f"{args.file}:{exc.line}"
            print(
                f"agent-memory: import {where}: {exc.message}; nothing was imported",
                file=sys.stderr,
            )
            return 2
        for kind, tally in done.items():
            print(
                f"{kind}: {tally.imported} imported, {tally.already_there} already there",
                file=sys.stderr,
            )
        if not done:
            print(f"{args.file}: the file holds no records: nothing to import", file=sys.stderr)
        return 0


if __name__ == "__main__":
    sys.exit(main())
