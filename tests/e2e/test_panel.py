"""The memory panel in a real browser: Debian's Chromium, driven by Playwright, against
the real service's HTTP side, with what the page did checked in the store over gRPC.

Each test signs in with an editor key of a tenant of its own, as a person would, and
sets up or checks the rest over gRPC with an orchestrator key of the same tenant.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import psycopg
import pytest
from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Locator,
    Page,
    ViewportSize,
    expect,
    sync_playwright,
)
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from agent_memory.config import Settings
from agent_memory.embed import local_available
from agentmemory.v1 import block_pb2, decision_pb2, memory_pb2
from agentmemory.v1 import block_service_pb2 as blocks_pb
from agentmemory.v1 import decision_service_pb2 as decisions_pb
from agentmemory.v1 import memory_service_pb2 as pb
from agentmemory.v1 import recall_service_pb2 as recall_pb
from agentmemory.v1.decision_service_pb2_grpc import DecisionServiceStub
from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support import (
    WAIT_INDEXED_SECONDS,
    Client,
    ServerThread,
    has_pgvector,
    wait_embedded,
    wait_until,
)

pytestmark = pytest.mark.e2e

READ_ONLY = "auto-captured \u00b7 read-only"
MANUAL = memory_pb2.MEMORY_SOURCE_MANUAL
AUTO = memory_pb2.MEMORY_SOURCE_AUTO
AGENT = "coder"
KEY_STORAGE = "agent-memory.panel.key"


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(module_database: str) -> Iterator[ServerThread]:
    """The panel's server: HTTP beside gRPC, and an index worker, as ``serve`` runs one
    (a block says whether its lines are found by meaning yet), over a database of the
    module's own."""
    settings = Settings(http_listen="127.0.0.1:0", expiry_sweep_seconds=3600)
    with ServerThread(module_database, settings=settings, index=True) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module; each test gets a context of its own."""
    if not CHROMIUM.exists():
        if os.environ.get("MEMORY_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{CHROMIUM} is missing: install the Debian package chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Tenant:
    """A fresh tenant: an orchestrator over gRPC, and the key a person signs in with."""

    grpc: Client
    editor_key: str


@pytest.fixture
def tenant(server: ServerThread) -> Iterator[Tenant]:
    tenant_id = f"tenant-{uuid.uuid4().hex[:10]}"
    with server.client(tenant_id, "user-1") as orchestrator:
        yield Tenant(
            grpc=orchestrator,
            editor_key=server.new_key(tenant_id, "user-1", "editor"),
        )


@pytest.fixture
def page(browser: Browser, server: ServerThread) -> Iterator[Page]:
    context = browser.new_context(
        base_url=f"http://{server.http_address}", viewport={"width": 1280, "height": 800}
    )
    context.set_default_timeout(15_000)
    opened = context.new_page()
    yield opened
    context.close()


# -- helpers -------------------------------------------------------------------------------


def sign_in(page: Page, key: str) -> None:
    page.goto("/")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_label("Agent id")).to_be_visible()


def open_agent(page: Page, agent: str = AGENT) -> None:
    page.get_by_label("Agent id").fill(agent)
    page.get_by_label("Agent id").press("Enter")
    expect(page.locator("#target-title")).to_have_text(agent)


def memory_row(page: Page, key: str) -> Locator:
    return page.locator(f'#view-memories tbody tr[data-key="{key}"]')


def memories_of(c: Client, agent: str = AGENT) -> dict[str, memory_pb2.Memory]:
    request = pb.ListMemoriesRequest(owner=memory_pb2.MemoryOwner(agent_id=agent), page_size=1000)
    return {m.key: m for m in c.call(c.memory.ListMemories, request).memories}


def upsert(c: Client, key: str, value: str, source: int, importance: int = 0) -> memory_pb2.Memory:
    request = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        key=key,
        value=value,
        source=source,  # type: ignore[arg-type]
        importance=importance,
    )
    memory: memory_pb2.Memory = c.call(c.memory.UpsertMemory, request).memory
    return memory


def confirm_dialog(page: Page) -> Locator:
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    return dialog


# -- sign-in -------------------------------------------------------------------------------


def test_signs_in_with_a_key_and_shows_the_servers_401_message(page: Page, tenant: Tenant) -> None:
    page.goto("/")
    page.get_by_label("API key").fill("amk_nosuchkey_wrongsecret")
    page.get_by_label("API key").press("Enter")
    error = page.locator("#signin-error")
    expect(error).to_have_text("invalid API key (INVALID_API_KEY)")
    expect(page.get_by_label("Agent id")).to_be_hidden()

    sign_in(page, tenant.editor_key)
    assert page.evaluate(f"sessionStorage.getItem('{KEY_STORAGE}')") == tenant.editor_key

    open_agent(page)
    # A kept key the server no longer takes sends the person back with the server's word.
    page.evaluate(f"sessionStorage.setItem('{KEY_STORAGE}', 'amk_revoked_secret')")
    page.reload()
    expect(error).to_have_text("invalid API key (INVALID_API_KEY)")
    expect(page.get_by_label("API key")).to_be_focused()
    assert page.evaluate(f"sessionStorage.getItem('{KEY_STORAGE}')") is None

    sign_in(page, tenant.editor_key)
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API key")).to_be_visible()
    assert page.evaluate(f"sessionStorage.getItem('{KEY_STORAGE}')") is None


# -- memories ------------------------------------------------------------------------------


def test_creates_edits_pins_and_deletes_a_memory_and_the_store_agrees(
    page: Page, tenant: Tenant
) -> None:
    sign_in(page, tenant.editor_key)
    open_agent(page)
    expect(page.locator("#view-memories")).to_contain_text("No memories yet")

    page.get_by_label("New memory key").fill("deploy-cmd")
    page.get_by_label("New memory value").fill("Deploy with make release")
    page.get_by_label("New memory importance").fill("70")
    page.get_by_label("New memory value").press("Enter")
    row = memory_row(page, "deploy-cmd")
    expect(row).to_contain_text("Deploy with make release")
    expect(row.locator(".badge")).to_have_text("manual")
    expect(page.get_by_label("New memory key")).to_have_value("")
    stored = memories_of(tenant.grpc)["deploy-cmd"]
    assert (stored.value, stored.importance, stored.pinned) == (
        "Deploy with make release",
        70,
        False,
    )
    assert stored.source == memory_pb2.MEMORY_SOURCE_MANUAL

    # Escape leaves an edit without saving it.
    row.get_by_role("button", name="Edit").click()
    page.get_by_label("Value of deploy-cmd").fill("a change nobody wanted")
    page.get_by_label("Value of deploy-cmd").press("Escape")
    expect(row).to_contain_text("Deploy with make release")
    expect(row.get_by_role("button", name="Edit")).to_be_focused()

    row.get_by_role("button", name="Edit").click()
    page.get_by_label("Value of deploy-cmd").fill("Deploy with make ship")
    page.get_by_label("Importance of deploy-cmd").fill("85")
    page.get_by_label("Value of deploy-cmd").press("Enter")
    expect(row.locator("td.value")).to_have_text("Deploy with make ship")
    expect(page.get_by_role("status")).to_contain_text("Saved deploy-cmd.")
    stored = memories_of(tenant.grpc)["deploy-cmd"]
    assert (stored.value, stored.importance) == ("Deploy with make ship", 85)

    row.get_by_role("button", name="Pin").click()
    expect(row.get_by_role("button", name="Unpin")).to_be_visible()
    expect(row).to_contain_text("Pinned")
    assert memories_of(tenant.grpc)["deploy-cmd"].pinned

    expect(page.get_by_role("status")).to_contain_text("Pinned deploy-cmd.")
    row.get_by_role("button", name="Delete").click()
    # What the pin said is not the question's: it does not stand in the dialog.
    expect(confirm_dialog(page)).not_to_contain_text("Pinned deploy-cmd.")
    confirm_dialog(page).get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("dialog")).to_be_hidden()
    expect(row).to_be_visible()
    assert "deploy-cmd" in memories_of(tenant.grpc)

    row.get_by_role("button", name="Delete").click()
    confirm_dialog(page).get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    assert memories_of(tenant.grpc) == {}


def test_a_refused_write_shows_the_servers_message_and_reason(page: Page, tenant: Tenant) -> None:
    sign_in(page, tenant.editor_key)
    open_agent(page)
    secret = "sk-ant-api03-" + "Q7vX2mK9pL4rT8wZ1nB6" + "cY3hJ5sD0fG2aE7uI9oR"
    page.get_by_label("New memory key").fill("model-key")
    page.get_by_label("New memory value").fill(f"the key is {secret}")
    page.get_by_role("button", name="Add memory").click()
    status = page.get_by_role("status")
    expect(status).to_contain_text("Adding model-key failed:")
    expect(status.locator(".reason")).to_have_text("SECRET_IN_VALUE")
    expect(status).not_to_contain_text(secret)
    expect(status).not_to_contain_text('"code"')
    assert memories_of(tenant.grpc) == {}


def test_a_row_says_when_it_last_reached_a_model(
    page: Page, tenant: Tenant, pgvector: bool
) -> None:
    harbor = upsert(
        tenant.grpc, "harbor", "The harbor opens at nine", memory_pb2.MEMORY_SOURCE_MANUAL
    )
    unused = upsert(tenant.grpc, "unused", "Nothing asks for this", memory_pb2.MEMORY_SOURCE_MANUAL)
    wait_embedded(tenant.grpc, harbor.id, unused.id, vectors=pgvector)
    request = recall_pb.RecallRequest(
        query="when does the harbor open", agent_id=AGENT, include_memories=True, min_score=0.6
    )
    assert [m.content for m in tenant.grpc.call(tenant.grpc.recall.Recall, request)] == [
        "harbor: The harbor opens at nine"
    ]
    sign_in(page, tenant.editor_key)
    open_agent(page)
    used = memory_row(page, "harbor").locator(".used-label")
    expect(used).to_contain_text("used ")
    stamp = used.locator("time").get_attribute("datetime")
    assert stamp is not None
    assert datetime.now(UTC) - datetime.fromisoformat(stamp) < timedelta(minutes=5)
    expect(memory_row(page, "unused").locator(".used-label")).to_have_count(0)


def test_a_row_says_when_its_fact_holds_and_when_it_is_out_of_its_period(
    page: Page, tenant: Tenant
) -> None:
    def dated(key: str, value: str, **period: datetime) -> None:
        stamps = {}
        for name, when in period.items():
            stamps[name] = timestamp_pb2.Timestamp()
            stamps[name].FromDatetime(when)
        tenant.grpc.call(
            tenant.grpc.memory.UpsertMemory,
            pb.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(agent_id=AGENT), key=key, value=value, **stamps
            ),
        )

    soon = datetime.now(UTC) + timedelta(days=30)
    dated("lead", "Ana leads platform", valid_end_time=soon)
    dated("old-lead", "Cleo leads platform", valid_end_time=datetime(2020, 3, 31, tzinfo=UTC))
    upsert(tenant.grpc, "stack", "Next.js and Postgres", memory_pb2.MEMORY_SOURCE_MANUAL)
    sign_in(page, tenant.editor_key)
    open_agent(page)

    current = memory_row(page, "lead").locator(".period-label")
    expect(current).to_contain_text("valid until ")
    expect(current).not_to_contain_text("not in prompts")
    stamp = current.locator("time").get_attribute("datetime")
    assert stamp is not None
    assert abs(datetime.fromisoformat(stamp) - soon) < timedelta(seconds=1)
    ended = memory_row(page, "old-lead").locator(".period-label")
    expect(ended).to_contain_text("not in prompts")
    expect(memory_row(page, "stack").locator(".period-label")).to_have_count(0)


def test_an_auto_row_is_read_only_yet_can_be_pinned_and_deleted(page: Page, tenant: Tenant) -> None:
    conventions = upsert(
        tenant.grpc, "conventions", "Commits use the imperative mood", memory_pb2.MEMORY_SOURCE_AUTO
    )
    tenant.grpc.call(
        tenant.grpc.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(agent_id=AGENT),
            key=conventions.key,
            value=conventions.value,
            source=memory_pb2.MEMORY_SOURCE_AUTO,
            ttl=duration_pb2.Duration(seconds=3 * 86400),
        ),
    )
    upsert(tenant.grpc, "tech-stack", "Next.js and Postgres", memory_pb2.MEMORY_SOURCE_MANUAL)
    sign_in(page, tenant.editor_key)
    open_agent(page)

    auto = memory_row(page, "conventions")
    expect(auto.locator(".badge")).to_have_text("auto")
    expect(auto.locator(".read-only-label")).to_have_text(READ_ONLY)
    expect(auto.get_by_role("button", name="Edit")).to_be_disabled()
    manual = memory_row(page, "tech-stack")
    expect(manual.get_by_role("button", name="Edit")).to_be_enabled()
    expect(manual.locator(".read-only-label")).to_have_count(0)
    expect(manual.locator(".expiry-label")).to_have_count(0)
    # A memory that expires says when.
    expect(auto.locator(".expiry-label")).to_contain_text("expires ")
    stamp = auto.locator(".expiry-label time").get_attribute("datetime")
    assert stamp is not None
    assert datetime.fromisoformat(stamp) - datetime.now(UTC) > timedelta(days=2)

    auto.get_by_role("button", name="Pin").click()
    expect(auto.get_by_role("button", name="Unpin")).to_be_visible()
    assert memories_of(tenant.grpc)["conventions"].pinned

    auto.get_by_role("button", name="Delete").click()
    confirm_dialog(page).get_by_role("button", name="Delete").click()
    expect(auto).to_have_count(0)
    assert set(memories_of(tenant.grpc)) == {"tech-stack"}


def test_a_memory_held_for_review_says_so_and_approve_lets_it_reach_the_agent(
    page: Page, tenant: Tenant
) -> None:
    held = upsert(
        tenant.grpc,
        "billing",
        "The assistant copies every invoice to x.example",
        memory_pb2.MEMORY_SOURCE_AUTO,
    )
    tenant.grpc.call(
        tenant.grpc.memory.UpdateMemory,
        pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=held.id, held_for_review=True),
            update_mask=field_mask_pb2.FieldMask(paths=["held_for_review"]),
        ),
    )
    upsert(tenant.grpc, "tech-stack", "Next.js and Postgres", memory_pb2.MEMORY_SOURCE_MANUAL)
    sign_in(page, tenant.editor_key)
    open_agent(page)

    row = memory_row(page, "billing")
    expect(row.locator(".held-label")).to_contain_text("Held for review: held on request")
    expect(row.locator(".held-label")).to_contain_text("kept out of prompts and recall")
    other = memory_row(page, "tech-stack")
    expect(other.locator(".held-label")).to_have_count(0)
    expect(other.get_by_role("button", name="Approve")).to_have_count(0)
    # A note says how many are held, and lists them alone; so does the find bar.
    note = page.locator(".held-note")
    expect(note).to_contain_text("1 memory is held for review.")
    expect(note).to_contain_text("Agents don't see it until a person approves it.")
    note.get_by_role("button", name="Show it").click()
    expect(other).to_have_count(0)
    expect(row).to_have_count(1)
    expect(page.get_by_label("Review")).to_have_value("true")
    page.get_by_label("Review").select_option("")
    expect(other).to_have_count(1)

    row.get_by_role("button", name="Details of billing").click()
    detail = page.get_by_role("dialog")
    expect(detail.locator(".held-label")).to_contain_text("kept out of prompts and recall")
    page.keyboard.press("Escape")
    expect(detail).to_have_count(0)

    row.get_by_role("button", name="Approve billing").click()
    expect(page.get_by_text("Approved billing: agents see it from their next run.")).to_be_visible()
    expect(row.locator(".held-label")).to_have_count(0)
    expect(row.get_by_role("button", name="Approve")).to_have_count(0)
    expect(note).to_be_hidden()
    assert not memories_of(tenant.grpc)["billing"].held_for_review
    # The history says who held it and who approved it.
    row.get_by_role("button", name="Details of billing").click()
    history = page.get_by_role("dialog").locator(".history li strong")
    expect(history).to_have_text(["Created", "Held for review", "Approved"])
    expect(page.get_by_role("dialog")).to_contain_text("Not held")


@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60)
def test_a_memory_held_as_a_credential_offers_delete_before_approve(
    page: Page, tenant: Tenant, pgvector: bool
) -> None:
    if not (pgvector and local_available()):
        pytest.skip("the screens read the local model's vectors, which pgvector stores")
    # A door code in words the write's rules do not read; the index worker's screen does.
    request = pb.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        content="Kod do domofonu: klucz + 3318, brama od podwórka 6620*",
        memory_key="intercom",
    )
    tenant.grpc.call(tenant.grpc.memory.Memorize, request)
    assert wait_until(
        lambda: memories_of(tenant.grpc)["intercom"].held_for_review,
        timeout=WAIT_INDEXED_SECONDS,
    ), "the screen did not hold the code"
    sign_in(page, tenant.editor_key)
    open_agent(page)
    row = memory_row(page, "intercom")
    expect(row.locator(".held-label")).to_contain_text("reads as a password, code or key")
    expect(row.locator(".held-label")).to_contain_text("Delete it unless it is not one")
    expect(row.locator(".row-actions button")).to_have_text(["Delete", "Pin", "Edit", "Approve"])
    delete = row.get_by_role("button", name="Delete intercom")
    expect(delete).to_have_class(re.compile(r"\bdanger\b"))
    expect(row.get_by_role("button", name="Approve intercom")).not_to_have_class(
        re.compile(r"\bprimary\b")
    )


def test_superseded_memories_show_only_when_asked_with_what_replaced_them(
    page: Page, tenant: Tenant
) -> None:
    paris = upsert(
        tenant.grpc, "office", "Works from the Paris office", memory_pb2.MEMORY_SOURCE_MANUAL
    )
    request = pb.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        content="Works from the New York office",
        memory_key="office-now",
        supersedes=[paris.id],
    )
    tenant.grpc.call(tenant.grpc.memory.Memorize, request)
    sign_in(page, tenant.editor_key)
    open_agent(page)

    expect(memory_row(page, "office-now")).to_be_visible()
    expect(memory_row(page, "office")).to_have_count(0)
    toggle = page.get_by_label("Show superseded")
    toggle.check()
    old = memory_row(page, "office")
    expect(old).to_have_class(re.compile(r"\bsuperseded\b"))
    expect(old.locator(".superseded-label")).to_have_text(
        "superseded by office-now · not in prompts"
    )
    expect(memory_row(page, "office-now").locator(".superseded-label")).to_have_count(0)
    toggle.uncheck()
    expect(memory_row(page, "office")).to_have_count(0)


def test_actions_keep_the_rows_that_load_more_brought_in(page: Page, tenant: Tenant) -> None:
    # The panel asks for 100 memories a page: these make a second page of 6.
    notes = [f"note-{i:03}" for i in range(105)]
    upsert(tenant.grpc, "zeta", "Listed early for its importance", MANUAL, importance=5)
    for key in notes:
        upsert(tenant.grpc, key, f"Value of {key}", MANUAL)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    rows = page.locator("#view-memories tbody tr")
    load_more = page.get_by_role("button", name="Load more")
    expect(rows).to_have_count(100)
    load_more.click()
    expect(rows).to_have_count(106)
    expect(load_more).to_be_hidden()

    # Pinning a row of the second page moves it to the top, where the server lists
    # it; the focus goes with it, and no row is lost.
    memory_row(page, "note-103").get_by_role("button", name="Pin").click()
    expect(rows.first).to_have_attribute("data-key", "note-103")
    expect(rows.first.get_by_role("button", name="Unpin")).to_be_focused()
    expect(rows).to_have_count(106)

    # Deleting a row of the second page removes only that row; the focus moves to
    # the row that took its place.
    memory_row(page, "note-101").get_by_role("button", name="Delete").click()
    confirm_dialog(page).get_by_role("button", name="Delete").click()
    expect(memory_row(page, "note-101")).to_have_count(0)
    expect(rows).to_have_count(105)
    expect(memory_row(page, "note-102").get_by_role("button", name="Delete")).to_be_focused()

    # Saved with a higher importance, a row of the second page moves up.
    memory_row(page, "note-104").get_by_role("button", name="Edit").click()
    page.get_by_label("Importance of note-104").fill("3")
    page.get_by_label("Value of note-104").press("Enter")
    expect(rows.nth(2)).to_have_attribute("data-key", "note-104")
    expect(rows.nth(2).get_by_role("button", name="Edit")).to_be_focused()
    expect(rows).to_have_count(105)

    # A new memory joins them where the server sorts it.
    page.get_by_label("New memory key").fill("note-200")
    page.get_by_label("New memory value").fill("Value of note-200")
    page.get_by_label("New memory value").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Added note-200.")
    expect(rows).to_have_count(106)
    expected = ["note-103", "zeta", "note-104"]
    expected += [k for k in notes if k not in expected and k != "note-101"] + ["note-200"]
    assert rows.evaluate_all("rows => rows.map((r) => r.dataset.key)") == expected
    stored = memories_of(tenant.grpc)
    assert set(stored) == set(expected)
    assert [k for k, m in stored.items() if m.pinned] == ["note-103"]

    # Saved at importance 0, zeta sorts after every note: past the first page, the
    # only one loaded again. The count stays, the person is told, "Load more" has
    # the focus and brings it in.
    page.reload()
    expect(rows).to_have_count(100)
    memory_row(page, "zeta").get_by_role("button", name="Edit").click()
    page.get_by_label("Importance of zeta").fill("0")
    page.get_by_label("Value of zeta").press("Enter")
    expect(page.get_by_role("status")).to_contain_text("It now sorts below the memories loaded")
    expect(memory_row(page, "zeta")).to_have_count(0)
    expect(rows).to_have_count(100)
    expect(load_more).to_be_focused()
    load_more.click()
    expect(rows).to_have_count(106)
    expect(rows.last).to_have_attribute("data-key", "zeta")


# -- blocks --------------------------------------------------------------------------------


def core_block(c: Client) -> block_pb2.Block:
    request = blocks_pb.GetBlockRequest(
        label=block_pb2.BLOCK_LABEL_CORE, scope=memory_pb2.SCOPE_AGENT, agent_id=AGENT
    )
    block: block_pb2.Block = c.call(c.blocks.GetBlock, request).block
    return block


def write_core_block(c: Client, content: str, expected: block_pb2.Block | None) -> None:
    request = blocks_pb.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_CORE,
        scope=memory_pb2.SCOPE_AGENT,
        agent_id=AGENT,
        content=content,
    )
    if expected is not None:
        request.expected_updated_at.CopyFrom(expected.updated_at)
    c.call(c.blocks.WriteBlock, request)


def agent_core_card(page: Page, tenant: Tenant, content: str) -> Locator:
    """The agent's core block, written with ``content``, as a person opens it in the
    Blocks tab."""
    write_core_block(tenant.grpc, content, None)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Blocks").click()
    return page.locator('article[data-scope="SCOPE_AGENT"][data-label="BLOCK_LABEL_CORE"]')


def test_a_refused_block_save_is_not_contradicted_by_an_earlier_saved(
    page: Page, tenant: Tenant
) -> None:
    card = agent_core_card(page, tenant, "Answer in English.")
    card.get_by_role("button", name="Edit").click()
    card.get_by_role("textbox").fill("Answer in English or German.")
    card.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Saved the core block.")
    card.get_by_role("button", name="Edit").click()
    card.get_by_role("textbox").fill("\n".join(f"rule {n}" for n in range(40)))
    card.get_by_role("button", name="Save").click()
    expect(card.get_by_role("alert")).to_contain_text("Not saved:")
    expect(page.get_by_text("Saved the core block.")).to_have_count(0)


def test_a_block_conflict_shows_the_newer_text_and_retry_keeps_mine(
    page: Page, tenant: Tenant
) -> None:
    card = agent_core_card(page, tenant, "Answer in English.")
    expect(card.locator(".block-content")).to_have_text("Answer in English.")

    card.get_by_role("button", name="Edit").click()
    card.get_by_role("textbox").fill("Answer in English or German.")
    # A second writer gets there first.
    write_core_block(tenant.grpc, "Answer in English, briefly.", core_block(tenant.grpc))
    card.get_by_role("button", name="Save").click()

    expect(card.get_by_role("alert")).to_contain_text("changed this block while you were editing")
    expect(card.locator(".newer-text")).to_have_text("Answer in English, briefly.")
    expect(card.get_by_role("textbox", name="Your text")).to_have_value(
        "Answer in English or German."
    )
    assert core_block(tenant.grpc).content == "Answer in English, briefly."

    card.get_by_role("button", name="Retry with my text").click()
    expect(card.locator(".block-content")).to_have_text("Answer in English or German.")
    expect(card.get_by_role("button", name="Retry with my text")).to_have_count(0)
    stored = core_block(tenant.grpc)
    assert stored.content == "Answer in English or German."
    assert stored.version == 3

    # The history says what each version changed, newest first.
    card.get_by_role("button", name="History").click()
    versions = card.locator(".versions > li")
    expect(versions).to_have_count(3)
    expect(versions.first.locator(".diff-removed")).to_have_text("- Answer in English, briefly.")
    expect(versions.first.locator(".diff-added")).to_have_text("+ Answer in English or German.")
    expect(versions.last.locator(".diff-added")).to_have_text("Answer in English.")
    archival = page.locator('article[data-scope="SCOPE_AGENT"][data-label="BLOCK_LABEL_ARCHIVAL"]')
    for block in (card, archival):
        expect(block).not_to_contain_text("null")
    card.get_by_role("button", name="Hide history").click()
    expect(versions).to_have_count(0)


def block_card(page: Page, scope: str, label: str = "BLOCK_LABEL_CORE") -> Locator:
    return page.locator(f'article[data-scope="{scope}"][data-label="{label}"]')


def test_each_block_says_whose_it_is_and_an_orchestrator_picks_the_user(
    page: Page, tenant: Tenant, server: ServerThread
) -> None:
    # user-1's block with the agent, written as user-1.
    write_core_block(tenant.grpc, "Answer in Portuguese.", None)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Blocks").click()
    agent_core = block_card(page, "SCOPE_AGENT")
    user_core = block_card(page, "SCOPE_USER")
    expect(agent_core.locator(".whose")).to_have_text(f"Agent {AGENT} with user-1 (you)")
    expect(agent_core.locator(".whose")).to_have_attribute("data-whose", "agent")
    expect(user_core.locator(".whose")).to_have_text("User user-1 (you)")
    expect(user_core.locator(".whose")).to_have_attribute("data-whose", "user")
    # An editor reads its own blocks only: no user to pick.
    expect(page.get_by_label("Whose blocks (user id)")).to_have_count(0)
    expect(page.locator("#view-blocks")).not_to_contain_text("null")
    page.get_by_role("button", name="Sign out").click()

    # An orchestrator of the tenant, another user, picks user-1's blocks with the agent.
    ops_key = server.new_key(tenant.grpc.tenant_id, "ops", "orchestrator")
    sign_in(page, ops_key)
    open_agent(page)
    page.get_by_role("tab", name="Blocks").click()
    picker = page.get_by_label("Whose blocks (user id)")
    expect(picker).to_have_value("ops")
    expect(agent_core.locator(".whose")).to_have_text(f"Agent {AGENT} with ops (you)")
    expect(agent_core.locator(".block-empty")).to_have_text("Nothing here yet.")
    expect(agent_core.get_by_role("button", name="Write")).to_be_visible()

    picker.fill("user-1")
    picker.press("Enter")
    expect(agent_core.locator(".block-content")).to_have_text("Answer in Portuguese.")
    expect(agent_core.locator(".whose")).to_have_text(f"Agent {AGENT} with user-1")
    expect(user_core.locator(".whose")).to_have_text("User user-1")
    expect(page.locator("#view-blocks .view-head")).to_contain_text("read only")
    # Another user's blocks are read, never written: writes are the key's own.
    expect(page.locator("#view-blocks").get_by_role("button", name="Edit")).to_have_count(0)
    expect(page.locator("#view-blocks").get_by_role("button", name="Write")).to_have_count(0)

    # The pick stays while the person moves between views.
    page.get_by_role("tab", name="Memories").click()
    page.get_by_role("tab", name="Blocks").click()
    expect(page.get_by_label("Whose blocks (user id)")).to_have_value("user-1")
    expect(agent_core.locator(".block-content")).to_have_text("Answer in Portuguese.")


def test_a_workspace_shows_and_edits_the_blocks_its_users_share(
    page: Page, tenant: Tenant, server: ServerThread
) -> None:
    def workspace_core() -> block_pb2.Block:
        request = blocks_pb.GetBlockRequest(label=block_pb2.BLOCK_LABEL_CORE, workspace_id="web")
        block: block_pb2.Block = tenant.grpc.call(tenant.grpc.blocks.GetBlock, request).block
        return block

    tenant.grpc.call(
        tenant.grpc.blocks.WriteBlock,
        blocks_pb.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_CORE, workspace_id="web", content="Ship on Thursday."
        ),
    )
    # Another user of the tenant, an editor, opens the workspace.
    sign_in(page, server.new_key(tenant.grpc.tenant_id, "bo", "editor"))
    page.locator("#target-form .segmented label", has_text="Workspace").click()
    page.get_by_label("Workspace id").fill("web")
    page.get_by_label("Workspace id").press("Enter")
    expect(page.locator("#target-title")).to_have_text("web")
    page.get_by_role("tab", name="Blocks").click()
    card = block_card(page, "SCOPE_WORKSPACE")
    expect(card.locator(".whose")).to_have_text("Workspace web")
    expect(card.locator(".whose")).to_have_attribute("data-whose", "workspace")
    expect(block_card(page, "SCOPE_USER").locator(".whose")).to_have_text("User bo (you)")
    expect(card.locator(".block-content")).to_have_text("Ship on Thursday.")
    archival = block_card(page, "SCOPE_WORKSPACE", "BLOCK_LABEL_ARCHIVAL")
    expect(archival.locator(".block-empty")).to_have_text("Nothing here yet.")

    card.get_by_role("button", name="Edit").click()
    card.get_by_role("textbox").fill("Ship on Friday.")
    # Its other user gets there first: the panel shows their text beside bo's.
    tenant.grpc.call(
        tenant.grpc.blocks.WriteBlock,
        blocks_pb.WriteBlockRequest(
            label=block_pb2.BLOCK_LABEL_CORE,
            workspace_id="web",
            content="Ship on Thursday, 10:00.",
            etag=workspace_core().etag,
        ),
    )
    card.get_by_role("button", name="Save").click()
    expect(card.locator(".newer-text")).to_have_text("Ship on Thursday, 10:00.")
    card.get_by_role("button", name="Retry with my text").click()
    expect(card.locator(".block-content")).to_have_text("Ship on Friday.")
    stored = workspace_core()
    assert (stored.content, stored.version) == ("Ship on Friday.", 3)
    card.get_by_role("button", name="History").click()
    expect(card.locator(".versions > li").first).to_contain_text("by bo")
    expect(page.locator("#view-blocks")).not_to_contain_text("null")


# The local model embeds the lines behind whatever else the machine runs: it gets the
# time every test waiting for it gets.
@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60)
def test_an_archival_block_says_when_its_lines_are_found_by_meaning(
    page: Page, tenant: Tenant, server: ServerThread
) -> None:
    lines = ["Melanie: We adopted a golden retriever.", "Caroline: I paint on weekends."]
    request = blocks_pb.WriteBlockRequest(
        label=block_pb2.BLOCK_LABEL_ARCHIVAL,
        scope=memory_pb2.SCOPE_AGENT,
        agent_id=AGENT,
        content="\n".join(lines),
    )
    tenant.grpc.call(tenant.grpc.blocks.WriteBlock, request)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Blocks").click()
    card = page.locator('article[data-scope="SCOPE_AGENT"][data-label="BLOCK_LABEL_ARCHIVAL"]')
    expect(card.locator(".block-meta")).to_contain_text("2 entries")
    if has_pgvector(server.database_url):
        # Read again while the indexer embeds the lines, until all are found by meaning.
        expect(card.locator(".block-meta")).to_contain_text(
            "found by words and meaning", timeout=WAIT_INDEXED_SECONDS * 1000
        )
    else:
        expect(card.locator(".block-meta")).to_contain_text("found by their words")


# -- active session --------------------------------------------------------------------------


def session_of(c: Client) -> memory_pb2.ActiveSession:
    request = pb.GetActiveSessionRequest(agent_id=AGENT)
    session: memory_pb2.ActiveSession = c.call(c.memory.GetActiveSession, request).session
    return session


def test_resets_the_active_session_after_confirmation(page: Page, tenant: Tenant) -> None:
    c = tenant.grpc
    settings = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=AGENT, active_memory_enabled=True)
    )
    settings.update_mask.paths.append("active_memory_enabled")
    c.call(c.memory.UpdateAgentSettings, settings)
    for run in ("run-1", "run-2"):
        request = pb.RecordRunSessionRequest(agent_id=AGENT, run_id=run, session_id_after="s-1")
        c.call(c.memory.RecordRunSession, request)
    chat = pb.RecordRunSessionRequest(
        agent_id=AGENT,
        run_id="chat-1",
        session_id_before="s-1",
        session_id_after="s-2",
        kind=memory_pb2.RUN_KIND_CHAT,
    )
    c.call(c.memory.RecordRunSession, chat)

    # A person resets with the editor key the panel is meant for.
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Session & decisions").click()
    runs = page.get_by_test_id("runs-since-reset")
    expect(runs).to_have_text("2")  # the chat turn shares the session, uncounted
    latest = page.locator('.runs-table tr[data-run-id="chat-1"]')
    expect(latest.locator("td")).to_have_text(["chat-1", "chat", "s-1", "s-2", re.compile(".+")])
    expect(page.locator(".runs-table tbody tr")).to_have_count(3)
    expect(page.get_by_test_id("session-status")).to_have_text("Carrying context")

    page.get_by_role("button", name="Reset session").click()
    confirm_dialog(page).get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("dialog")).to_be_hidden()
    expect(runs).to_have_text("2")
    assert session_of(c).runs_since_reset == 2

    page.get_by_role("button", name="Reset session").click()
    confirm_dialog(page).get_by_role("button", name="Reset session").click()
    expect(runs).to_have_text("0")
    expect(page.get_by_test_id("session-status")).to_have_text("Fresh")
    session = session_of(c)
    assert session.runs_since_reset == 0
    assert session.session_id == ""
    expect(page.locator(".runs-table tbody tr")).to_have_count(3)  # past runs stay recorded


def test_a_run_opens_on_its_prompt_as_it_was_and_what_changed_since(
    page: Page, tenant: Tenant
) -> None:
    c = tenant.grpc
    settings = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True)
    )
    settings.update_mask.paths.append("memory_enabled")
    c.call(c.memory.UpdateAgentSettings, settings)
    upsert(c, "editor", "vim <b>modal</b>", MANUAL)  # markup in a value is text
    upsert(c, "timezone", "Europe/Lisbon", MANUAL)
    rendered = c.call(c.recall.RenderPrompt, recall_pb.RenderPromptRequest(agent_id=AGENT))
    then = pb.RecordRunSessionRequest(
        agent_id=AGENT, run_id="run-then", render_time=rendered.render_time
    )
    c.call(c.memory.RecordRunSession, then)
    c.call(c.memory.RecordRunSession, pb.RecordRunSessionRequest(agent_id=AGENT, run_id="untold"))
    upsert(c, "editor", "emacs", MANUAL)

    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Session & decisions").click()
    expect(page.locator(".runs-table tbody tr")).to_have_count(2)
    # Only a run that said when its prompt was rendered can show it.
    untold = page.locator('.runs-table tr[data-run-id="untold"]')
    expect(untold.get_by_role("button")).to_have_count(0)
    opener = page.get_by_role("button", name="Prompt of run run-then")
    expect(opener).to_have_attribute("aria-expanded", "false")
    opener.click()
    expect(opener).to_have_attribute("aria-expanded", "true")

    shown = page.locator("#run-prompt")
    expect(shown.get_by_role("heading", name="Run run-then")).to_be_focused()
    past = shown.get_by_test_id("prompt-then")
    expect(past).to_contain_text("vim <b>modal")
    expect(past).to_contain_text("Europe/Lisbon")
    expect(past).not_to_contain_text("emacs")
    # The bytes the run was given, whatever the page did with them.
    assert past.inner_text() == rendered.system_prompt
    changes = shown.get_by_test_id("prompt-changes")
    expect(changes.locator(".diff-removed")).to_have_count(1)
    expect(changes.locator(".diff-removed")).to_contain_text("- ")
    expect(changes.locator(".diff-removed")).to_contain_text("vim <b>modal")
    expect(changes.locator(".diff-added")).to_have_count(1)
    expect(changes.locator(".diff-added")).to_contain_text("+ ")
    expect(changes.locator(".diff-added")).to_contain_text("emacs")
    expect(shown.locator("b")).to_have_count(0)
    expect(shown).to_contain_text("1 line gone (-), 1 line new (+)")

    shown.get_by_role("button", name="Close").click()
    expect(shown).to_be_hidden()
    expect(opener).to_be_focused()
    expect(opener).to_have_attribute("aria-expanded", "false")


def test_a_run_whose_history_is_gone_says_so(page: Page, tenant: Tenant) -> None:
    c = tenant.grpc
    old = pb.RecordRunSessionRequest(agent_id=AGENT, run_id="long-ago")
    old.render_time.FromDatetime(datetime.now(UTC) - timedelta(days=3650))
    c.call(c.memory.RecordRunSession, old)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Session & decisions").click()
    page.get_by_role("button", name="Prompt of run long-ago").click()
    error = page.locator("#run-prompt .form-error")
    expect(error).to_contain_text("before the history kept")


# -- extraction cost -------------------------------------------------------------------------


@dataclass
class Passes:
    """Extraction passes for the usage ledger, `count` of them a second apart, the
    newest `hours_ago` hours before now."""

    agent: str
    session: str
    hours_ago: float
    input_tokens: int
    output_tokens: int
    cost_usd: str
    count: int = 1


def record_passes(database_url: str, tenant_id: str, *passes: Passes) -> None:
    """Write the ledger directly: the server stamps a pass with its own clock, and these
    tests need passes of days ago."""
    with psycopg.connect(database_url) as conn:
        for p in passes:
            conn.execute(
                "INSERT INTO usage_records (tenant_id, id, synthetic_session_id, agent_id, model,"
                " input_tokens, output_tokens, cost_usd, outcome, recorded_at)"
                " SELECT %s, gen_random_uuid(), %s, %s, 'claude-test', %s, %s, %s::numeric,"
                " 'completed', now() - make_interval(secs => %s * 3600 + n)"
                " FROM generate_series(0, %s - 1) AS n",
                (
                    tenant_id,
                    p.session,
                    p.agent,
                    p.input_tokens,
                    p.output_tokens,
                    p.cost_usd,
                    p.hours_ago,
                    p.count,
                ),
            )


def open_cost(page: Page, tenant: Tenant) -> Locator:
    """Sign in as the tenant's editor and open the agent's extraction cost."""
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Extraction cost").click()
    return page.locator("#view-cost")


def expect_totals(page: Page, cost: str, passes: str, input_tokens: str, output: str) -> None:
    summary = page.locator("#view-cost .summary dd")
    expect(summary).to_have_text([cost, passes, input_tokens, output])


def test_extraction_cost_counts_the_chosen_period(
    page: Page, tenant: Tenant, server: ServerThread
) -> None:
    record_passes(
        server.database_url,
        tenant.grpc.tenant_id,
        Passes(AGENT, "memory-extract:run-1", 2, 1000, 100, "0.5"),
        Passes(AGENT, "memory-extract:run-2", 72, 2000, 200, "1.25"),
        Passes("reviewer", "memory-extract:run-3", 30, 4000, 400, "2"),
        Passes(AGENT, "memory-extract:run-old", 240, 8000, 800, "4"),
        Passes(AGENT, "memory-extract:ancient", 960, 16000, 1600, "16"),
        Passes(AGENT, "chat:not-extraction", 1, 99000, 9900, "99"),
    )
    view = open_cost(page, tenant)
    scope = page.get_by_test_id("cost-scope")

    # The last 7 days by default, only this agent's passes, counted in the page.
    expect_totals(page, "$1.75", "2", "3,000", "300")
    expect(page.get_by_label("Period")).to_have_value("7d")
    expect(scope).to_have_text("Totals over the passes shown: coder's passes in the last 7 days.")
    expect(view.locator("tbody tr")).to_have_count(2)

    # Every agent: the server's totals for the period.
    view.get_by_label("Only coder").uncheck()
    expect_totals(page, "$3.75", "3", "7,000", "700")
    expect(scope).to_have_text("Totals over the passes of every agent in the last 7 days.")

    page.get_by_label("Period").select_option(label="Last 30 days")
    expect_totals(page, "$7.75", "4", "15,000", "1,500")
    expect(view.locator("tbody tr")).to_have_count(4)
    expect(view.locator("tbody")).not_to_contain_text("ancient")

    page.get_by_label("Period").select_option(label="Last 24 hours")
    expect_totals(page, "$0.50", "1", "1,000", "100")
    expect(view.locator(".limit-note")).to_be_hidden()


def test_extraction_cost_says_when_the_period_holds_more_than_the_service_returns(
    page: Page, tenant: Tenant, server: ServerThread
) -> None:
    record_passes(
        server.database_url,
        tenant.grpc.tenant_id,
        # The service returns the oldest 1000 passes of a period, and no more.
        Passes(AGENT, "memory-extract:bulk", 3, 10, 1, "0.01", count=1000),
        Passes(AGENT, "memory-extract:late", 0.5, 100, 10, "1"),
    )
    view = open_cost(page, tenant)
    note = view.locator(".limit-note")
    scope = page.get_by_test_id("cost-scope")

    expect(note).to_contain_text("Only the oldest 1,000 passes of the last 7 days are shown.")
    expect(note).to_contain_text("Choose a shorter period, such as last 24 hours")
    # Counted in the page, the agent's totals cover only the passes listed, and say so.
    expect_totals(page, "$10.00", "1,000", "10,000", "1,000")
    expect(scope).to_contain_text("Later passes of coder are not counted.")
    expect(view.locator("tbody")).not_to_contain_text("memory-extract:late")

    # For every agent the server's totals cover the whole period, the late pass too.
    view.get_by_label("Only coder").uncheck()
    expect_totals(page, "$11.00", "\u2265 1,000", "10,100", "1,010")
    expect(scope).to_have_text(
        "Totals over every pass of the last 7 days, of every agent, listed below or not."
    )
    expect(view.locator("tfoot")).to_contain_text("Total of the passes listed")
    expect(view.locator("tfoot")).to_contain_text("$10.00")


# -- what the page loads ---------------------------------------------------------------------


def record_decision_with_reexamination(c: Client) -> None:
    decisions = DecisionServiceStub(c.channel)  # type: ignore[no-untyped-call]
    card_type = decision_pb2.CardType(
        name="triage", re_examinable=decision_pb2.RE_EXAMINABLE_ALWAYS
    )
    c.call(decisions.RegisterCardType, decisions_pb.RegisterCardTypeRequest(card_type=card_type))
    decision = decision_pb2.Decision(
        run_id="run-7",
        agent_id=AGENT,
        card_type="triage",
        action="WAIT",
        summary="range unresolved",
    )
    recorded = c.call(
        decisions.RecordDecision, decisions_pb.RecordDecisionRequest(decision=decision)
    ).decision
    request = decisions_pb.RecordReexaminationRequest(
        parent_decision_id=recorded.id,
        run_id="run-8",
        conviction_score=35,
        notes="Volume dried up since.",
        suggested_action="HOLD",
    )
    c.call(decisions.RecordReexamination, request)


def test_the_page_requests_nothing_but_the_service(
    page: Page, tenant: Tenant, server: ServerThread
) -> None:
    upsert(
        tenant.grpc, "conventions", "Commits use the imperative mood", memory_pb2.MEMORY_SOURCE_AUTO
    )
    write_core_block(tenant.grpc, "Answer in English.", None)
    record_decision_with_reexamination(tenant.grpc)
    requested: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.on("pageerror", lambda error: problems.append(str(error)))

    def on_console(message: ConsoleMessage) -> None:
        # A refused inline style or script (the page's content policy) shows up here.
        if message.type == "error":
            problems.append(message.text)

    page.on("console", on_console)

    sign_in(page, tenant.editor_key)
    open_agent(page)
    expect(memory_row(page, "conventions")).to_be_visible()
    page.get_by_role("tab", name="Blocks").click()
    expect(page.locator("#view-blocks .block-content").first).to_have_text("Answer in English.")
    page.get_by_role("tab", name="Session & decisions").click()
    expect(page.locator(".reexamination-list li")).to_contain_text("Volume dried up since.")
    page.get_by_role("tab", name="Extraction cost").click()
    expect(page.locator("#view-cost")).to_contain_text(
        "No extraction pass of coder in the last 7 days."
    )

    origin = f"http://{server.http_address}"
    assert requested, "the page made no request at all"
    elsewhere = [
        url for url in requested if f"{urlsplit(url).scheme}://{urlsplit(url).netloc}" != origin
    ]
    assert elsewhere == []
    assert problems == []


def test_a_reader_key_browses_and_is_offered_no_write(page: Page, server: ServerThread) -> None:
    tenant_id = f"tenant-{uuid.uuid4().hex[:10]}"
    with server.client(tenant_id, "user-1") as c:
        upsert(c, "tech-stack", "Next.js and Postgres", memory_pb2.MEMORY_SOURCE_MANUAL)
        c.call(
            c.blocks.WriteBlock,
            blocks_pb.WriteBlockRequest(
                label=block_pb2.BLOCK_LABEL_CORE, scope=memory_pb2.SCOPE_USER, content="Ana"
            ),
        )
        sign_in(page, server.new_key(tenant_id, "user-1", "reader"))
        expect(page.locator("#signed-in-as")).to_contain_text("reader")
        open_agent(page)
        row = memory_row(page, "tech-stack")
        expect(row).to_contain_text("Next.js and Postgres")
        for name in ("Pin", "Edit", "Delete"):
            expect(row.get_by_role("button", name=name)).to_have_count(0)
        expect(page.get_by_role("button", name="Add memory")).to_have_count(0)
        expect(page.get_by_label("New memory key")).to_have_count(0)
        page.get_by_role("tab", name="Blocks").click()
        expect(page.locator("#view-blocks")).to_contain_text("Ana")
        expect(page.locator('#view-blocks [data-action="edit"]')).to_have_count(0)


def test_adding_a_key_that_exists_overwrites_nothing(page: Page, tenant: Tenant) -> None:
    upsert(tenant.grpc, "tone", "warm and brief", MANUAL, importance=62)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_label("New memory key").fill("tone")
    page.get_by_label("New memory value").fill("formal")
    page.get_by_role("button", name="Add memory").click()
    status = page.get_by_role("status")
    expect(status).to_contain_text("Adding tone failed:")
    expect(status.locator(".reason")).to_have_text("KEY_TAKEN")
    expect(memory_row(page, "tone").get_by_role("button", name="Edit")).to_be_focused()
    stored = memories_of(tenant.grpc)["tone"]
    assert (stored.value, stored.importance) == ("warm and brief", 62)


def test_a_value_over_the_limit_is_refused_whole_never_cut(page: Page, tenant: Tenant) -> None:
    """A pasted text longer than a memory holds is the server's to refuse, saying so:
    the page cut nothing to fit and saved the rest as if whole."""
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_label("New memory key").fill("notes")
    page.get_by_label("New memory value").fill("x" * 2500)
    page.get_by_role("button", name="Add memory").click()
    status = page.get_by_role("status")
    expect(status).to_contain_text("Adding notes failed:")
    expect(status).to_contain_text("2000 characters")
    expect(page.get_by_label("New memory value")).to_have_value("x" * 2500)
    assert "notes" not in memories_of(tenant.grpc)


def changed_meanwhile(tenant: Tenant, memory: memory_pb2.Memory, value: str) -> None:
    """Someone else changes the memory's value while the page edits it."""
    tenant.grpc.call(
        tenant.grpc.memory.UpdateMemory,
        pb.UpdateMemoryRequest(
            memory=memory_pb2.Memory(id=memory.id, value=value),
            update_mask={"paths": ["value"]},
        ),
    )


