from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, fact, running_fake
from tests.support import ServerThread

TRANSCRIPT = "user: how do we deploy?\nassistant: " + "We deploy with make release. " * 20


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with running_fake() as f:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield f


def test_a_pass_writes_auto_facts(fake: FakeAnthropic, database_url: str) -> None:
    srv = ServerThread(database_url, settings=Settings(extraction_sdk_retries=0))
    srv.start()
    try:
        with srv.client() as c:
            c.call(c.memory.UpdateAgentSettings, pb.UpdateAgentSettingsRequest(
                settings=memory_pb2.AgentSettings(agent_id="a", memory_enabled=True)))
            fake.facts(fact("Deploy Command!", "Deploy with make release"))
            reply = c.call(c.memory.ExtractMemories, pb.ExtractMemoriesRequest(
                agent_id="a", session_id="s1", transcript=TRANSCRIPT))
            assert reply.outcome == memory_pb2.EXTRACTION_OUTCOME_COMPLETED, reply
            assert [m.key for m in reply.written] == ["auto:deploy-command"]
            assert reply.synthetic_session_id == "memory-extract:s1"
            assert reply.usage.input_tokens == 1200
            usage = c.call(c.memory.GetUsage, pb.GetUsageRequest(
                synthetic_session_id_prefix="memory-extract:"))
            assert usage.total_input_tokens == 1200
            headers = fake.requests[0]["_headers"]
            assert "test-key" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    finally:
        srv.stop()
