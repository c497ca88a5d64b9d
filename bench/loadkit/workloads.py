"""The measured operations, each two ways: over gRPC (the service, or the null server)
and as the minimal SQL for it, one statement through psycopg (the database's limit).

The minimal SQL is written here for the operation, not copied from the service: the
upsert with its audit event, the compare-and-set update with its version row, one
SELECT of what a render shows, and for recall a full-text search of the caller's user
and agent archival lines for any of the question's English lexemes (the analysis the
service gives a query), ranked by ``ts_rank``. It leaves out what the service adds to
ranking (BM25 weights, close terms for typos, neighbouring lines): it is the floor of
the database work a recall needs.
"""

from __future__ import annotations

import collections
import itertools
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, LiteralString

import grpc
import psycopg
from google.protobuf import field_mask_pb2
from psycopg_pool import AsyncConnectionPool

from agent_memory.config import Settings
from agent_memory.store.database import connection_kwargs
from agentmemory.v1 import (
    block_pb2,
    block_service_pb2,
    block_service_pb2_grpc,
    memory_pb2,
    memory_service_pb2,
    memory_service_pb2_grpc,
    recall_pb2,
    recall_service_pb2,
    recall_service_pb2_grpc,
)
from loadkit.corpus import Corpus
from loadkit.driver import Op

TENANT = "bench"
RECALL_AGENT = "recall-agent"
RECALL_LIMIT = 10
RPC_TIMEOUT = 30.0
CAS_MAX_RETRIES = 20
SETTINGS = Settings()
AGENT_CAP = SETTINGS.render_agent_memory_cap
WORKSPACE_CAP = SETTINGS.render_workspace_memory_cap

Pool = AsyncConnectionPool[psycopg.AsyncConnection[Any]]


def baseline_pool(url: str, clients: int) -> Pool:
    """A pool of ``clients`` connections (one per client), each set up as the service
    sets up its own: autocommit, rows as dicts, every statement prepared on first use
    and planned once, the same session settings. The caller opens and closes it."""
    return AsyncConnectionPool(
        url,
        connection_class=psycopg.AsyncConnection[Any],
        kwargs=connection_kwargs(SETTINGS.db_statement_timeout_ms, "rpc-load-baseline"),
        min_size=clients,
        max_size=clients,
        open=False,
        name="rpc-load-baseline",
    )


@dataclass(frozen=True)
class Stubs:
    memory: memory_service_pb2_grpc.MemoryServiceStub
    blocks: block_service_pb2_grpc.BlockServiceStub
    recall: recall_service_pb2_grpc.RecallServiceStub

    @classmethod
    def of(cls, channel: grpc.aio.Channel) -> Stubs:
        return cls(
            memory_service_pb2_grpc.MemoryServiceStub(channel),  # type: ignore[no-untyped-call]
            block_service_pb2_grpc.BlockServiceStub(channel),  # type: ignore[no-untyped-call]
            recall_service_pb2_grpc.RecallServiceStub(channel),  # type: ignore[no-untyped-call]
        )


async def write_archival(
    stubs: Stubs,
    metadata: tuple[tuple[str, str], ...],
    lines: list[str],
    *,
    agent: str = "",
) -> None:
    """The caller's archival block (its own, or the agent's), written as ``lines``."""
    await stubs.blocks.WriteBlock(
        block_service_pb2.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_ARCHIVAL,
            scope=memory_pb2.SCOPE_AGENT if agent else memory_pb2.SCOPE_USER,
            agent_id=agent,
            content="\n".join(lines),
        ),
        metadata=metadata,
        timeout=300,
    )


@dataclass
class Context:
    corpus: Corpus
    seed: int
    values: list[str]
    keys: dict[str, str] = field(default_factory=dict)  # user -> API key
    recall_users: list[str] = field(default_factory=list)
    questions: dict[str, list[str]] = field(default_factory=dict)
    # Each question's vector (pgvector's text form), for the minimal SQL by meaning.
    vectors: dict[str, str] = field(default_factory=dict)

    def auth(self, user: str) -> tuple[tuple[str, str], ...]:
        """The user's credentials, as production callers send them."""
        return (("authorization", f"Bearer {self.keys[user]}"),)


