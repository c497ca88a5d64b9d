"""A server whose extraction model is a scripted fake Messages API on loopback, for
the modules whose tests extract and then read what was written: ``fake`` (the script,
cleared around the test), ``srv`` (the module's server), ``c`` (a client of it) and
``agent`` (a fresh agent with memory on). A module that needs them otherwise defines
its own of the same names.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from agent_memory.config import Settings
from agentmemory.v1 import memory_pb2
from agentmemory.v1 import memory_service_pb2 as pb
from tests.fake_anthropic import FakeAnthropic, model_on_loopback
from tests.support import Client, ServerThread


@pytest.fixture(scope="module")
def scripted_model() -> Iterator[FakeAnthropic]:
    """One fake Messages API for the module; the SDK finds it through the environment."""
    with model_on_loopback() as f:
        yield f


@pytest.fixture
def fake(scripted_model: FakeAnthropic) -> Iterator[FakeAnthropic]:
    """The module's scripted model, with no reply left from another test and no request
    seen before this one."""
    scripted_model.replies.clear()
    scripted_model.requests.clear()
    scripted_model.count_requests.clear()
    scripted_model.counted_tokens = None
    yield scripted_model
    scripted_model.replies.clear()


@pytest.fixture(scope="module")
def srv(scripted_model: FakeAnthropic, database_url: str) -> Iterator[ServerThread]:
    """The module's server; no SDK retries, so one scripted reply is one call."""
    with ServerThread(database_url, settings=Settings(extraction_sdk_retries=0)) as running:
        yield running


@pytest.fixture
def c(srv: ServerThread) -> Iterator[Client]:
    with srv.client() as client:
        yield client


@pytest.fixture
def agent(c: Client) -> str:
    """A fresh agent with memory on, so each test sees only its own memories."""
    agent_id = f"agent-{uuid.uuid4().hex[:8]}"
    c.call(
        c.memory.UpdateAgentSettings,
        pb.UpdateAgentSettingsRequest(
            settings=memory_pb2.AgentSettings(agent_id=agent_id, memory_enabled=True)
        ),
    )
    return agent_id
