"""HTTP as HTTP clients expect it, over real sockets: ETag on what they read,
If-Match on what they change (412 when stale), If-None-Match (304), field masks and
enum values in the forms people write, and a 401 that says how to authenticate."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import httpx
import pytest

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2, memory_service_pb2
from tests.support import ServerThread, error_details

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def http(database_url: str) -> Iterator[ServerThread]:
    settings = Settings(http_listen="127.0.0.1:0", embedder="none")
    with ServerThread(database_url, settings=settings) as running:
        yield running


@pytest.fixture
def api(http: ServerThread) -> Iterator[httpx.Client]:
    key = http.new_key(f"tenant-{uuid.uuid4().hex[:10]}", "user-1")
    with httpx.Client(
        base_url=f"http://{http.http_address}/v1",
        headers={"authorization": f"Bearer {key}"},
        timeout=30,
    ) as client:
        yield client


def reason(response: httpx.Response) -> str:
    infos = [d for d in response.json()["details"] if d["@type"].endswith("ErrorInfo")]
    return str(infos[0]["reason"])


def made(api: httpx.Client, key: str = "tone", value: str = "warm") -> dict[str, str]:
    response = api.post("/agents/coder/memories", json={"key": key, "value": value})
    assert response.status_code == 200, response.text
    memory: dict[str, str] = response.json()["memory"]
    return memory


def test_a_read_answers_the_etag_and_a_matching_if_none_match_is_304(api: httpx.Client) -> None:
    memory = made(api)
    read = api.get(f"/memories/{memory['id']}")
    assert read.headers["etag"] == memory["etag"] == 'W/"1"'
    unchanged = api.get(f"/memories/{memory['id']}", headers={"if-none-match": memory["etag"]})
    assert unchanged.status_code == 304
    assert unchanged.content == b""
    assert unchanged.headers["etag"] == memory["etag"]
    other = api.get(f"/memories/{memory['id']}", headers={"if-none-match": 'W/"7", "x"'})
    assert other.status_code == 200
    assert other.json()["memory"]["value"] == "warm"


def test_a_stale_if_match_is_412_and_changes_nothing(api: httpx.Client) -> None:
    memory = made(api)
    first = api.patch(
        f"/memories/{memory['id']}",
        params={"updateMask": "value"},
        headers={"if-match": memory["etag"]},
        json={"value": "cool"},
    )
    assert first.status_code == 200, first.text
    assert first.headers["etag"] == 'W/"2"'
    stale = api.patch(
        f"/memories/{memory['id']}",
        params={"updateMask": "value"},
        headers={"if-match": memory["etag"]},
        json={"value": "hot"},
    )
    assert stale.status_code == 412
    assert reason(stale) == "ETAG_MISMATCH"
    gone = api.delete(f"/memories/{memory['id']}", headers={"if-match": memory["etag"]})
    assert gone.status_code == 412
    assert api.get(f"/memories/{memory['id']}").json()["memory"]["value"] == "cool"
    deleted = api.delete(f"/memories/{memory['id']}", headers={"if-match": 'W/"2"'})
    assert deleted.status_code == 200, deleted.text
    assert api.get(f"/memories/{memory['id']}").status_code == 404


def test_if_match_is_refused_where_nothing_compares_it(api: httpx.Client) -> None:
    refused = api.get("/agents/coder/memories", headers={"if-match": 'W/"1"'})
    assert refused.status_code == 400
    assert reason(refused) == "IF_MATCH_NOT_SUPPORTED"
    memory = made(api)
    both = api.patch(
        f"/memories/{memory['id']}",
        params={"updateMask": "value", "etag": 'W/"1"'},
        headers={"if-match": 'W/"9"'},
        json={"value": "x"},
    )
    assert both.status_code == 400
    assert reason(both) == "IF_MATCH_CONTRADICTS"
    # An empty etag the request states is an etag too, and not the header's.
    empty = api.delete(
        f"/memories/{memory['id']}", params={"etag": ""}, headers={"if-match": memory["etag"]}
    )
    assert empty.status_code == 400
    assert reason(empty) == "IF_MATCH_CONTRADICTS"
    assert api.get(f"/memories/{memory['id']}").status_code == 200


def test_an_update_mask_takes_the_paths_its_error_lists(api: httpx.Client) -> None:
    memory = made(api)
    for mask in ("expire_time,value", "expireTime,value"):
        changed = api.patch(
            f"/memories/{memory['id']}",
            params={"updateMask": mask},
            json={"value": f"via {mask}", "expireTime": "2030-01-01T00:00:00Z"},
        )
        assert changed.status_code == 200, changed.text
        assert changed.json()["memory"]["value"] == f"via {mask}"
        assert changed.json()["memory"]["expireTime"].startswith("2030-01-01")


def test_without_a_mask_the_fields_the_body_holds_change_whatever_their_values(
    api: httpx.Client,
) -> None:
    created = api.post(
        "/agents/coder/memories",
        json={"key": "deploy", "value": "npm run deploy", "pinned": True, "importance": 80},
    )
    assert created.status_code == 200, created.text
    memory = created.json()["memory"]
    unpinned = api.patch(f"/memories/{memory['id']}", json={"pinned": False})
    assert unpinned.status_code == 200, unpinned.text
    assert "pinned" not in unpinned.json()["memory"]  # false: proto JSON leaves it out
    assert unpinned.json()["memory"]["importance"] == 80
    zero = api.patch(f"/memories/{memory['id']}", json={"importance": 0, "tags": []})
    assert zero.status_code == 200, zero.text
    assert "importance" not in zero.json()["memory"]
    read = api.get(f"/memories/{memory['id']}").json()["memory"]
    assert ("pinned" in read, "importance" in read) == (False, False)
    assert read["value"] == "npm run deploy"
    # The memory as read, sent back changed: its output-only fields and the id the path
    # gives are no fields to change, and the etag it holds guards nothing.
    read.update(value="npm run deploy:prod", pinned=True)
    whole = api.patch(f"/memories/{memory['id']}", json=read)
    assert whole.status_code == 200, whole.text
    assert whole.json()["memory"]["value"] == "npm run deploy:prod"
    assert whole.json()["memory"]["pinned"] is True
    # A mask given is the mask: the body's other fields are left as they are.
    masked = api.patch(
        f"/memories/{memory['id']}",
        params={"updateMask": "importance"},
        json={"importance": 5, "pinned": False},
    )
    assert masked.status_code == 200, masked.text
    assert masked.json()["memory"]["importance"] == 5
    assert masked.json()["memory"]["pinned"] is True
    # A body that holds no field to change still names none.
    empty = api.patch(f"/memories/{memory['id']}", json={})
    assert empty.status_code == 400
    assert "update_mask" in empty.text


def test_without_a_mask_a_setting_sent_as_false_is_turned_off(api: httpx.Client) -> None:
    both = api.patch(
        "/agents/coder/settings", json={"memoryEnabled": True, "activeMemoryEnabled": True}
    )
    assert both.status_code == 200, both.text
    off = api.patch("/agents/coder/settings", json={"memoryEnabled": False})
    assert off.status_code == 200, off.text
    settings = api.get("/agents/coder/settings").json()["settings"]
    assert "memoryEnabled" not in settings
    assert settings["activeMemoryEnabled"] is True


def test_over_grpc_a_request_without_a_mask_still_takes_only_the_fields_set(
    http: ServerThread,
) -> None:
    with http.client() as client:
        created = client.call(
            client.memory.UpsertMemory,
            memory_service_pb2.UpsertMemoryRequest(
                owner=memory_pb2.MemoryOwner(agent_id="coder"), key="k", value="v", pinned=True
            ),
        )
        memory_id = created.memory.id
        with pytest.raises(grpc.RpcError) as refused:
            client.call(
                client.memory.UpdateMemory,
                memory_service_pb2.UpdateMemoryRequest(
                    memory=memory_pb2.Memory(id=memory_id, pinned=False)
                ),
            )
        assert error_details(refused.value).violations.keys() == {"update_mask"}
        read = client.call(
            client.memory.GetMemory, memory_service_pb2.GetMemoryRequest(id=memory_id)
        )
        assert read.memory.pinned is True


def test_a_stale_etag_parameter_is_412_as_a_stale_if_match_is(api: httpx.Client) -> None:
    memory = made(api)
    changed = api.patch(
        f"/memories/{memory['id']}", params={"etag": memory["etag"]}, json={"value": "cool"}
    )
    assert changed.status_code == 200, changed.text
    stale = memory["etag"]
    by_parameter = api.patch(
        f"/memories/{memory['id']}", params={"etag": stale}, json={"value": "hot"}
    )
    by_header = api.patch(
        f"/memories/{memory['id']}", headers={"if-match": stale}, json={"value": "hot"}
    )
    for refused in (by_parameter, by_header):
        assert refused.status_code == 412, refused.text
        assert reason(refused) == "ETAG_MISMATCH"
    for refused in (
        api.delete(f"/memories/{memory['id']}", params={"etag": stale}),
        api.delete(f"/memories/{memory['id']}", headers={"if-match": stale}),
    ):
        assert refused.status_code == 412, refused.text
        assert reason(refused) == "ETAG_MISMATCH"
    assert api.get(f"/memories/{memory['id']}").json()["memory"]["value"] == "cool"


def test_a_stale_block_etag_is_412_wherever_the_request_states_it(api: httpx.Client) -> None:
    written = api.post("/blocks/core:write", json={"agentId": "coder", "content": "Ana, SRE"})
    assert written.status_code == 200, written.text
    tag = written.headers["etag"]
    again = api.post(
        "/blocks/core:write", json={"agentId": "coder", "content": "Ana, SRE, Lisbon", "etag": tag}
    )
    assert again.status_code == 200, again.text
    in_body = api.post(
        "/blocks/core:write", json={"agentId": "coder", "content": "lost", "etag": tag}
    )
    in_query = api.delete("/blocks/core", params={"agentId": "coder", "etag": tag})
    for refused in (in_body, in_query):
        assert refused.status_code == 412, refused.text
        assert reason(refused) == "BLOCK_CONFLICT"
    # Without an etag, a write that finds the block there conflicts: no precondition
    # the request stated, 409.
    created_again = api.post("/blocks/core:write", json={"agentId": "coder", "content": "x"})
    assert created_again.status_code == 409, created_again.text
    current = api.get("/blocks/core", params={"agentId": "coder"}).json()["block"]
    assert current["content"] == "Ana, SRE, Lisbon"


def test_enum_values_take_their_short_forms(api: httpx.Client) -> None:
    written = api.post("/blocks/core:write", json={"scope": "user", "content": "Prefers tea"})
    assert written.status_code == 200, written.text
    block = api.get("/blocks/core", params={"scope": "user"})
    assert block.status_code == 200, block.text
    assert block.json()["block"]["label"] == "BLOCK_LABEL_CORE"
    auto = api.post(
        "/agents/coder/memories", json={"key": "stack", "value": "Next.js", "source": "auto"}
    )
    assert auto.json()["memory"]["source"] == "MEMORY_SOURCE_AUTO"
    unknown = api.post("/agents/coder/memories", json={"key": "k", "value": "v", "source": "x"})
    assert unknown.status_code == 400
    assert "source: must be one of" in unknown.text


def test_a_401_says_how_to_authenticate(http: ServerThread) -> None:
    refused = httpx.get(f"http://{http.http_address}/v1/agents/coder/memories")
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == 'Bearer realm="agent-memory"'


def test_a_block_answers_its_etag_and_if_match_compares_it(api: httpx.Client) -> None:
    written = api.post("/blocks/core:write", json={"agentId": "coder", "content": "Ana, SRE"})
    assert written.status_code == 200, written.text
    tag = written.headers["etag"]
    assert tag == written.json()["block"]["etag"]
    # The agent id says whose block it is: no scope needed.
    read = api.get("/blocks/core", params={"agentId": "coder"})
    assert read.status_code == 200, read.text
    assert read.headers["etag"] == tag
    assert read.json()["block"]["content"] == "Ana, SRE"
    unchanged = api.get("/blocks/core", params={"agentId": "coder"}, headers={"if-none-match": tag})
    assert unchanged.status_code == 304
    changed = api.post(
        "/blocks/core:write",
        headers={"if-match": tag},
        json={"agentId": "coder", "content": "Ana, SRE, Lisbon"},
    )
    assert changed.status_code == 200, changed.text
    assert changed.headers["etag"] != tag
    stale = api.post(
        "/blocks/core:write",
        headers={"if-match": tag},
        json={"agentId": "coder", "content": "lost update"},
    )
    assert stale.status_code == 412
    assert reason(stale) == "BLOCK_CONFLICT"
    # "*": the block as it is now, if there is one.
    anyway = api.post(
        "/blocks/core:write",
        headers={"if-match": "*"},
        json={"agentId": "coder", "content": "Ana, SRE, Porto"},
    )
    assert anyway.status_code == 200, anyway.text
    absent = api.post(
        "/blocks/core:write",
        headers={"if-match": "*"},
        json={"agentId": "nobody", "content": "x"},
    )
    assert absent.status_code == 412
    gone_stale = api.delete("/blocks/core", params={"agentId": "coder"}, headers={"if-match": tag})
    assert gone_stale.status_code == 412
    current = api.get("/blocks/core", params={"agentId": "coder"})
    assert current.json()["block"]["content"] == "Ana, SRE, Porto"
    gone = api.delete(
        "/blocks/core", params={"agentId": "coder"}, headers={"if-match": current.headers["etag"]}
    )
    assert gone.status_code == 200, gone.text
    assert api.get("/blocks/core", params={"agentId": "coder"}).status_code == 404
