"""The secret detector (domain/secrets.py), both ways: what it must refuse and what it
must let through. Memory points at where a credential lives; it never holds one."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import pytest

from agent_memory.domain import secrets
from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.secrets import SecretFinding, find_secrets, refuse_secrets

# Built from pieces so no complete credential sits in the source as one literal.
PEM_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7Zq3vQx9" + "Lm2Kp8Rt4Wn6Yb1Hc5Jd\n"
    "-----END RSA PRIVATE KEY-----"
)
PEM_OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAA" + "BG5vbmUAAAAEbm9uZQ\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
AWS_KEY_ID = "AKIA" + "4HFT2QWRZ7ZXCVBN"
ANTHROPIC_KEY = "sk-ant-api03-" + "Q7vX2mK9pL4rT8wZ1nB6" + "cY3hJ5sD0fG2aE7uI9oR"
GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ" + "5rS7tU9vW1xY3zA5"
BEARER = "Authorization: Bearer " + "abc123DEF456ghi789JKL012mno345"
PASSWORD_URL = "postgres://admin:" + "hunter22@db:5432/prod"
RANDOM_TOKEN = "Xk9mQ2vLp7RtZ4wN" + "8bYc3HfJ6sDg"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzQ3kLm"
BASE64_TOKEN = "Zm9vYmFyQmF6UXV4" + "MTIzNDU2Nzg5MA=="

SECRETS = [
    pytest.param(PEM_KEY, "PRIVATE_KEY", "MIIEowIBAAKCAQEA7Zq3vQx9", id="pem-rsa"),
    pytest.param(PEM_OPENSSH, "PRIVATE_KEY", "b3BlbnNzaC1rZXktdjEAAAAA", id="pem-openssh"),
    pytest.param(f"prod uses {AWS_KEY_ID} for S3", "AWS_ACCESS_KEY", AWS_KEY_ID, id="aws-key-id"),
    pytest.param(f"key: {ANTHROPIC_KEY}", "PROVIDER_API_KEY", ANTHROPIC_KEY, id="anthropic"),
    pytest.param(f"token {GITHUB_TOKEN}", "GITHUB_TOKEN", GITHUB_TOKEN, id="github-ghp"),
    pytest.param(f"call it with {BEARER}", "BEARER_TOKEN", BEARER.split()[-1], id="bearer"),
    pytest.param(f"db is {PASSWORD_URL}", "PASSWORD_IN_URL", "hunter22", id="password-in-url"),
    pytest.param(
        f"the session token is {RANDOM_TOKEN}", "HIGH_ENTROPY_TOKEN", RANDOM_TOKEN, id="entropy"
    ),
    pytest.param(
        f"aws_secret_access_key = {AWS_SECRET}", "HIGH_ENTROPY_TOKEN", AWS_SECRET, id="aws-secret"
    ),
    pytest.param(f"cookie {BASE64_TOKEN}", "HIGH_ENTROPY_TOKEN", BASE64_TOKEN, id="base64-token"),
]

BENIGN = [
    pytest.param("fixed in 3f786850e387550fdab836ed7e6dc881de23001b", id="git-sha"),
    pytest.param("the agent is 3f2b8c1e-9d4a-4b7e-8f6a-2c1d0e9b7a54", id="uuid"),
    pytest.param(
        "image sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        id="sha256-digest",
    ),
    pytest.param(
        "docs at https://docs.example.com/v2/guides/deploy?section=rollback#step-3",
        id="url-without-credentials",
    ),
    pytest.param("postgres://db.internal:5432/prod is the primary", id="db-url-without-password"),
    pytest.param("the key lives in AWS Secrets Manager under prod/stripe", id="where-key-lives"),
    pytest.param("password is in 1Password vault infra", id="where-password-lives"),
    pytest.param("credentials come from the env var ANTHROPIC_API_KEY", id="env-var-name"),
    pytest.param(
        "the handler is agent_memory.service.memories.Memories.record_learning",
        id="dotted-python-path",
    ),
    pytest.param(
        "see HttpRequestHandlerFactory and AbstractSingletonProxyFactoryBean", id="camel-case"
    ),
    pytest.param("ListMemoryEventsRequest, Http2ServerConnectionHandler", id="camel-case-short"),
    pytest.param("replication is set by S3BucketReplicationConfiguration", id="camel-digit-s3"),
    pytest.param("the OAuth2AuthorizationCodeGrantFlow class", id="camel-digit-oauth2"),
    pytest.param("hashing lives in Sha256DigestCalculatorImpl", id="camel-digit-sha256"),
    pytest.param("MEMORY_ARCHIVAL_MAX_CHARS and memory_extract_max_facts", id="snake-case"),
    pytest.param(
        "On 2024-03-15 we moved 3 services to 12 nodes; p99 latency fell from 840ms to "
        "120ms by Q2 2024, build 1234567 at 2025-01-02T03:04:05.123456Z.",
        id="prose-numbers-dates",
    ),
    pytest.param("config in /etc/myapp/config.yaml and ~/.aws/credentials", id="file-paths"),
    pytest.param("Deploy with npm run deploy from the repo root", id="plain-fact"),
]


def refusal(field: str, text: str) -> InvalidArgument:
    with pytest.raises(InvalidArgument) as info:
        refuse_secrets(field, text)
    return info.value


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_secrets_are_found_by_kind(text: str, kind: str, secret: str) -> None:
    kinds = [f.kind for f in find_secrets(text)]
    assert kind in kinds
    assert len(kinds) == len(set(kinds)), "each kind is reported once"


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_secrets_are_refused_without_being_echoed(text: str, kind: str, secret: str) -> None:
    error = refusal("value", text)
    assert error.reason == "SECRET_IN_VALUE"
    assert kind in error.metadata["kinds"].split(", ")
    assert error.metadata["field"] == "value"
    assert [(v.field, v.reason) for v in error.violations] == [("value", "SECRET_IN_VALUE")]
    said = " ".join([error.message, *error.metadata.values(), error.violations[0].description])
    assert secret not in said
    assert text not in said


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_secrets_are_found_inside_longer_text(text: str, kind: str, secret: str) -> None:
    wrapped = f"Notes from the deploy on 2024-05-01.\n{text}\nAsk ops before rotating."
    assert kind in [f.kind for f in find_secrets(wrapped)]


def test_a_kind_found_twice_is_named_once() -> None:
    second = "AKIA" + "Z7QW2ERT5YUI8OPL"
    kinds = [f.kind for f in find_secrets(f"{AWS_KEY_ID} and {second}")]
    assert kinds.count("AWS_ACCESS_KEY") == 1


def test_several_kinds_are_all_named() -> None:
    kinds = refusal("value", f"{AWS_KEY_ID} then {PASSWORD_URL}").metadata["kinds"].split(", ")
    assert {"AWS_ACCESS_KEY", "PASSWORD_IN_URL"} <= set(kinds)


def test_a_finding_holds_the_kind_only() -> None:
    assert [f.name for f in dataclasses.fields(SecretFinding)] == ["kind"]
    for finding in find_secrets(f"{ANTHROPIC_KEY} {BEARER}"):
        assert ANTHROPIC_KEY not in repr(finding)


def test_the_field_path_is_reported() -> None:
    error = refusal("groundings[3].quote", PASSWORD_URL)
    assert error.violations[0].field == "groundings[3].quote"
    assert error.metadata["field"] == "groundings[3].quote"


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_values_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
    refuse_secrets("value", text)


def test_empty_text_has_no_secrets() -> None:
    assert find_secrets("") == []


def scanned_on(texts: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The threads the texts were scanned on, seen from an event loop."""
    threads: set[str] = set()
    scan = secrets.refuse_secrets

    def recording(field: str, text: str) -> None:
        threads.add(threading.current_thread().name)
        scan(field, text)

    monkeypatch.setattr(secrets, "refuse_secrets", recording)
    asyncio.run(secrets.refuse_secrets_in(texts))
    return threads


def test_short_texts_are_scanned_on_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scanned_on([("key", "k"), ("value", "a short fact")], monkeypatch) == {"MainThread"}


def test_long_texts_are_scanned_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    long = "An ordinary line about the harbor and its ferries.\n" * 100
    threads = scanned_on([("content", long)], monkeypatch)
    assert threads
    assert "MainThread" not in threads


def test_a_secret_in_a_long_text_is_refused_and_named_by_its_field() -> None:
    long = "An ordinary line about the harbor.\n" * 100 + "sk-ant-" + "a" * 40
    with pytest.raises(InvalidArgument) as info:
        asyncio.run(secrets.refuse_secrets_in([("title", "ok"), ("content", long)]))
    assert info.value.violations[0].field == "content"