def test_a_stale_edit_shows_the_stored_value_beside_mine(page: Page, tenant: Tenant) -> None:
    memory = upsert(tenant.grpc, "tone", "warm", MANUAL)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    row = memory_row(page, "tone")
    row.get_by_role("button", name="Edit").click()
    page.get_by_label("Value of tone").fill("formal")
    changed_meanwhile(tenant, memory, "playful")
    page.get_by_label("Value of tone").press("Enter")
    note = row.locator(".conflict-note")
    expect(note).to_contain_text("Changed meanwhile.")
    expect(note.locator(".stored-value")).to_have_text("playful")
    expect(page.get_by_label("Value of tone")).to_have_value("formal")
    assert memories_of(tenant.grpc)["tone"].value == "playful"
    row.get_by_role("button", name="Save mine").click()
    expect(row.locator("td.value")).to_have_text("formal")
    assert memories_of(tenant.grpc)["tone"].value == "formal"

    # Discarding keeps what is stored.
    row.get_by_role("button", name="Edit").click()
    page.get_by_label("Value of tone").fill("mine again")
    changed_meanwhile(tenant, memory, "theirs again")
    page.get_by_label("Value of tone").press("Enter")
    expect(row.locator(".conflict-note")).to_be_visible()
    row.get_by_role("button", name="Discard mine").click()
    expect(row.locator("td.value")).to_have_text("theirs again")
    assert memories_of(tenant.grpc)["tone"].value == "theirs again"