class Upsert:
    """UpsertMemory: distinct keys per client; every 4th call updates a recent key."""

    title = "UpsertMemory"
    user = "load-upsert"
    owner = "load-agent"
    SQL: LiteralString = """
WITH m AS (
    INSERT INTO memories (tenant_id, id, scope, owner_id, key, source, value, created_by,
                          updated_by)
    VALUES (%(tenant)s, %(id)s, 'agent', %(owner)s, %(key)s, 'manual', %(value)s, %(user)s,
            %(user)s)
    ON CONFLICT (tenant_id, scope, owner_id, key) DO UPDATE
    SET value = excluded.value, updated_by = excluded.updated_by,
        updated_at = clock_timestamp(), version = memories.version + 1
    RETURNING *
)
INSERT INTO memory_events (tenant_id, id, memory_id, event_type, actor_user_id, occurred_at,
                           new_memory)
SELECT tenant_id, gen_random_uuid(), id, 'updated', %(user)s, clock_timestamp(), to_jsonb(m)
FROM m
"""

    def users(self) -> list[str]:
        return [self.user]

    async def setup(self, ctx: Context, stubs: Stubs) -> None:
        return None

    @staticmethod
    def _next(ctx: Context, client: int, run: int) -> Callable[[], tuple[str, str]]:
        recent: collections.deque[str] = collections.deque(maxlen=16)
        count = [0]

        def next_key() -> tuple[str, str]:
            count[0] += 1
            n = count[0]
            value = ctx.values[(client * 7919 + n) % len(ctx.values)]
            if n % 4 == 0 and recent:
                return recent[n % len(recent)], value
            key = f"r{run}-c{client}-{n}"
            recent.append(key)
            return key, value

        return next_key

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        next_key = self._next(ctx, client, run)
        metadata = ctx.auth(self.user)
        owner = memory_pb2.MemoryOwner(agent_id=self.owner)

        async def op() -> int:
            key, value = next_key()
            await stubs.memory.UpsertMemory(
                memory_service_pb2.UpsertMemoryRequest(
                    owner=owner, key=key, value=value, source=memory_pb2.MEMORY_SOURCE_MANUAL
                ),
                metadata=metadata,
                timeout=RPC_TIMEOUT,
            )
            return 0

        return op

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        next_key = self._next(ctx, client, run)

        async def op() -> int:
            key, value = next_key()
            params = {
                "tenant": TENANT,
                "id": uuid.uuid4(),
                "owner": self.owner,
                "key": key,
                "value": value,
                "user": self.user,
            }
            async with pool.connection() as conn:
                await conn.execute(self.SQL, params)
            return 0

        return op


