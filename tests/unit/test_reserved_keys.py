"""The key prefixes the service names its own memories with are reserved as a reader
sees a key: in any case or width, after spaces or characters that show nothing."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import pytest

from agent_memory.api.transfer_convert import ProtoJsonRecords
from agent_memory.domain.blocks import BlockLimits
from agent_memory.domain.errors import FieldViolation, InvalidArgument
from agent_memory.domain.identity import Principal
from agent_memory.domain.memorize import MemorizeInput, prepare
from agent_memory.domain.memory import (
    AUTO_KEY_PREFIX,
    LEARNING_KEY_PREFIX,
    MEMORIZE_KEY_PREFIX,
    Memory,
    MemoryPatch,
    MemorySource,
    MemoryWrite,
    Owner,
    Scope,
    key_as_seen,
    reserved_key_violations,
    validate_new_memory,
)
from agent_memory.domain.transfer import MemoryRecord
from agent_memory.service.memories import Memories
from agent_memory.service.transfer import ImportRefused, Transfer
from tests.fakes import FakeStore

CALLER = Principal("acme", "ana")
AGENT = Owner(Scope.AGENT, "coder")
NOW = datetime(2026, 6, 1, tzinfo=UTC)
FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in "abcdefghijklmnopqrstuvwxyz:"}

# Each way a key can look like ``auto:x1`` and not be it, byte for byte.
LOOK_ALIKES = {
    "upper case": "AUTO:x1",
    "title case": "Auto:x1",
    "mixed case": "aUtO:x1",
    "leading space": " auto:x1",
    "leading spaces": "   auto:x1",
    "no-break space": "\u00a0auto:x1",
    "ideographic space": "\u3000auto:x1",
    "em space": "\u2003auto:x1",
    "fullwidth colon": "auto\uff1ax1",
    "small colon": "auto\ufe55x1",
    "vertical colon": "auto\ufe13x1",
    "fullwidth letters": "".join(FULLWIDTH[c] for c in "auto:") + "x1",
    "fullwidth upper": "\uff21\uff35\uff34\uff2f\uff1ax1",
    "circled letters": "\u24d0\u24e4\u24e3\u24de:x1",
    "mathematical bold": "\U0001d41a\U0001d42e\U0001d42d\U0001d428:x1",
    "zero-width space first": "\u200bauto:x1",
    "zero-width space inside": "au\u200bto:x1",
    "zero-width joiner": "a\u200duto:x1",
    "zero-width non-joiner": "aut\u200co:x1",
    "byte order mark": "\ufeffauto:x1",
    "word joiner": "auto\u2060:x1",
    "soft hyphen": "au\u00adto:x1",
    "left-to-right mark": "\u200eauto:x1",
    "right-to-left override": "\u202eauto:x1",
    "combining grapheme joiner": "auto\u034f:x1",
    "variation selector": "auto\ufe0f:x1",
    "hangul filler": "\u3164auto:x1",
    "all at once": "\u3000\u200b \uff21u\u00adT\uff4f\ufe55x1",
}
PLAIN = reserved_key_violations("key", "auto:x1", MemorySource.MANUAL)


def test_the_plain_prefix_is_reserved() -> None:
    assert [v.reason for v in PLAIN] == ["RESERVED_KEY"]
    assert "'auto:'" in PLAIN[0].description
    assert "source auto" in PLAIN[0].description


@pytest.mark.parametrize("key", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_look_alike_is_refused_as_the_prefix_itself_is(key: str) -> None:
    assert key != "auto:x1"
    assert key_as_seen(key) == "auto:x1"
    assert reserved_key_violations("key", key, MemorySource.MANUAL) == PLAIN


@pytest.mark.parametrize(
    ("key", "prefix", "source"),
    [
        ("DIRECTOR:LEARNING:20260101", LEARNING_KEY_PREFIX, MemorySource.DIRECTOR),
        (" director\uff1alearning\uff1a1", LEARNING_KEY_PREFIX, MemorySource.DIRECTOR),
        ("\u200bMemorize:ab12", MEMORIZE_KEY_PREFIX, MemorySource.MEMORIZE),
        (
            "".join(FULLWIDTH[c] for c in "memorize") + ":ab12",
            MEMORIZE_KEY_PREFIX,
            MemorySource.MEMORIZE,
        ),
        ("Auto\uff1ax", AUTO_KEY_PREFIX, MemorySource.AUTO),
    ],
)
def test_every_reserved_prefix_is_read_as_it_looks(
    key: str, prefix: str, source: MemorySource
) -> None:
    others = [s for s in MemorySource if s is not source]
    for writer in others:
        plain = reserved_key_violations("key", prefix + "x", writer)
        assert plain
        assert reserved_key_violations("key", key, writer) == plain
    # The prefix's own source still writes under it.
    assert reserved_key_violations("key", key, source) == []


@pytest.mark.parametrize(
    "key",
    ["autox1", "auto-x1", "auto x1", "automatic:x1", "deploy:auto:x1", "x auto:x1", "aut o:x1"],
)
def test_keys_that_only_hold_the_word_are_not_reserved(key: str) -> None:
    assert reserved_key_violations("key", key, MemorySource.MANUAL) == []
    validate_new_memory(key=key, value="v", importance=None, source=MemorySource.MANUAL)


# --- every way a key comes in ----------------------------------------------------------


def refused(error: pytest.ExceptionInfo[InvalidArgument], field: str) -> FieldViolation:
    [violation] = [v for v in error.value.violations if v.reason == "RESERVED_KEY"]
    assert violation.field == field
    return violation


@pytest.mark.parametrize("key", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_a_manual_upsert_of_a_look_alike_is_refused_and_writes_nothing(key: str) -> None:
    store = FakeStore()
    memories = Memories(store)
    with pytest.raises(InvalidArgument) as error:
        asyncio.run(memories.upsert(CALLER, MemoryWrite(AGENT, key, MemorySource.MANUAL, "v")))
    assert refused(error, "key") == PLAIN[0]
    assert store.state.memories == {}


def test_renaming_a_manual_memory_to_a_look_alike_is_refused() -> None:
    store = FakeStore()
    memories = Memories(store)

    async def go() -> None:
        memory, _ = await memories.upsert(
            CALLER, MemoryWrite(AGENT, "stack", MemorySource.MANUAL, "v")
        )
        for key in ("AUTO:x1", "auto\uff1ax1"):
            with pytest.raises(InvalidArgument) as error:
                await memories.update(CALLER, memory.id, MemoryPatch(key=key))
            assert refused(error, "memory.key").description == PLAIN[0].description
        # A key holding a character that shows nothing, or a space before it, is refused
        # before it is read.
        for key in ("\u200bauto:x1", " auto:x1"):
            with pytest.raises(InvalidArgument) as error:
                await memories.update(CALLER, memory.id, MemoryPatch(key=key))
            assert [v.reason for v in error.value.violations] == ["INVALID_CHARACTER"]
        assert (await memories.get(CALLER, memory.id)).key == "stack"

    asyncio.run(go())


@pytest.mark.parametrize("key", ["AUTO:x1", " auto:x1", "auto\uff1ax1", "a\u200buto:x1"])
def test_memorize_under_a_look_alike_key_is_refused(key: str) -> None:
    with pytest.raises(InvalidArgument) as error:
        prepare(MemorizeInput(content="Ana likes tea.", memory_key=key))
    violation = refused(error, "memory_key")
    assert violation.description == PLAIN[0].description


@pytest.mark.parametrize("key", ["AUTO:x1", " auto:x1", "auto\uff1ax1", "\ufeffauto:x1"])
def test_an_import_of_a_manual_memory_under_a_look_alike_key_is_refused(key: str) -> None:
    store = FakeStore()

    async def go() -> None:
        async with store.transaction(Principal("source", "seed")) as tx:
            await tx.transfer.put_memory(
                MemoryRecord(
                    Memory(
                        id=uuid.uuid4(),
                        owner=AGENT,
                        key=key,
                        value="written before look-alikes were refused",
                        pinned=False,
                        importance=0,
                        source=MemorySource.MANUAL,
                        created_at=NOW,
                        updated_at=NOW,
                        version=1,
                    )
                )
            )
        transfer = Transfer(store, ProtoJsonRecords(), BlockLimits())
        lines: list[str] = []
        await transfer.export("source", lines.append)
        with pytest.raises(ImportRefused) as error:
            await transfer.import_text("target", "\n".join(lines) + "\n", now=NOW)
        assert "memory.key" in error.value.message
        assert "reserved for memories of source auto" in error.value.message

    asyncio.run(go())
    assert [t for t, _ in store.state.memories] == ["source"]