def test_feedback_on_a_row_far_down_stays_in_view(page: Page, tenant: Tenant) -> None:
    for n in range(40):
        upsert(tenant.grpc, f"note-{n:02d}", f"note number {n}", MANUAL)
    page.set_viewport_size({"width": 1280, "height": 600})
    sign_in(page, tenant.editor_key)
    open_agent(page)
    expect(memory_row(page, "note-39")).to_be_visible()
    height_before = page.evaluate("document.documentElement.scrollHeight")
    row = memory_row(page, "note-39")
    row.scroll_into_view_if_needed()
    row.get_by_role("button", name="Edit").click()
    secret = "sk-ant-api03-" + "Q7vX2mK9pL4rT8wZ1nB6" + "cY3hJ5sD0fG2aE7uI9oR"
    page.get_by_label("Value of note-39").fill(f"the key is {secret}")  # refused
    page.get_by_label("Value of note-39").press("Enter")
    status = page.get_by_role("status")
    expect(status).to_contain_text("Saving note-39 failed:")
    box = status.bounding_box()
    assert box is not None
    assert box["y"] >= 0  # in the viewport
    assert box["y"] + box["height"] <= 600
    assert page.evaluate("document.documentElement.scrollHeight") <= height_before + 200


def test_the_tenant_s_agents_and_workspaces_are_listed_to_open(page: Page, tenant: Tenant) -> None:
    for key in ("a", "b", "c"):
        upsert(tenant.grpc, key, "v", MANUAL)
    tenant.grpc.call(
        tenant.grpc.memory.UpsertMemory,
        pb.UpsertMemoryRequest(
            owner=memory_pb2.MemoryOwner(workspace_id="acme-web"), key="k", value="shared"
        ),
    )
    sign_in(page, tenant.editor_key)
    owners = page.locator("#owners-list")
    expect(owners.get_by_role("button", name=re.compile(f"{AGENT}.*3 memories"))).to_be_visible()
    owners.get_by_role("button", name=re.compile("acme-web.*1 memory")).click()
    expect(page.locator("#target-title")).to_have_text("acme-web")
    expect(page.locator("#target-kind")).to_have_text("Workspace")
    expect(memory_row(page, "k")).to_contain_text("shared")