class WriteBlockCas:
    """Each client owns one agent-scope core block and rewrites it in a compare-and-set
    loop: read it, then write it back guarded by the updated_at it read."""

    title = "WriteBlock (CAS cycle: GetBlock + WriteBlock)"
    user = "load-cas"
    KEY: LiteralString = """tenant_id = %(tenant)s AND user_id = %(user)s AND scope = 'agent'
    AND agent_id = %(agent)s AND label = 'core'"""
    GET: LiteralString = "SELECT * FROM blocks WHERE " + KEY
    CAS: LiteralString = (
        """
WITH b AS (
    UPDATE blocks
    SET content = %(content)s, version = version + 1,
        updated_at = greatest(clock_timestamp(), updated_at + interval '1 microsecond')
    WHERE """
        + KEY
        + """ AND updated_at = %(expected)s
    RETURNING *
)
INSERT INTO block_versions (tenant_id, user_id, scope, agent_id, label, version, content,
                            char_count, writer_user_id, written_at)
SELECT tenant_id, user_id, scope, agent_id, label, version, content, %(chars)s, %(user)s,
       updated_at
FROM b
RETURNING version
"""
    )

    def __init__(self, clients: int) -> None:
        self.clients = clients

    def users(self) -> list[str]:
        return [self.user]

    @staticmethod
    def agent(client: int) -> str:
        return f"cas-{client:02d}"

    @staticmethod
    def _content(ctx: Context, client: int) -> Callable[[], str]:
        count = [0]

        def content() -> str:
            count[0] += 1
            n = count[0]
            notes = [ctx.values[(client * 31 + n + i) % len(ctx.values)][:90] for i in range(6)]
            return "\n".join(f"- {note}" for note in notes) + f"\n- revision {n} by client {client}"

        return content

    async def setup(self, ctx: Context, stubs: Stubs) -> None:
        for client in range(self.clients):
            await stubs.blocks.WriteBlock(
                block_service_pb2.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    scope=memory_pb2.SCOPE_AGENT,
                    agent_id=self.agent(client),
                    content=self._content(ctx, client)(),
                ),
                metadata=ctx.auth(self.user),
                timeout=RPC_TIMEOUT,
            )

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        content = self._content(ctx, client)
        metadata = ctx.auth(self.user)
        get = block_service_pb2.GetBlockRequest(
            label=block_pb2.BLOCK_LABEL_CORE,
            scope=memory_pb2.SCOPE_AGENT,
            agent_id=self.agent(client),
        )

        async def op() -> int:
            for retries in range(CAS_MAX_RETRIES):
                got = await stubs.blocks.GetBlock(get, metadata=metadata, timeout=RPC_TIMEOUT)
                try:
                    await stubs.blocks.WriteBlock(
                        block_service_pb2.WriteBlockRequest(
                            label=get.label,
                            scope=get.scope,
                            agent_id=get.agent_id,
                            content=content(),
                            expected_updated_at=got.block.updated_at,
                        ),
                        metadata=metadata,
                        timeout=RPC_TIMEOUT,
                    )
                    return retries
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.ABORTED:
                        raise
            raise RuntimeError("compare-and-set kept conflicting")

        return op

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        content = self._content(ctx, client)
        key = {"tenant": TENANT, "user": self.user, "agent": self.agent(client)}

        async def op() -> int:
            for retries in range(CAS_MAX_RETRIES):
                async with pool.connection() as conn:  # the read
                    current = await (await conn.execute(self.GET, key)).fetchone()
                assert current is not None
                text = content()
                params = {**key, "content": text, "chars": len(text)}
                params["expected"] = current["updated_at"]
                async with pool.connection() as conn:  # the write
                    written = await (await conn.execute(self.CAS, params)).fetchone()
                if written is not None:
                    return retries
            raise RuntimeError("compare-and-set kept conflicting")

        return op


class RecallLoad:
    """Recall of one measured user's archival block while the table holds every user's
    lines. The database's limit is one full-text search of the lines recall searches
    (the user's block and the agent's), for any of the question's lexemes, the best
    ``RECALL_LIMIT`` by ``ts_rank``."""

    title = "Recall"
    SQL: LiteralString = """
WITH q AS (
    SELECT string_agg(quote_literal(t.lexeme), ' | ')::tsquery AS query
    FROM unnest(to_tsvector('english', %(question)s)) AS t
)
SELECT l.scope, l.agent_id, l.line_number, l.content, ts_rank(l.lexemes, q.query) AS score
FROM archival_lines AS l, q
WHERE l.tenant_id = %(tenant)s AND l.user_id = %(user)s
  AND ((l.scope = 'user' AND l.agent_id = '') OR (l.scope = 'agent' AND l.agent_id = %(agent)s))
  AND l.lexemes @@ q.query
ORDER BY score DESC
LIMIT %(limit)s
"""

    def users(self) -> list[str]:
        return []  # the measured users, made by the fill

    async def setup(self, ctx: Context, stubs: Stubs) -> None:
        return None

    def __init__(self) -> None:
        # Every call asks a question no call of the run asked before (until they run
        # out): a server embeds each, as it would questions of real users.
        self._asked: dict[str, itertools.count[int]] = {}

    def _next(self, ctx: Context, client: int) -> Callable[[], tuple[str, str]]:
        user = ctx.recall_users[client % len(ctx.recall_users)]
        questions = ctx.questions[user]
        asked = self._asked.setdefault(user, itertools.count())

        def next_question() -> tuple[str, str]:
            return user, questions[next(asked) % len(questions)]

        return next_question

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        next_question = self._next(ctx, client)

        async def op() -> int:
            user, question = next_question()
            call = stubs.recall.Recall(
                recall_service_pb2.RecallRequest(
                    query=question, agent_id=RECALL_AGENT, limit=RECALL_LIMIT
                ),
                metadata=ctx.auth(user),
                timeout=RPC_TIMEOUT,
            )
            async for _ in call:
                pass
            return 0

        return op

    def sql_params(self, ctx: Context, user: str, question: str) -> dict[str, Any]:
        return {
            "tenant": TENANT,
            "user": user,
            "agent": RECALL_AGENT,
            "question": question,
            "limit": RECALL_LIMIT,
        }

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        next_question = self._next(ctx, client)

        async def op() -> int:
            user, question = next_question()
            params = self.sql_params(ctx, user, question)
            async with pool.connection() as conn:
                await (await conn.execute(self.SQL, params)).fetchall()
            return 0

        return op


