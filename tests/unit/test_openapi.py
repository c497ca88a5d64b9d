"""The OpenAPI document: valid 3.1, one operation per route, comments carried over."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator, validate

from agent_memory.api.field_rules import NOT_BLANK, WORD_SPACING
from agent_memory.api.stored_text import LINE_BREAK_CHARACTERS
from agent_memory.domain.memorize import MAX_TAGS, TAG_INPUT_MAX_CHARS
from agent_memory.domain.memory import OWNER_ID_MAX_CHARS
from agent_memory.domain.text_rules import CONTROL_CHARACTERS, INVISIBLE_CHARACTERS
from agent_memory.http import openapi
from agent_memory.http.openapi import PathNameError, openapi_document
from agent_memory.http.routes import Route, routes
from agent_memory.service.memories import MAX_CHAIN

VERBS = {"get", "put", "post", "delete", "patch"}
BRACES = re.compile(r"\{([^}]*)\}")


def doc_path(route: Route) -> str:
    """The route's path in the document: each variable named by its field's last name."""
    return re.sub(r"\{(?:[^}=]*\.)?([^}.=]+)(?:=[^}]*)?\}", r"{\1}", route.template)


def resolve(document: dict[str, Any], ref: str) -> Any:
    """The value a local ``$ref`` points at; KeyError when it points nowhere."""
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from refs(item)


def operation(verb: str, path: str) -> dict[str, Any]:
    found: dict[str, Any] = openapi_document()["paths"][path][verb]
    return found


def parameters(verb: str, path: str, where: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in operation(verb, path).get("parameters", []) if p["in"] == where}


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_document_is_valid_openapi_3_1_and_plain_json() -> None:
    document = openapi_document()
    assert document["openapi"] == "3.1.0"
    validate(document, cls=OpenAPIV31SpecValidator)
    assert json.loads(json.dumps(document)) == document


def test_info_names_the_package_version_and_the_error_format() -> None:
    info = openapi_document()["info"]
    assert info["title"] == "agent-memory"
    assert info["version"] == importlib.metadata.version("agent-memory")
    assert "google.rpc.Status" in info["description"]
    assert "x-tenant-id" in info["description"]


def test_every_route_is_an_operation_and_nothing_else_is_under_v1() -> None:
    paths = openapi_document()["paths"]
    expected = {(doc_path(route), route.verb) for route in routes()}
    expected.add(("/v1/openapi.json", "get"))
    documented = {
        (path, verb)
        for path, item in paths.items()
        if path.startswith("/v1/")
        for verb in item
        if verb in VERBS
    }
    assert documented == expected
    for route in routes():
        service = route.method.containing_service.name
        operation_id = paths[doc_path(route)][route.verb]["operationId"]
        assert operation_id.startswith(f"{service}_{route.method.name}")
        assert paths[doc_path(route)][route.verb]["tags"] == [service]


def test_operation_ids_are_unique() -> None:
    ids = [
        op["operationId"] for item in openapi_document()["paths"].values() for op in item.values()
    ]
    assert len(ids) == len(set(ids))


def test_every_ref_resolves_to_a_component() -> None:
    document = openapi_document()
    found = list(refs(document))
    assert found
    for ref in found:
        assert ref.startswith(("#/components/schemas/", "#/components/responses/")), ref
        assert isinstance(resolve(document, ref), dict), ref


def test_every_path_variable_is_a_required_path_parameter() -> None:
    for path, item in openapi_document()["paths"].items():
        variables = BRACES.findall(path)
        assert len(variables) == len(set(variables)), path
        for verb in item:
            declared = [p for p in operation(verb, path).get("parameters", []) if p["in"] == "path"]
            assert sorted(p["name"] for p in declared) == sorted(variables), (verb, path)
            assert all(p["required"] is True for p in declared)


def test_no_two_paths_differ_only_in_parameter_names() -> None:
    # OpenAPI 3.1: templated paths of one hierarchy with other parameter names MUST NOT
    # both exist; generators and linters refuse the document.
    shapes = Counter(BRACES.sub("{}", path) for path in openapi_document()["paths"])
    assert [shape for shape, count in shapes.items() if count > 1] == []


def test_path_parameters_are_named_by_the_last_segment_and_say_the_field() -> None:
    paths = openapi_document()["paths"]
    for route in routes():
        path = doc_path(route)
        assert "." not in "".join(BRACES.findall(path)), path
        declared = parameters(route.verb, path, "path")
        for variable in route.variables:
            name = variable.rpartition(".")[2]
            assert declared[name]["description"].startswith(f"Sets `{variable}`."), path
        if route.body and route.variables:
            assert paths[path][route.verb]["requestBody"]["description"].startswith("The path sets")
    update = parameters("patch", "/v1/memories/{id}", "path")["id"]
    assert update["description"].startswith("Sets `memory.id`.")
    get = parameters("get", "/v1/memories/{id}", "path")["id"]
    assert get["description"].startswith("Sets `id`.")


def test_two_variables_ending_in_one_name_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    clash = dataclasses.replace(
        routes()[0],
        template="/v1/owners/{owner.id}/memories/{memory.id}",
        variables=("owner.id", "memory.id"),
    )
    monkeypatch.setattr(openapi, "routes", lambda: (clash,))
    with pytest.raises(PathNameError, match=r"\{id\}"):
        openapi_document.__wrapped__()


def test_paths_differing_only_in_parameter_names_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = dataclasses.replace(
        routes()[0], verb="get", template="/v1/things/{thing_id}", variables=("thing_id",)
    )
    second = dataclasses.replace(
        first, verb="delete", template="/v1/things/{other.name}", variables=("other.name",)
    )
    monkeypatch.setattr(openapi, "routes", lambda: (first, second))
    with pytest.raises(PathNameError, match="differ only in parameter names"):
        openapi_document.__wrapped__()
    again = dataclasses.replace(second, verb="get", template="/v1/things/{x.thing_id}")
    monkeypatch.setattr(openapi, "routes", lambda: (first, again))
    with pytest.raises(PathNameError, match="are both GET"):
        openapi_document.__wrapped__()


def test_method_and_field_comments_become_descriptions() -> None:
    upsert = operation("post", "/v1/agents/{agent_id}/memories")
    assert flat(upsert["description"]).startswith(
        "Creates or updates the memory with the owner and key; says whether it created."
    )
    assert "SECRET_IN_VALUE" in upsert["description"]
    assert upsert["summary"] == (
        "Creates or updates the memory with the owner and key; says whether it created."
    )
    memory = openapi_document()["components"]["schemas"]["agentmemory.v1.Memory"]
    assert memory["description"] == "A scoped key/value memory."
    assert "Pinned memories sort first." in memory["properties"]["pinned"]["description"]
    tags = {tag["name"]: tag["description"] for tag in openapi_document()["tags"]}
    assert "Scoped key/value memories" in tags["MemoryService"]


def test_enum_values_and_oneofs_are_explained() -> None:
    schemas = openapi_document()["components"]["schemas"]
    source = flat(schemas["agentmemory.v1.MemorySource"]["description"])
    assert "`MEMORY_SOURCE_MEMORIZE`: Written by the Memorize tool." in source
    owner = schemas["agentmemory.v1.MemoryOwner"]["properties"]
    assert "One of kind: agentId, workspaceId." in owner["agentId"]["description"]
    # proto3 optional is a oneof in the descriptors, but no choice for the caller.
    assert "One of" not in schemas["agentmemory.v1.Memory"]["properties"]["confidence"].get(
        "description", ""
    )


def test_path_parameters_carry_the_bound_fields_schema_and_comment() -> None:
    owner = parameters("get", "/v1/agents/{agent_id}/memories", "path")["agent_id"]
    # An agent's name, as the domain takes it (name_violations): the same limits.
    assert owner["schema"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": OWNER_ID_MAX_CHARS,
        "pattern": f"^{WORD_SPACING}[^/{CONTROL_CHARACTERS}{INVISIBLE_CHARACTERS}]*$",
        "not": {"enum": [".", ".."]},
    }
    assert owner["description"].startswith("Sets `owner.agent_id`.")
    assert "agent id" in owner["description"]
    label = parameters("get", "/v1/blocks/{label}", "path")["label"]
    # A required enum: its unset value is no value to send.
    assert "BLOCK_LABEL_CORE" in label["schema"]["enum"]
    assert "BLOCK_LABEL_UNSPECIFIED" not in label["schema"]["enum"]
    memory = parameters("get", "/v1/memories/{id}", "path")["id"]
    assert memory["schema"] == {"type": "string", "format": "uuid"}


@pytest.mark.parametrize(
    ("verb", "path", "operation_id"),
    [
        ("get", "/v1/agents/{agent_id}/memories", "MemoryService_ListMemories_ForAgent"),
        ("post", "/v1/agents/{agent_id}/memories", "MemoryService_UpsertMemory_ForAgent"),
        (
            "get",
            "/v1/workspaces/{workspace_id}/memories",
            "MemoryService_ListMemories_ForWorkspace",
        ),
        (
            "post",
            "/v1/workspaces/{workspace_id}/memories",
            "MemoryService_UpsertMemory_ForWorkspace",
        ),
        ("get", "/v1/memories/{id}", "MemoryService_GetMemory"),
        ("get", "/v1/agents/{agent_id}/memories:lookup", "MemoryService_GetMemory_ForAgent"),
        (
            "get",
            "/v1/workspaces/{workspace_id}/memories:lookup",
            "MemoryService_GetMemory_ForWorkspace",
        ),
        ("patch", "/v1/memories/{id}", "MemoryService_UpdateMemory"),
        ("post", "/v1/memories/{id}:pin", "MemoryService_PinMemory"),
        ("delete", "/v1/memories/{id}", "MemoryService_DeleteMemory"),
        ("post", "/v1/recall", "RecallService_Recall"),
        ("post", "/v1/agents/{agent_id}:renderPrompt", "RecallService_RenderPrompt"),
    ],
)
def test_the_product_routes_call_their_rpcs(verb: str, path: str, operation_id: str) -> None:
    documented = operation(verb, path)
    assert documented["operationId"] == operation_id
    assert {"200", "default"} <= set(documented["responses"])


def test_list_memories_takes_paging_filter_order_and_what_to_show_in_the_query_not_the_owner() -> (
    None
):
    query = parameters("get", "/v1/agents/{agent_id}/memories", "query")
    assert set(query) == {
        "pageSize",
        "pageToken",
        "showExpired",
        "showSuperseded",
        "filter",
        "orderBy",
        "asOfTime",
    }
    # AIP-158: a negative page size is refused.
    assert query["pageSize"]["schema"] == {"type": "integer", "format": "int32", "minimum": 0}
    query = parameters("get", "/v1/workspaces/{workspace_id}/memories", "query")
    assert set(query) == {
        "pageSize",
        "pageToken",
        "showExpired",
        "showSuperseded",
        "filter",
        "orderBy",
        "asOfTime",
    }
    assert "requestBody" not in operation("get", "/v1/agents/{agent_id}/memories")


def test_update_memory_sends_the_memory_as_body_and_the_mask_in_the_query() -> None:
    update = operation("patch", "/v1/memories/{id}")
    body = update["requestBody"]
    # Nothing of it is required: the body may be left out (a mask that clears a field).
    assert body["required"] is False
    # The memory's schema with nothing required (a partial update sends what it
    # changes), less the id the path gives.
    memory = openapi_document()["components"]["schemas"]["agentmemory.v1.Memory"]
    assert memory["required"] == ["key", "value"]
    expected = {k: v for k, v in memory.items() if k != "required"}
    expected["properties"] = {k: v for k, v in memory["properties"].items() if k != "id"}
    assert body["content"]["application/json"]["schema"] == expected
    # Query parameters go by their proto JSON names.
    query = parameters("patch", "/v1/memories/{id}", "query")
    assert set(query) == {"updateMask", "etag"}
    assert query["updateMask"]["schema"]["type"] == "string"


@pytest.mark.parametrize(
    "path",
    [
        "/v1/memories/{id}",
        "/v1/agents/{agent_id}/settings",
        "/v1/workspaces/{workspace_id}/settings",
    ],
)
def test_an_update_mask_is_optional_and_said_to_default_to_the_body_fields(path: str) -> None:
    mask = parameters("patch", path, "query")["updateMask"]
    # The server takes an update without one: the fields of its body are the mask.
    assert not mask.get("required", False)
    description = " ".join(mask["description"].split())
    assert description.startswith("Optional. Without it, the mask is the fields the body holds")
    assert "Required." not in description
    # Given, it still names a field to change.
    pattern = re.compile(mask["schema"]["pattern"])
    assert pattern.match("pinned" if "memories" in path else "expirySlide")
    # A memory's update must change something; settings' may change nothing.
    assert ("EMPTY_FIELD_MASK" in description) == ("memories" in path)


def test_an_etag_parameter_is_said_to_fail_as_if_match_does() -> None:
    for verb, path in [
        ("patch", "/v1/memories/{id}"),
        ("delete", "/v1/memories/{id}"),
        ("delete", "/v1/blocks/{label}"),
    ]:
        etag = parameters(verb, path, "query")["etag"]
        assert "412" in etag["description"], (verb, path)
        assert "412" in operation(verb, path)["responses"]


def test_a_whole_body_route_takes_the_request_and_no_query() -> None:
    upsert = operation("post", "/v1/agents/{agent_id}/memories")
    schema = upsert["requestBody"]["content"]["application/json"]["schema"]
    # The request's schema, less the owner the path gives.
    component = openapi_document()["components"]["schemas"]["agentmemory.v1.UpsertMemoryRequest"]
    properties = {k: v for k, v in component["properties"].items() if k != "owner"}
    assert schema == {**component, "properties": properties, "required": ["key", "value"]}
    assert schema["additionalProperties"] is False
    # A oneof holds one member at most.
    assert schema["not"] == {"required": ["expireTime", "ttl"]}
    learning = operation("post", "/v1/learnings")["requestBody"]["content"]["application/json"]
    assert learning["schema"]["$ref"] == "#/components/schemas/agentmemory.v1.RecordLearningRequest"
    for route in routes():
        if route.body == "*":
            assert not parameters(route.verb, doc_path(route), "query"), route.template


def test_repeated_query_values_are_exploded_arrays() -> None:
    chain = parameters("get", "/v1/learnings", "query")["chainAgentIds"]
    # Required: at least one, none empty.
    assert chain["required"] is True
    assert chain["schema"]["minItems"] == 1
    assert chain["schema"]["maxItems"] == MAX_CHAIN
    assert chain["schema"]["items"]["minLength"] == 1
    assert chain["explode"] is True


def test_recall_streams_ndjson_and_unary_calls_answer_json() -> None:
    ok = operation("post", "/v1/recall")["responses"]["200"]
    assert set(ok["content"]) == {"application/x-ndjson", "application/json"}
    item = {"$ref": "#/components/schemas/agentmemory.v1.RecallResponse"}
    assert ok["content"]["application/x-ndjson"]["schema"] == item
    # For a caller that accepts JSON only: the whole stream as one array.
    assert ok["content"]["application/json"]["schema"] == {"type": "array", "items": item}
    assert "per line" in ok["description"]
    pin = operation("post", "/v1/memories/{id}:pin")["responses"]["200"]
    assert set(pin["content"]) == {"application/json"}


def test_errors_are_google_rpc_status() -> None:
    document = openapi_document()
    error = resolve(document, operation("get", "/v1/memories/{id}")["responses"]["default"]["$ref"])
    status = resolve(document, error["content"]["application/json"]["schema"]["$ref"])
    assert status["properties"]["code"]["type"] == "integer"
    assert status["properties"]["message"]["type"] == "string"
    details = status["properties"]["details"]
    assert details["type"] == "array"
    assert details["items"]["properties"]["@type"] == {"type": "string"}


def test_memory_schema_follows_the_proto_json_mapping() -> None:
    document = openapi_document()
    memory = document["components"]["schemas"]["agentmemory.v1.Memory"]["properties"]
    assert memory["pinned"]["type"] == "boolean"
    assert memory["createdAt"]["type"] == "string"
    assert memory["createdAt"]["format"] == "date-time"
    assert memory["createdAt"]["readOnly"] is True
    source = resolve(document, memory["source"]["$ref"])
    assert source["type"] == "string"
    assert "MEMORY_SOURCE_MANUAL" in source["enum"]
    # A write's text holds one line (stored_text), and a tag at most 256 characters.
    assert memory["tags"] == {
        "type": "array",
        "items": {
            "type": "string",
            "maxLength": TAG_INPUT_MAX_CHARS,
            "pattern": f"^[^\\x00{LINE_BREAK_CHARACTERS}]*$",
        },
        "maxItems": MAX_TAGS,
        "description": (
            "Optional. Tags, lowercase slugs of letters and digits in any script\n"
            "joined by dashes (Memorize and UpdateMemory slug what they are given; a tag\n"
            "of punctuation or symbols alone slugs to nothing and is dropped)."
        ),
    }
    # A fact may be a paragraph: no line rule.
    assert memory["value"]["pattern"] == f"^(?:{NOT_BLANK}[^\\x00]*)?$"  # not blank
    assert resolve(document, memory["metadata"]["$ref"])["type"] == "object"
    assert "created_at" not in memory
    block = document["components"]["schemas"]["agentmemory.v1.Block"]["properties"]
    assert "string" in block["version"]["type"]


def test_bearer_auth_everywhere_but_the_health_check_and_this_document() -> None:
    document = openapi_document()
    bearer = document["components"]["securitySchemes"]["bearer"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")
    assert document["security"] == [{"bearer": []}]
    health = operation("get", "/healthz")
    assert health["security"] == []
    assert {"200", "503"} <= set(health["responses"])
    assert operation("get", "/v1/openapi.json")["security"] == []
    for route in routes():
        assert "security" not in operation(route.verb, doc_path(route))


def test_every_operation_id_says_what_it_is_and_the_document_names_its_server() -> None:
    document = openapi_document()
    ids = [op["operationId"] for item in document["paths"].values() for op in item.values()]
    assert not [i for i in ids if re.search(r"_\d+$", i)]
    assert document["servers"] == [{"url": "/", "description": "this agent-memory server"}]


def test_required_and_output_only_fields_are_marked_as_their_annotations_say() -> None:
    schemas = openapi_document()["components"]["schemas"]
    assert schemas["agentmemory.v1.UpsertMemoryRequest"]["required"] == ["owner", "key", "value"]
    assert schemas["agentmemory.v1.Memory"]["properties"]["id"]["readOnly"] is True
    assert "readOnly" not in schemas["agentmemory.v1.Memory"]["properties"]["value"]
    # The path gives the owner: the body of the agent route need not.
    body = operation("post", "/v1/agents/{agent_id}/memories")["requestBody"]["content"]
    assert body["application/json"]["schema"]["required"] == ["key", "value"]


def test_every_field_documented_required_or_output_only_is_annotated_so() -> None:
    from agent_memory.http.openapi import OUTPUT_ONLY, REQUIRED, field_behaviors

    comments = openapi._source().comments
    for route in routes():
        for message in (route.request, route.response):
            for field in _fields_under(message):
                said = comments.get(field.full_name, "")
                behaviors = field_behaviors(field)
                if field.containing_oneof is None or len(field.containing_oneof.fields) == 1:
                    assert said.startswith("Required.") == (REQUIRED in behaviors), field.full_name
                assert said.startswith("Output only.") == (OUTPUT_ONLY in behaviors), (
                    field.full_name
                )


def _fields_under(message: Any, seen: set[str] | None = None) -> Iterator[Any]:
    seen = set() if seen is None else seen
    if message.full_name in seen or message.full_name.startswith("google."):
        return
    seen.add(message.full_name)
    for field in message.fields:
        yield field
        if field.message_type is not None:
            yield from _fields_under(field.message_type, seen)


def test_etags_and_their_preconditions_are_declared_where_the_server_honours_them() -> None:
    read = operation("get", "/v1/memories/{id}")
    assert read["responses"]["200"]["headers"]["ETag"]["schema"] == {"type": "string"}
    assert "304" in read["responses"]
    assert "If-None-Match" in parameters("get", "/v1/memories/{id}", "header")
    for verb, path in (
        ("patch", "/v1/memories/{id}"),
        ("delete", "/v1/memories/{id}"),
        ("post", "/v1/blocks/{label}:write"),
        ("delete", "/v1/blocks/{label}"),
    ):
        assert "If-Match" in parameters(verb, path, "header"), (verb, path)
        assert "412" in operation(verb, path)["responses"], (verb, path)
    # Where no etag is compared, none is offered.
    listing = operation("get", "/v1/agents/{agent_id}/memories")
    assert "412" not in listing["responses"]
    assert parameters("get", "/v1/agents/{agent_id}/memories", "header") == {}


def test_an_upsert_names_only_the_sources_it_may_write() -> None:
    upsert = openapi_document()["components"]["schemas"]["agentmemory.v1.UpsertMemoryRequest"]
    assert upsert["properties"]["source"]["enum"] == [
        "MEMORY_SOURCE_UNSPECIFIED",
        "MEMORY_SOURCE_MANUAL",
        "MEMORY_SOURCE_AUTO",
        "MEMORY_SOURCE_DIRECTOR",
    ]


def test_a_duration_is_within_protobufs_range() -> None:
    upsert = openapi_document()["components"]["schemas"]["agentmemory.v1.UpsertMemoryRequest"]
    pattern = re.compile(upsert["properties"]["ttl"]["pattern"])
    for taken in ["1s", "3600s", "1.5s", "-2s", "315576000000s", "0.000000001s"]:
        assert pattern.match(taken), taken
    for refused in ["1", "s", "315576000001s", "99999999999999s", "1.0000000001s", "1m"]:
        assert not pattern.match(refused), refused


def test_free_json_holds_no_nul_as_stored() -> None:
    schemas = openapi_document()["components"]["schemas"]
    memorize = schemas["agentmemory.v1.MemorizeRequest"]["properties"]
    assert memorize["metadata"]["$ref"] == "#/components/schemas/google.protobuf.Struct"
    struct = schemas["google.protobuf.Struct"]
    assert struct["propertyNames"] == {"pattern": "^[^\\x00]*$"}
    value = schemas["google.protobuf.Value"]
    # No type: each keyword holds for its own (a string's pattern, an array's items).
    assert "type" not in value
    assert value["pattern"] == "^[^\\x00]*$"
    assert value["items"] == value["additionalProperties"]
    assert value["items"] == {"$ref": "#/components/schemas/google.protobuf.Value"}


def test_a_body_of_another_media_type_is_documented_where_a_body_is_taken() -> None:
    for route in routes():
        responses = operation(route.verb, doc_path(route))["responses"]
        if route.body:
            refused = responses["415"]
            assert "UNSUPPORTED_MEDIA_TYPE" in refused["description"]
            assert refused["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/google.rpc.Status"
            }
        else:
            assert "415" not in responses, route.template


def test_the_document_gives_one_value_to_each_message_the_parser_takes_as_one() -> None:
    """One list of the well-known messages whose JSON is a scalar, in proto_json: the
    document's schemas name the same ones."""
    from agent_memory.http import openapi
    from agent_memory.proto_json import SCALAR_MESSAGES

    assert set(openapi._TEXT_TYPES) == SCALAR_MESSAGES