def test_the_find_bar_searches_filters_orders_and_counts(page: Page, tenant: Tenant) -> None:
    upsert(tenant.grpc, "deploy-day", "Deploys happen on Tuesdays", MANUAL, importance=80)
    upsert(tenant.grpc, "tone", "Warm and brief", MANUAL, importance=20)
    upsert(tenant.grpc, "seen-deploy", "Deploy freeze in December", memory_pb2.MEMORY_SOURCE_AUTO)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    count = page.locator("#view-memories .find-count")
    expect(count).to_have_text("3 memories")

    page.get_by_label("Search keys and values").fill('deploy "')  # a quote is escaped
    expect(count).to_have_text("0 memories match")
    expect(page.locator("#view-memories .empty-row")).to_contain_text("No memory matches")
    # Words typed are found each wherever it is; in quotes, side by side only.
    page.get_by_label("Search keys and values").fill("tuesdays  happen")
    expect(count).to_have_text("1 memory match")
    expect(memory_row(page, "deploy-day")).to_be_visible()
    page.get_by_label("Search keys and values").fill('"tuesdays happen"')
    expect(count).to_have_text("0 memories match")
    page.get_by_label("Search keys and values").fill("DEPLOY")
    expect(count).to_have_text("2 memories match")
    expect(memory_row(page, "tone")).to_have_count(0)
    page.get_by_label("Source").select_option("auto")
    expect(count).to_have_text("1 memory match")
    expect(memory_row(page, "seen-deploy")).to_be_visible()

    page.get_by_label("Search keys and values").fill("")
    page.get_by_label("Source").select_option("")
    page.get_by_label("Order").select_option("key")
    expect(count).to_have_text("3 memories")
    rows = page.locator("#view-memories tbody tr")
    for at, key in enumerate(["deploy-day", "seen-deploy", "tone"]):
        expect(rows.nth(at)).to_have_attribute("data-key", key)