class RecallMeaningLoad(RecallLoad):
    """Recall by words and meaning (the service with its local model). The database's
    limit is one statement: the full-text search above, and the lines nearest the
    question's vector (made beforehand, as the model would make it), together."""

    title = "Recall, by words and meaning"
    SQL: LiteralString = """
WITH q AS (
    SELECT string_agg(quote_literal(t.lexeme), ' | ')::tsquery AS query
    FROM unnest(to_tsvector('english', %(question)s)) AS t
),
by_words AS (
    SELECT l.line_number, l.content FROM archival_lines AS l, q
    WHERE l.tenant_id = %(tenant)s AND l.user_id = %(user)s
      AND ((l.scope = 'user' AND l.agent_id = '') OR (l.scope = 'agent' AND l.agent_id = %(agent)s))
      AND l.lexemes @@ q.query
    ORDER BY ts_rank(l.lexemes, q.query) DESC
    LIMIT %(limit)s
),
by_meaning AS (
    SELECT l.line_number, l.content FROM archival_lines AS l
    WHERE l.tenant_id = %(tenant)s AND l.user_id = %(user)s
      AND ((l.scope = 'user' AND l.agent_id = '') OR (l.scope = 'agent' AND l.agent_id = %(agent)s))
      AND l.embedding IS NOT NULL
    ORDER BY l.embedding <=> %(vector)s::halfvec
    LIMIT %(limit)s
)
SELECT * FROM by_words UNION SELECT * FROM by_meaning
"""

    def sql_params(self, ctx: Context, user: str, question: str) -> dict[str, Any]:
        # Questions past those embedded beforehand take one of theirs: as costly.
        vector = ctx.vectors.get(question) or next(iter(ctx.vectors.values()))
        return {**super().sql_params(ctx, user, question), "vector": vector}


