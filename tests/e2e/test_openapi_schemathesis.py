"""The OpenAPI document against the server it describes, over real HTTP.

Schemathesis reads the document the server serves and sends every operation
requests the document allows and requests it forbids, with API keys required as in
production: the server must answer each within the document (status, media type,
body schema, headers), accept what the document allows and refuse what it forbids.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from schemathesis import engine
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events
from schemathesis.engine.recorder import ScenarioRecorder
from schemathesis.openapi import from_url

from agent_memory.config import Settings
from tests.support import ServerThread

pytestmark = pytest.mark.e2e

SEED = 20260401
DOCUMENT = "/v1/openapi.json"
EXAMPLES_PER_OPERATION = 10


@pytest.fixture(scope="module")
def keyed_server(database_url: str) -> Iterator[ServerThread]:
    settings = Settings(http_listen="127.0.0.1:0", embedder="none", expiry_sweep_seconds=3600)
    with ServerThread(database_url, settings=settings) as running:
        yield running


# What a request the document allows may still meet: refusals no JSON Schema can
# state, by the reason the 400 gives (its field violations', or its ErrorInfo's when it
# names no field), each with why. Every other 400 to an allowed request is a finding.
BEYOND_SCHEMA: dict[str, str] = {
    "SECRET_IN_VALUE": "a credential is found by detectors, not by a pattern",
    "INSTRUCTION_NOT_FACT": "an instruction is told by its words, not by a pattern",
    "RESERVED_KEY": "reserved key prefixes hold in any case or width, after invisible characters",
    "INVALID_PAGE_TOKEN": "a page token is one an earlier page returned",
    "INVALID_FILTER": "a filter has a grammar (AIP-160)",
    "CARD_TYPE_NOT_REGISTERED": "a decision names a card type registered before",
    "IF_MATCH_CONTRADICTS": "the If-Match header and the etag parameter must agree",
    "INVALID_PERIOD": "a period ends after it starts, also against the stored start",
    "HISTORY_PRUNED": "an instant within the history kept, whose start moves with the clock",
}
# ... and by field and reason, where the reason also covers what the document states.
BEYOND_SCHEMA_AT: dict[tuple[str, str], str] = {
    ("ttl", "OUT_OF_RANGE"): "a duration's range (more than 0, at most 3650 days)",
    ("expire_time", "OUT_OF_RANGE"): "an instant in the future: later than now",
    ("as_of_time", "IN_THE_FUTURE"): "an instant that has passed: earlier than now",
    ("memory.expire_time", "OUT_OF_RANGE"): "an instant in the future: later than now",
    ("render_time", "IN_THE_FUTURE"): "an instant that has passed: not later than now",
    ("etag", "CONTRADICTS"): "an etag and expected_updated_at must name one write",
    ("session_id", "REQUIRED"): "one of session_id or chain_id: a choice between two fields",
    ("scope", "INVALID_SCOPE"): "a block's scope, or an agent id instead: two parameters",
    ("agent_id", "NOT_ALLOWED"): "a user block has no agent id: two parameters",
    ("workspace_id", "NOT_ALLOWED"): "an agent's or a user's block has no workspace id, a "
    "workspace's no agent id: two parameters",
    ("order_by", "INVALID_ORDER"): "each field named once: a list without repeats, which a "
    "pattern cannot say",
    ("key", "REQUIRED"): "a memory read by the owner its path names needs its key, and one "
    "read by id none: the method's request, shared by its routes, cannot require it",
    ("id", "NOT_ALLOWED"): "a memory by its id, or by its owner and key: parameters that "
    "exclude each other, which OpenAPI cannot say of query parameters",
    ("agent_id", "REQUIRED"): "an agent block has an agent id: two parameters",
    ("memory.key", "REQUIRED"): "a field the update mask names is one the body holds",
    ("memory.value", "REQUIRED"): "a field the update mask names is one the body holds",
    ("update_mask", "EMPTY_FIELD_MASK"): "without an update mask, the body holds a field to "
    "change: a query parameter against the body",
    ("decision.action", "NOT_ALLOWED"): "one of the registered card type's actions",
    ("suggested_action", "NOT_ALLOWED"): "one of the registered card type's actions",
    ("end_time", "OUT_OF_RANGE"): "not before start_time: one parameter against another",
    # A field ending in "." stands for every field under it.
    ("groundings.", "OUT_OF_RANGE"): "positions against each other and the conversation",
    ("groundings.", "REQUIRED"): "a raw event index with a raw span, a field with another",
    ("conversation", "REQUIRED"): "groundings need the conversation they point into",
}


def beyond_schema(status: int, body: bytes) -> bool:
    """Whether a 400 refuses only what :data:`BEYOND_SCHEMA` says no schema states."""
    if status != 400:
        return False
    try:
        details = json.loads(body)["details"]
    except (ValueError, KeyError, TypeError):
        return False
    refused = [
        (violation["field"], violation.get("reason", ""))
        for detail in details
        if detail["@type"].endswith("BadRequest")
        for violation in detail.get("fieldViolations", [])
    ]
    if not refused:
        refused = [("", d.get("reason", "")) for d in details if d["@type"].endswith("ErrorInfo")]
    field_free = [(re.sub(r"\[\d+\]", "", field), reason) for field, reason in refused]
    return bool(refused) and all(
        reason in BEYOND_SCHEMA
        or any(
            why == reason and (field == at or (at.endswith(".") and field.startswith(at)))
            for at, why in BEYOND_SCHEMA_AT
        )
        for field, reason in field_free
    )


def findings(recorder: ScenarioRecorder) -> list[str]:
    """Each failed check of a scenario: the operation, the check, what it says, the
    request as curl and what the server answered."""
    found = []
    for case_id, nodes in recorder.checks.items():
        interaction = recorder.interactions.get(case_id)
        response = interaction.response if interaction is not None else None
        for node in nodes:
            if node.failure_info is None:
                continue
            body = (response.content or b"") if response is not None else b""
            if (
                node.name == "positive_data_acceptance"
                and response is not None
                and beyond_schema(response.status_code, body)
            ):
                continue
            failure = node.failure_info.failure
            answer = ""
            if response is not None:
                answer = f"\n  -> {response.status_code} {body[:600].decode(errors='replace')}"
            found.append(
                f"{recorder.label} [{node.name}] {failure.title}: {failure.message}"
                f"\n  {node.failure_info.code_sample}{answer}"
            )
    return found


@pytest.mark.timeout(600)
def test_every_operation_answers_as_the_document_says(keyed_server: ServerThread) -> None:
    key = keyed_server.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
    base = f"http://{keyed_server.http_address}"
    # The key as the document's bearer scheme, so a request sent without it is one.
    auth = {"auth": {"openapi": {"bearer": {"bearer": key}}}}
    schema = from_url(base + DOCUMENT, config=SchemathesisConfig.from_dict(auth))
    config = schema.config
    config.update(base_url=base, workers=1)
    config.seed = SEED
    # Any HTTP server takes headers it does not know (proxies add them): no extra ones.
    config.generation.update(
        max_examples=EXAMPLES_PER_OPERATION, no_shrink=True, allow_extra_parameters=False
    )
    config.phases.update(phases=["examples", "fuzzing"])
    config.checks.update(included_check_names=["all"])
    # A precondition the server's state does not meet (412: a card type not registered)
    # is no refusal of the request's form, as 404 and 409 are not.
    accepted = config.checks.positive_data_acceptance
    accepted.expected_statuses = [*accepted.expected_statuses, "412"]
    failures: list[str] = []
    errors: list[str] = []
    cases: Counter[str] = Counter()
    phases: Counter[str] = Counter()
    for event in engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            cases[event.recorder.label] += len(event.recorder.interactions)
            phases[event.phase.name] += len(event.recorder.interactions)
            failures += findings(event.recorder)
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.info.format()}")
        elif isinstance(event, events.FatalError):
            raise event.exception
    assert not errors, "\n".join(errors)
    assert not failures, f"{len(failures)} findings:\n" + "\n".join(failures)
    # Every operation of the document was called (but the document itself: schemathesis
    # leaves out the operation it read the document from).
    operations = {
        f"{verb.upper()} {path}"
        for path, item in schema.raw_schema["paths"].items()
        for verb in item
        if path != DOCUMENT
    }
    assert operations <= set(cases), sorted(operations - set(cases))
    print(f"{sum(cases.values())} requests over {len(operations)} operations", phases)