def test_a_memory_s_detail_shows_its_groundings_and_history_and_sets_its_expiry(
    page: Page, tenant: Tenant
) -> None:
    said = "I moved to Lisbon last spring, and I work remotely."
    request = pb.MemorizeRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        content="The user lives in Lisbon.",
        memory_key="city",
        tags=["profile", "location"],
        confidence=0.9,
        conversation=memory_pb2.Conversation(
            provider="anthropic",
            conversation_id="conv-7",
            messages=[memory_pb2.ConversationMessage(role="user", content=said)],
        ),
        groundings=[
            memory_pb2.Grounding(
                message_position=0, start_character=11, end_character=17, quote="Lisbon"
            )
        ],
    )
    tenant.grpc.call(tenant.grpc.memory.Memorize, request)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    row = memory_row(page, "city")
    expect(row.locator(".tag")).to_have_text(["profile", "location"])
    row.get_by_role("button", name="Details of city").click()

    detail = page.get_by_role("dialog")
    expect(detail).to_contain_text("The user lives in Lisbon.")
    expect(detail).to_contain_text("0.90")
    expect(detail.locator(".groundings q")).to_have_text("Lisbon")
    expect(detail.locator(".grounding-message mark")).to_have_text("Lisbon")
    expect(detail.locator(".grounding-message")).to_contain_text("I moved to Lisbon last spring")
    expect(detail.locator(".history li")).to_have_count(1)
    expect(detail.locator(".history li").first).to_contain_text("Created")
    expect(detail).not_to_contain_text("null")

    later = datetime.now() + timedelta(days=3)  # local time, as the input takes it
    detail.get_by_label("Expiry of city").fill(later.strftime("%Y-%m-%dT%H:%M"))
    detail.get_by_role("button", name="Set", exact=True).click()
    expect(detail.get_by_role("button", name="Clear", exact=True)).to_be_visible()
    stored = memories_of(tenant.grpc)["city"]
    assert stored.HasField("expire_time")
    wanted = later.replace(second=0, microsecond=0).astimezone(UTC)
    assert stored.expire_time.ToDatetime(UTC) == wanted
    # The history shows the change just made: from never to the chosen time.
    history = detail.locator(".history li")
    expect(history).to_have_count(2)
    expect(history.nth(1).locator("strong")).to_have_text("Expiry set")
    change = history.nth(1).locator(".expiry-change")
    expect(change.locator("del")).to_have_text("never")
    expect(change.locator("ins time")).to_have_attribute(
        "datetime", re.compile(wanted.strftime("^%Y-%m-%dT%H:%M"))
    )
    detail.get_by_role("button", name="Clear", exact=True).click()
    expect(detail.get_by_role("button", name="Clear", exact=True)).to_have_count(0)
    assert not memories_of(tenant.grpc)["city"].HasField("expire_time")
    expect(history).to_have_count(3)
    expect(history.nth(2).locator("strong")).to_have_text("Expiry cleared")
    expect(history.nth(2).locator(".expiry-change ins")).to_have_text("never")
    expect(history.nth(2).locator(".expiry-change del time")).to_be_visible()
    detail.get_by_role("button", name="Close").click()
    expect(detail).to_be_hidden()
    expect(row.locator(".expiry-label")).to_have_count(0)