class Render:
    """RenderPrompt of an agent with memory enabled (20 memories), a workspace (30) and
    both core blocks."""

    title = "RenderPrompt"
    user = "load-render"
    agent = "render-agent"
    workspace = "render-ws"
    agent_memories = 20
    workspace_memories = 30
    persona = "You are a careful engineering agent. Prefer small, reviewed changes."
    message = "How do we deploy the service, and what did we decide about retries?"
    SQL: LiteralString = """
SELECT
    (SELECT content FROM blocks
     WHERE tenant_id = %(tenant)s AND user_id = %(user)s AND scope = 'user' AND agent_id = ''
       AND label = 'core') AS user_core,
    (SELECT content FROM blocks
     WHERE tenant_id = %(tenant)s AND user_id = %(user)s AND scope = 'agent'
       AND agent_id = %(agent)s AND label = 'core') AS agent_core,
    (SELECT memory_enabled FROM agent_settings
     WHERE tenant_id = %(tenant)s AND agent_id = %(agent)s) AS memory_enabled,
    (SELECT json_agg(m) FROM (
        SELECT key, value FROM memories
        WHERE tenant_id = %(tenant)s AND scope = 'agent' AND owner_id = %(agent)s
        ORDER BY pinned DESC, importance DESC, key LIMIT %(agent_cap)s) AS m) AS agent_rows,
    (SELECT json_agg(m) FROM (
        SELECT key, value FROM memories
        WHERE tenant_id = %(tenant)s AND scope = 'workspace' AND owner_id = %(workspace)s
        ORDER BY pinned DESC, importance DESC, updated_at DESC, id
        LIMIT %(workspace_cap)s) AS m) AS workspace_rows
"""

    def users(self) -> list[str]:
        return [self.user]

    async def setup(self, ctx: Context, stubs: Stubs) -> None:
        metadata = ctx.auth(self.user)
        await stubs.memory.UpdateAgentSettings(
            memory_service_pb2.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id=self.agent, memory_enabled=True),
                update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"]),
            ),
            metadata=metadata,
            timeout=RPC_TIMEOUT,
        )
        owners = [memory_pb2.MemoryOwner(agent_id=self.agent)] * self.agent_memories
        owners += [memory_pb2.MemoryOwner(workspace_id=self.workspace)] * self.workspace_memories
        for i, owner in enumerate(owners):
            await stubs.memory.UpsertMemory(
                memory_service_pb2.UpsertMemoryRequest(
                    owner=owner,
                    key=f"fact-{i:02d}",
                    value=ctx.values[i % len(ctx.values)],
                    pinned=i % 7 == 0,
                    importance=(i * 37) % 101,
                    source=memory_pb2.MEMORY_SOURCE_MANUAL,
                ),
                metadata=metadata,
                timeout=RPC_TIMEOUT,
            )
        for scope, agent_id, lines in (
            (memory_pb2.SCOPE_USER, "", 10),
            (memory_pb2.SCOPE_AGENT, self.agent, 8),
        ):
            await stubs.blocks.WriteBlock(
                block_service_pb2.WriteBlockRequest(
                    label=block_pb2.BLOCK_LABEL_CORE,
                    scope=scope,
                    agent_id=agent_id,
                    content="\n".join(f"- {v[:120]}" for v in ctx.values[40 : 40 + lines]),
                ),
                metadata=metadata,
                timeout=RPC_TIMEOUT,
            )
        rendered = await self._render(ctx, stubs)
        missing = [
            title
            for title in ("## Agent Memory", "## Workspace Memory", "## Core Memory")
            if title not in rendered.system_prompt
        ]
        if missing or rendered.warnings:
            raise RuntimeError(f"render setup is incomplete: {missing} {list(rendered.warnings)}")

    async def _render(self, ctx: Context, stubs: Stubs) -> recall_service_pb2.RenderPromptResponse:
        response: recall_service_pb2.RenderPromptResponse = await stubs.recall.RenderPrompt(
            recall_service_pb2.RenderPromptRequest(
                agent_id=self.agent,
                workspace_id=self.workspace,
                persona=self.persona,
                user_message=self.message,
                memory_policy=recall_pb2.MemoryPolicy(),
            ),
            metadata=ctx.auth(self.user),
            timeout=RPC_TIMEOUT,
        )
        return response

    def rpc_op(self, ctx: Context, stubs: Stubs, client: int, run: int) -> Op:
        async def op() -> int:
            await self._render(ctx, stubs)
            return 0

        return op

    def sql_op(self, ctx: Context, pool: Pool, client: int, run: int) -> Op:
        params = {
            "tenant": TENANT,
            "user": self.user,
            "agent": self.agent,
            "workspace": self.workspace,
            "agent_cap": AGENT_CAP,
            "workspace_cap": WORKSPACE_CAP,
        }

        async def op() -> int:
            async with pool.connection() as conn:
                await (await conn.execute(self.SQL, params)).fetchone()
            return 0

        return op


Workload = Upsert | WriteBlockCas | RecallLoad | Render