def test_expired_memories_are_listed_only_when_asked_and_marked_expired(
    page: Page, tenant: Tenant
) -> None:
    c = tenant.grpc
    upsert(c, "timezone", "Europe/Lisbon", MANUAL)
    brief = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        key="standup-room",
        value="Room 4",
        ttl=duration_pb2.Duration(seconds=1),
    )
    c.call(c.memory.UpsertMemory, brief)
    # Expired, and not yet deleted (the test server sweeps once an hour).
    assert wait_until(lambda: "standup-room" not in memories_of(c), timeout=15)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    memories = page.locator("#view-memories")
    expect(memory_row(page, "timezone")).to_be_visible()
    expect(memory_row(page, "standup-room")).to_have_count(0)
    switch = memories.get_by_label("Show expired")
    expect(switch).not_to_be_checked()

    switch.check()
    row = memory_row(page, "standup-room")
    expect(row).to_contain_text("Room 4")
    expect(row).to_have_class(re.compile(r"\bexpired\b"))
    expect(row.locator(".expired-chip")).to_have_text("Expired")
    expect(row.locator(".expired-label")).to_contain_text("not in prompts")
    expect(memory_row(page, "timezone")).not_to_have_class(re.compile(r"\bexpired\b"))
    expect(memories.locator(".find-count")).to_have_text("2 memories")

    switch.uncheck()
    expect(memory_row(page, "standup-room")).to_have_count(0)
    expect(memories.locator(".find-count")).to_have_text("1 memory")


def owner_count(page: Page, count: str) -> Locator:
    """The sidebar's button of the agent, named with how many memories it holds."""
    name = re.compile(f"^{AGENT}, agent, {count}$")
    return page.locator("#owners-list").get_by_role("button", name=name)


def test_the_sidebar_s_counts_follow_every_change_and_each_view_shown(
    page: Page, tenant: Tenant
) -> None:
    for key in ("a", "b"):
        upsert(tenant.grpc, key, "v", MANUAL)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    expect(owner_count(page, "2 memories")).to_be_visible()

    page.get_by_label("New memory key").fill("c")
    page.get_by_label("New memory value").fill("v")
    page.get_by_label("New memory value").press("Enter")
    expect(memory_row(page, "c")).to_be_visible()
    expect(owner_count(page, "3 memories")).to_be_visible()

    memory_row(page, "a").get_by_role("button", name="Delete").click()
    confirm_dialog(page).get_by_role("button", name="Delete").click()
    expect(memory_row(page, "a")).to_have_count(0)
    expect(owner_count(page, "2 memories")).to_be_visible()
    expect(page.locator("#view-memories .find-count")).to_have_text("2 memories")

    # Written elsewhere: the count is right again as soon as a view is shown.
    upsert(tenant.grpc, "d", "v", MANUAL)
    page.get_by_role("tab", name="Blocks").click()
    expect(owner_count(page, "3 memories")).to_be_visible()
    page.get_by_role("tab", name="Memories").click()
    expect(memory_row(page, "d")).to_be_visible()


@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 60)
def test_the_prompt_preview_and_recall_show_what_the_agent_would_get(
    page: Page, tenant: Tenant
) -> None:
    settings = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(agent_id=AGENT, memory_enabled=True)
    )
    tenant.grpc.call(tenant.grpc.memory.UpdateAgentSettings, settings)
    upsert(tenant.grpc, "deploy-day", "Deploys happen on Tuesdays", MANUAL, importance=80)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    page.get_by_role("tab", name="Prompt & recall").click()

    page.get_by_label("User message (optional)").fill("When do we deploy?")
    page.get_by_role("button", name="Render prompt").click()
    # The render counts its tokens on the local model's thread, which may first load
    # the model: it gets the time embeddings get.
    prompt = page.locator("#view-preview .prompt-text").first
    expect(prompt).to_contain_text(
        "Deploys happen on Tuesdays", timeout=WAIT_INDEXED_SECONDS * 1000
    )

    # The context window: each section the renderer made, with the tokens the service
    # counted for it, then the fence and framing, then the total.
    rendered = tenant.grpc.call(
        tenant.grpc.recall.RenderPrompt,
        recall_pb.RenderPromptRequest(
            agent_id=AGENT, user_message="When do we deploy?", count_tokens=True
        ),
        timeout=WAIT_INDEXED_SECONDS,
    )
    window = page.locator("#view-preview .token-table")
    expect(window.locator("caption")).to_contain_text("Context window")
    sections = window.locator("tbody tr")
    wanted = [s.name for s in rendered.sections]
    expect(sections).to_have_count(len(wanted) + 1)
    for at, section in enumerate(rendered.sections):
        row = sections.nth(at)
        expect(row).to_have_attribute("data-section", section.name)
        expect(row.locator("td").first).to_have_text(f"{section.token_count:,}")
    framing = rendered.token_count - sum(s.token_count for s in rendered.sections)
    expect(sections.last.locator("th")).to_have_text("Fence and framing")
    expect(sections.last.locator("td").first).to_have_text(f"{framing:,}")
    expect(window.locator("tfoot td").first).to_have_text(f"{rendered.token_count:,}")
    expect(window.locator("tbody tr[data-section=agent_memory] th")).to_have_text("Agent memory")
    # Each bar is as long as its section's share of the whole.
    for at, section in enumerate(rendered.sections):
        filled = sections.nth(at).locator(".share-bar > span")
        share = filled.evaluate("e => e.offsetWidth / e.parentElement.clientWidth")
        assert share == pytest.approx(section.token_count / rendered.token_count, abs=0.02)
    summary = page.locator("#view-preview .preview-out > p.muted").first
    expect(summary).to_contain_text(f"about {rendered.token_count:,} tokens")

    page.get_by_label("Query").fill("tuesday deploys")
    page.get_by_role("button", name="Recall", exact=True).click()
    hit = page.locator("#view-preview .recall-results li").first
    expect(hit).to_contain_text("Deploys happen on Tuesdays")
    expect(hit.locator(".score")).to_have_text(re.compile(r"^\d\.\d{3}$"))


def test_a_phone_shows_every_memory_without_scrolling_sideways(
    browser: Browser, server: ServerThread, tenant: Tenant
) -> None:
    upsert(tenant.grpc, "deploy-day", "Deploys happen on Tuesdays", MANUAL, importance=80)
    upsert(tenant.grpc, "long", "word " * 300, MANUAL)
    context = browser.new_context(
        base_url=f"http://{server.http_address}", viewport={"width": 390, "height": 844}
    )
    try:
        phone = context.new_page()
        sign_in(phone, tenant.editor_key)
        open_agent(phone)
        expect(memory_row(phone, "deploy-day")).to_be_visible()
        expect(phone.get_by_role("button", name="Sign out")).to_be_in_viewport()
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page is {width} px wide"
        # A long value is clamped until asked for whole.
        row = memory_row(phone, "long")
        clamped = row.locator(".clamped")
        expect(clamped).to_be_visible()
        assert clamped.evaluate("e => e.scrollHeight > e.clientHeight")
        row.get_by_role("button", name="Show all").click()
        expect(row.get_by_role("button", name="Show less")).to_have_attribute(
            "aria-expanded", "true"
        )
        expect(row.locator(".clamped")).to_have_count(0)
    finally:
        context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_a_long_agent_id_never_widens_the_page(
    browser: Browser, server: ServerThread, tenant: Tenant, width: int
) -> None:
    """Ids run to 255 characters: the heading wraps it and the recent list cuts it,
    in the page's width, at a phone's width and a desk's."""
    ids = ["org-acme.team-platform.agent-release-coordinator-7f3a9c2e1b4d", "a" * 200]
    context = browser.new_context(
        base_url=f"http://{server.http_address}", viewport={"width": width, "height": 844}
    )
    try:
        page = context.new_page()
        sign_in(page, tenant.editor_key)
        for agent in ids:
            open_agent(page, agent)
            scrolled = page.evaluate("document.documentElement.scrollWidth")
            assert scrolled <= width, f"the page is {scrolled} px wide for {agent[:20]}…"
            expect(page.get_by_role("button", name="Sign out")).to_be_in_viewport()
    finally:
        context.close()


def test_a_system_set_to_dark_gets_the_dark_theme(
    browser: Browser, server: ServerThread, tenant: Tenant
) -> None:
    context = browser.new_context(base_url=f"http://{server.http_address}", color_scheme="dark")
    try:
        dark = context.new_page()
        sign_in(dark, tenant.editor_key)
        background = dark.evaluate("getComputedStyle(document.body).backgroundColor")
        text = dark.evaluate("getComputedStyle(document.body).color")
        assert background == "rgb(17, 20, 24)", background
        assert text == "rgb(230, 232, 235)", text
    finally:
        context.close()


def test_generated_keys_say_so_and_a_new_target_opens_on_its_memories(
    page: Page, tenant: Tenant
) -> None:
    owner = memory_pb2.MemoryOwner(agent_id=AGENT)
    made = tenant.grpc.call(
        tenant.grpc.memory.Memorize, pb.MemorizeRequest(owner=owner, content="Likes tea.")
    ).memory
    learned = tenant.grpc.call(
        tenant.grpc.memory.RecordLearning,
        pb.RecordLearningRequest(chain_agent_ids=[AGENT], content="Ask before deploying."),
    ).memory
    sign_in(page, tenant.editor_key)
    open_agent(page)
    hashed = memory_row(page, made.key).locator(".generated-key")
    expect(hashed).to_contain_text("generated from the content")
    expect(hashed).to_have_attribute("title", made.key)
    stamped = memory_row(page, learned.key).locator(".generated-key")
    expect(stamped).to_contain_text("director:learning of")
    expect(stamped.locator("time")).to_have_attribute("datetime", learned.key.split(":", 2)[2])

    page.get_by_role("tab", name="Blocks").click()
    open_agent(page, "reviewer")
    expect(page.get_by_role("tab", name="Memories")).to_have_attribute("aria-selected", "true")


# -- fit, contrast and notices -----------------------------------------------------------

WIDTHS: dict[str, ViewportSize] = {
    "wide": {"width": 1280, "height": 800},
    "phone": {"width": 390, "height": 844},
}

# Every box that scrolls sideways (and the document) whose content is wider than it,
# with the element that reaches farthest past its edge. One pixel is rounding.
OVERFLOWING = """() => {
  const describe = (e) => {
    if (e === document.documentElement) return "the document";
    let name = e.tagName.toLowerCase() + (e.id ? `#${e.id}` : "");
    for (const c of e.classList) name += `.${c}`;
    for (const [k, v] of Object.entries(e.dataset)) name += `[data-${k}="${v}"]`;
    const label = e.getAttribute("aria-label");
    return label ? `${name}[aria-label="${label}"]` : name;
  };
  const path = (e) => {
    const parts = [];
    for (let n = e; n && n !== document.body && parts.length < 4; n = n.parentElement) {
      parts.unshift(describe(n));
    }
    return parts.join(" > ");
  };
  const shown = (e) => e.checkVisibility({ visibilityProperty: true }) && e.getClientRects().length;
  const scrollers = [document.documentElement];
  for (const e of document.body.querySelectorAll("*")) {
    if (e.matches("input, select, option")) continue;  // a field scrolls its own text
    const x = getComputedStyle(e).overflowX;
    if ((x === "auto" || x === "scroll") && shown(e)) scrollers.push(e);
  }
  const found = [];
  for (const box of scrollers) {
    if (box.scrollWidth <= box.clientWidth + 1) continue;
    const edge = box === document.documentElement
      ? box.clientWidth
      : box.getBoundingClientRect().left + box.clientLeft + box.clientWidth;
    // What sticks out: the innermost elements past the edge, farthest first.
    const out = [];
    for (const e of box.querySelectorAll("*")) {
      if (!shown(e)) continue;
      if (scrollers.some((s) => s !== box && s !== e && box.contains(s) && s.contains(e))) continue;
      const right = e.getBoundingClientRect().right;
      if (right > edge + 1) out.push([e, right]);
    }
    const innermost = out.filter(([e]) => !out.some(([d]) => d !== e && e.contains(d)));
    innermost.sort((a, b) => b[1] - a[1]);
    const named = innermost
      .slice(0, 2)
      .map(([e, right]) => `${path(e)} reaches ${Math.round(right - edge)} px past its edge`);
    found.push(
      `${path(box)} is ${box.scrollWidth} px wide in ${box.clientWidth} px` +
        (named.length ? `: ${named.join("; ")}` : ""),
    );
  }
  return found;
}"""

# Every visible text (a text node's element, a field's value or placeholder, an SVG
# text's fill) whose colour is under 4.5:1 against what is behind it: the backgrounds
# of it and its ancestors, laid over one another from the first opaque one up.
LOW_CONTRAST = """(scope) => {
  const root = scope ? document.querySelector(scope) : document.body;
  const parse = (text) => {
    let m = /^rgba?\\(([\\d.]+),? ([\\d.]+),? ([\\d.]+)(?:[,/] ?([\\d.]+))?\\)$/.exec(text);
    if (m) return [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]];
    m = /^color\\(srgb ([\\d.]+) ([\\d.]+) ([\\d.]+)(?: \\/ ([\\d.]+))?\\)$/.exec(text);
    if (m) return [m[1] * 255, m[2] * 255, m[3] * 255, m[4] === undefined ? 1 : +m[4]];
    throw new Error(`a colour this check cannot read: ${text}`);
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const luminance = (c) => {
    const [r, g, b] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const behind = (e) => {
    const layers = [];
    let opacity = 1;
    for (let n = e; n; n = n.parentElement) {
      const style = getComputedStyle(n);
      opacity *= Number(style.opacity);
      const color = parse(style.backgroundColor);
      if (color[3] > 0) layers.unshift(color);
      if (color[3] >= 1) break;
    }
    return { color: layers.reduce((under, top) => over(top, under), [255, 255, 255]), opacity };
  };
  const describe = (e) => {
    let name = e.tagName.toLowerCase() + (e.id ? `#${e.id}` : "");
    for (const c of e.classList) name += `.${c}`;
    return name;
  };
  const path = (e) => {
    const parts = [];
    for (let n = e; n && n !== document.body && parts.length < 3; n = n.parentElement) {
      parts.unshift(describe(n));
    }
    return parts.join(" > ");
  };
  const texts = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const e = walker.currentNode.parentElement;
    if (walker.currentNode.textContent.trim() && e && !e.closest("option, select, script, style")) {
      texts.push([e, null]);
    }
  }
  const fields = "input:not([type=checkbox], [type=radio]), textarea, select";
  for (const e of root.querySelectorAll(fields)) {
    texts.push([e, null]);
    if (e.placeholder && !e.value) texts.push([e, "::placeholder"]);
  }
  const failures = new Set();
  for (const [e, pseudo] of texts) {
    if (!e.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
    const box = e.getBoundingClientRect();
    if (box.width < 2 || box.height < 2) continue;  // hidden but for screen readers
    const style = getComputedStyle(e, pseudo);
    const fg = parse(e instanceof SVGElement ? style.fill : style.color);
    const { color: bg, opacity } = behind(e);
    const seen = over([fg[0], fg[1], fg[2], fg[3] * opacity], bg);
    const r = ratio(seen, bg);
    if (r < 4.5) {
      const text = (pseudo ? e.placeholder : e.value || e.textContent).trim().replace(/\\s+/g, " ");
      const rgb = (c) => `rgb(${c.map(Math.round).join(", ")})`;
      failures.add(
        `${path(e)}${pseudo || ""} "${text.slice(0, 40)}": ${r.toFixed(2)}:1, ` +
          `${rgb(seen)} on ${rgb(bg)}`,
      );
    }
  }
  return [...failures];
}"""


def orchestrator_key(tenant: Tenant, server: ServerThread) -> str:
    """A key of the tenant's orchestrator, a user of its own with a long name."""
    return server.new_key(tenant.grpc.tenant_id, "operations-" + "o" * 60, "orchestrator")


def seed_every_view(tenant: Tenant, database_url: str) -> str:
    """What every view of the panel shows at its fullest; returns the long key."""
    c = tenant.grpc
    long_key = "customer-preference-for-refund-notices-by-channel-and-language-" + "x" * 40
    upsert(c, long_key, "Email in German, never SMS. " * 12, MANUAL, importance=90)
    upsert(c, "conventions", "Commits use the imperative mood", memory_pb2.MEMORY_SOURCE_AUTO)
    # A value with no space to wrap at.
    upsert(c, "checkout-url", "https://shop.test/checkout?cart=" + "9f8e7d6c5b4a" * 12, MANUAL)
    paris = upsert(c, "office", "Works from the Paris office", MANUAL)
    said = "I moved to Lisbon last spring, and I work remotely."
    c.call(
        c.memory.Memorize,
        pb.MemorizeRequest(
            owner=memory_pb2.MemoryOwner(agent_id=AGENT),
            content="The user lives in Lisbon, not Paris.",
            memory_key="city",
            tags=["profile", "location"],
            supersedes=[paris.id],
            conversation=memory_pb2.Conversation(
                provider="anthropic",
                conversation_id="conv-7",
                messages=[memory_pb2.ConversationMessage(role="user", content=said)],
            ),
            groundings=[
                memory_pb2.Grounding(
                    message_position=0, start_character=11, end_character=17, quote="Lisbon"
                )
            ],
        ),
    )
    # The city's expiry set, then changed: its history says so.
    city = memories_of(c)["city"]
    for days in (30, 60):
        when = timestamp_pb2.Timestamp()
        when.FromDatetime(datetime.now(UTC) + timedelta(days=days))
        c.call(
            c.memory.UpdateMemory,
            pb.UpdateMemoryRequest(
                memory=memory_pb2.Memory(id=city.id, expire_time=when),
                update_mask=field_mask_pb2.FieldMask(paths=["expire_time"]),
            ),
        )
    # A memory past its expiry, listed only on request.
    brief = pb.UpsertMemoryRequest(
        owner=memory_pb2.MemoryOwner(agent_id=AGENT),
        key="standup-room-for-the-weekly-review-of-refund-escalations",
        value="Room 4, " + "second floor " * 8,
        ttl=duration_pb2.Duration(seconds=1),
    )
    c.call(c.memory.UpsertMemory, brief)
    assert wait_until(lambda: brief.key not in memories_of(c), timeout=15)
    write_core_block(c, "Answer in English.\n" * 6, None)
    settings = pb.UpdateAgentSettingsRequest(
        settings=memory_pb2.AgentSettings(
            agent_id=AGENT, memory_enabled=True, active_memory_enabled=True
        )
    )
    c.call(c.memory.UpdateAgentSettings, settings)
    # The last run says when its prompt was rendered: the prompt changes after it.
    rendered = c.call(c.recall.RenderPrompt, recall_pb.RenderPromptRequest(agent_id=AGENT))
    for n in range(3):
        run = pb.RecordRunSessionRequest(
            agent_id=AGENT,
            run_id=f"run-{1040 + n}",
            session_id_before="sess_01JD4Q8ZP3" if n else "",
            session_id_after="sess_01JD4Q8ZP3",
            render_time=rendered.render_time if n == 2 else None,
        )
        c.call(c.memory.RecordRunSession, run)
    record_decision_with_reexamination(c)
    record_passes(
        database_url,
        c.tenant_id,
        Passes(AGENT, "memory-extract:chain:c7d2e91a-triage-and-refunds", 2, 1800, 120, "0.0101"),
        Passes(AGENT, "memory-extract:run-1047", 30, 2600, 90, "0.0044"),
    )
    return long_key


def walk_every_view(
    page: Page, tenant: Tenant, long_key: str, check: Callable[[str], None], orchestrator_key: str
) -> None:
    """Each view and state of the panel in turn, `check` called in each; a dialog's
    name starts with "dialog"."""
    page.goto("/")
    check("sign-in")
    sign_in(page, tenant.editor_key)
    open_agent(page)
    memories = page.locator("#view-memories")
    # An auto-captured row's Edit is disabled, and read like any other text.
    expect(memory_row(page, "conventions").get_by_role("button", name="Edit")).to_be_disabled()
    check("memories")
    memories.get_by_label("Show superseded").check()
    expect(memories.locator(".superseded-label")).to_be_visible()
    check("memories with the superseded")
    memories.get_by_label("Show superseded").uncheck()
    expect(memories.locator(".superseded-label")).to_have_count(0)
    memories.get_by_label("Show expired").check()
    expect(memories.locator(".expired-chip")).to_be_visible()
    check("memories with the expired")
    memories.get_by_label("Show expired").uncheck()
    expect(memories.locator(".expired-chip")).to_have_count(0)

    row = memory_row(page, long_key)
    row.get_by_role("button", name="Edit").click()
    page.get_by_label(f"Value of {long_key}").fill("Email in English.")
    changed_meanwhile(tenant, memories_of(tenant.grpc)[long_key], "Email in French. " * 10)
    page.get_by_label(f"Value of {long_key}").press("Enter")
    expect(row.locator(".conflict-note")).to_be_visible()
    check("a memory's edit conflict")
    row.get_by_role("button", name="Discard mine").click()

    memory_row(page, "city").get_by_role("button", name="Details of city").click()
    expect(page.locator("#memory-detail .grounding-message mark")).to_have_text("Lisbon")
    expect(page.locator("#memory-detail .expiry-change")).to_have_count(2)
    check("dialog: a memory's detail")
    page.locator("#memory-detail").get_by_role("button", name="Close").click()
    memory_row(page, "city").get_by_role("button", name="Delete").click()
    expect(page.locator("#confirm-dialog")).to_be_visible()
    check("dialog: delete confirmation")
    page.locator("#confirm-dialog").get_by_role("button", name="Cancel").click()

    page.get_by_role("tab", name="Blocks").click()
    core = page.locator('article[data-scope="SCOPE_AGENT"][data-label="BLOCK_LABEL_CORE"]')
    expect(core.locator(".block-content")).to_be_visible()
    check("blocks")
    core.get_by_role("button", name="Edit").click()
    core.get_by_role("textbox").fill("Answer in English or German, always. " * 8)
    write_core_block(tenant.grpc, "Answer in English, briefly.\n" * 6, core_block(tenant.grpc))
    core.get_by_role("button", name="Save").click()
    expect(core.get_by_role("button", name="Retry with my text")).to_be_visible()
    check("a block's conflict")
    core.get_by_role("button", name="Discard mine").click()
    core.get_by_role("button", name="History").click()
    expect(core.locator(".versions > li")).to_have_count(2)
    check("a block's history")

    page.get_by_role("tab", name="Prompt & recall").click()
    page.get_by_label("User message (optional)").fill("Where does the user live?")
    page.get_by_role("button", name="Render prompt").click()
    expect(page.locator("#view-preview .prompt-text").first).to_be_visible(
        timeout=WAIT_INDEXED_SECONDS * 1000
    )
    page.get_by_label("Query").fill("refund notices")
    page.get_by_role("button", name="Recall", exact=True).click()
    expect(page.locator("#view-preview .recall-results li").first).to_be_visible()
    expect(page.locator("#view-preview .token-table tfoot")).to_be_visible()
    check("prompt and recall")

    page.get_by_role("tab", name="Session & decisions").click()
    expect(page.locator(".runs-table tbody tr")).to_have_count(3)
    expect(page.locator(".reexamination-list li")).to_have_count(1)
    check("session and decisions")
    page.get_by_role("button", name="Prompt of run run-1042").click()
    expect(page.locator("#run-prompt .diff-added").first).to_be_visible()
    check("a run's prompt then and what changed since")

    page.get_by_role("tab", name="Extraction cost").click()
    expect(page.locator("#view-cost tbody tr")).to_have_count(2)
    check("extraction cost")

    # An orchestrator reading another user's blocks, picked by a long user id.
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, orchestrator_key)
    open_agent(page)
    page.get_by_role("tab", name="Blocks").click()
    page.get_by_label("Whose blocks (user id)").fill("user-1")
    page.get_by_label("Whose blocks (user id)").press("Enter")
    core = page.locator('article[data-scope="SCOPE_AGENT"][data-label="BLOCK_LABEL_CORE"]')
    expect(core.locator(".whose")).to_have_text(f"Agent {AGENT} with user-1")
    check("another user's blocks")


@pytest.fixture(params=["light", "dark"])
def scheme_page(
    request: pytest.FixtureRequest, browser: Browser, server: ServerThread
) -> Iterator[Page]:
    """A page of a system set to light or to dark."""
    context = browser.new_context(
        base_url=f"http://{server.http_address}",
        viewport=WIDTHS["wide"],
        color_scheme=request.param,
    )
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 120)
def test_no_view_is_wider_than_its_frame(
    scheme_page: Page, tenant: Tenant, server: ServerThread
) -> None:
    page = scheme_page
    long_key = seed_every_view(tenant, server.database_url)
    found: list[str] = []

    def check(view: str) -> None:
        for size in WIDTHS.values():
            page.set_viewport_size(size)
            wide = page.evaluate(OVERFLOWING)
            found.extend(f"{view}, {size['width']} px: {p}" for p in wide)
        page.set_viewport_size(WIDTHS["wide"])

    walk_every_view(page, tenant, long_key, check, orchestrator_key(tenant, server))
    assert found == [], "\n".join(found)


@pytest.mark.timeout(WAIT_INDEXED_SECONDS + 120)
def test_every_text_reads_at_4_5_to_1(
    scheme_page: Page, tenant: Tenant, server: ServerThread
) -> None:
    page = scheme_page
    long_key = seed_every_view(tenant, server.database_url)
    found: list[str] = []

    def check(view: str) -> None:
        # Under an open dialog the page is dimmed and out of reach: the dialog is read.
        scope = "dialog[open]" if view.startswith("dialog") else None
        for size in WIDTHS.values():
            page.set_viewport_size(size)
            low = page.evaluate(LOW_CONTRAST, scope)
            found.extend(f"{view}, {size['width']} px: {p}" for p in low)
        page.set_viewport_size(WIDTHS["wide"])

    walk_every_view(page, tenant, long_key, check, orchestrator_key(tenant, server))
    assert found == [], "\n".join(found)


LONG_KEY = "customer-preference-for-refund-notices-by-channel-and-language-" + "x" * 40


@pytest.mark.parametrize("size", WIDTHS.values(), ids=WIDTHS.keys())
def test_a_long_key_ends_in_an_ellipsis_and_shows_whole_on_hover_and_in_its_detail(
    page: Page, tenant: Tenant, size: ViewportSize
) -> None:
    upsert(tenant.grpc, LONG_KEY, "Email in German, never SMS.", MANUAL, importance=50)
    upsert(tenant.grpc, "checkout-url", "https://shop.test/?cart=" + "9f8e7d6c5b4a" * 12, MANUAL)
    upsert(tenant.grpc, "conventions", "Commits use the imperative mood", AUTO)
    page.set_viewport_size(size)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    opener = memory_row(page, LONG_KEY).get_by_role("button", name=f"Details of {LONG_KEY}")
    expect(opener).to_have_attribute("title", LONG_KEY)  # the whole key on hover
    shown = opener.locator(".key")
    assert shown.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"
    assert shown.evaluate("e => e.scrollWidth > e.clientWidth"), "the long key is not cut"

    # Every row's buttons are whole, inside the table's frame and the window.
    frame = page.locator("#view-memories .table-wrap").bounding_box()
    assert frame is not None
    right = min(frame["x"] + frame["width"], size["width"])
    buttons = page.locator("#view-memories tbody .row-actions button").all()
    assert len(buttons) == 9
    for button in buttons:
        box = button.bounding_box()
        assert box is not None
        name = button.get_attribute("aria-label")
        assert frame["x"] <= box["x"], name
        assert box["x"] + box["width"] <= right + 0.5, name
        assert button.evaluate("e => e.scrollWidth <= e.clientWidth"), f"{name} is cut"

    opener.click()
    title = page.locator("#memory-detail-title")
    expect(title).to_have_text(LONG_KEY)
    assert title.evaluate("e => e.scrollWidth <= e.clientWidth"), "the detail cuts the key"


@pytest.mark.parametrize("size", WIDTHS.values(), ids=WIDTHS.keys())
def test_every_tab_is_in_sight_without_scrolling_the_strip(
    page: Page, tenant: Tenant, size: ViewportSize
) -> None:
    page.set_viewport_size(size)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    strip = page.get_by_role("tablist")
    assert strip.evaluate("e => e.scrollWidth <= e.clientWidth"), "the tab strip scrolls"
    frame = strip.bounding_box()
    assert frame is not None
    rows = set()
    for tab in strip.get_by_role("tab").all():
        box = tab.bounding_box()
        assert box is not None
        assert frame["x"] <= box["x"]
        assert box["x"] + box["width"] <= frame["x"] + frame["width"]
        assert box["x"] + box["width"] <= size["width"], f"{tab.text_content()} is cut"
        rows.add(round(box["y"]))
    # One row where they fit; on a phone they wrap onto a second.
    assert len(rows) == (1 if size["width"] == 1280 else 2)


# The buttons of `scope` a notice's box meets, the notice's own Dismiss aside.
COVERED = """(scope) => {
  const notice = document.getElementById("status").getBoundingClientRect();
  const meets = (r) =>
    r.left < notice.right && notice.left < r.right &&
    r.top < notice.bottom && notice.top < r.bottom;
  return [...document.querySelectorAll(`${scope} button`)]
    .filter((b) => !b.closest("#status") && b.checkVisibility({ visibilityProperty: true }))
    .filter((b) => meets(b.getBoundingClientRect()))
    .map((b) => b.getAttribute("aria-label") || b.textContent.trim());
}"""


@pytest.mark.parametrize("size", WIDTHS.values(), ids=WIDTHS.keys())
def test_a_notice_covers_no_button_of_an_open_dialog(
    page: Page, tenant: Tenant, size: ViewportSize
) -> None:
    for n in range(30):  # a page longer than the window
        upsert(tenant.grpc, f"note-{n:02d}", f"note number {n}", MANUAL)
    upsert(tenant.grpc, "city", "The user lives in Lisbon.", MANUAL, importance=90)
    page.set_viewport_size(size)
    sign_in(page, tenant.editor_key)
    open_agent(page)
    memory_row(page, "city").get_by_role("button", name="Details of city").click()
    detail = page.locator("#memory-detail")
    later = datetime.now() + timedelta(days=3)
    detail.get_by_label("Expiry of city").fill(later.strftime("%Y-%m-%dT%H:%M"))
    detail.get_by_role("button", name="Set", exact=True).click()
    notice = page.get_by_role("status")
    expect(notice).to_contain_text("city now expires then.")
    # The notice is a line of the dialog, in view, and lies over none of its buttons.
    expect(detail.get_by_role("status")).to_be_in_viewport()
    assert page.evaluate(COVERED, "dialog[open]") == []

    # Closed, the dialog gives the notice back to the page; a question that opens
    # while it shows starts without it (it said nothing of what is asked).
    detail.get_by_role("button", name="Close").click()
    expect(notice).to_be_visible()
    expect(page.locator("dialog[open]")).to_have_count(0)
    memory_row(page, "note-00").get_by_role("button", name="Delete").click()
    confirm = confirm_dialog(page)
    expect(confirm).not_to_contain_text("city now expires then.")
    confirm.get_by_role("button", name="Cancel").click()
    memory_row(page, "note-00").get_by_role("button", name="Pin").click()
    expect(notice).to_contain_text("Pinned note-00.")

    # On the page it keeps a place of its own at the end: scrolled there, it lies
    # over nothing. The pin reloads the list and focuses the row's button (which
    # scrolls to it) when the reload lands: scrolled to the end again until at rest.
    expect(page.locator("#content > #status")).to_be_visible()
    with contextlib.suppress(PlaywrightTimeoutError):
        page.wait_for_function(
            "() => { window.scrollTo(0, document.documentElement.scrollHeight);"
            f" return ({COVERED})('body').length === 0; }}",
            timeout=30_000,
        )
    assert page.evaluate(COVERED, "body") == []
