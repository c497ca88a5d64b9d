"""The secret detector (detectors/secrets.py), both ways: what it must refuse and what it
must let through. Memory points at where a credential lives; it never holds one."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import threading

import pytest

from agent_memory.detectors.secrets import SecretFinding, find_secrets, redact_secrets
from agent_memory.domain import screening
from agent_memory.domain.errors import InvalidArgument
from agent_memory.domain.screening import refuse_secrets
from tests import secret_corpus

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
# base64 of settings lines: printer=HP-3F;tray=2;..., and one with a password in it
BASE64_SETTINGS = "cHJpbnRlcj1IUC0zRjt0cmF5PTI7ZHVwbGV4PW9uO2NvbG9yPWZhbHNlO3BhcGVyPUE0"
BASE64_LOGIN = "dXNlcj1hbmE7cGFzcz1QYTU1" + "dzByZCEyMDI0O2hvc3Q9ZGIx"

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
    pytest.param(
        f"the kiosk profile is {BASE64_LOGIN}",
        "HIGH_ENTROPY_TOKEN",
        BASE64_LOGIN,
        id="base64-settings-with-a-password",
    ),
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
    pytest.param(f"the printer profile is {BASE64_SETTINGS}", id="base64-settings-line"),
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
    scan = screening.refuse_secrets

    def recording(field: str, text: str) -> None:
        threads.add(threading.current_thread().name)
        scan(field, text)

    monkeypatch.setattr(screening, "refuse_secrets", recording)
    asyncio.run(screening.refuse_secrets_in(texts))
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
        asyncio.run(screening.refuse_secrets_in([("title", "ok"), ("content", long)]))
    assert info.value.violations[0].field == "content"


# -- the labelled corpus (tests/secret_corpus.py) ------------------------------------------

CORPUS_SECRETS = [
    pytest.param(text, id=f"{shape}-{i}") for i, (shape, text) in enumerate(secret_corpus.SECRETS)
]
CORPUS_ORDINARY = [
    pytest.param(text, id=f"{kind}-{i}") for i, (kind, text) in enumerate(secret_corpus.ORDINARY)
]


def test_the_corpus_is_large_and_varied() -> None:
    assert len(secret_corpus.SECRETS) >= 60
    assert len({shape for shape, _ in secret_corpus.SECRETS}) >= 20
    assert len(secret_corpus.ORDINARY) >= 60
    texts = [text for _, text in secret_corpus.SECRETS + secret_corpus.ORDINARY]
    assert len(set(texts)) == len(texts), "every text is there once"


@pytest.mark.parametrize("text", CORPUS_SECRETS)
def test_every_corpus_secret_is_refused_without_being_echoed(text: str) -> None:
    kinds = [f.kind for f in find_secrets(text)]
    assert kinds
    assert all(re.fullmatch(r"[A-Z][A-Z0-9_]*", k) for k in kinds)
    error = refusal("value", text)
    said = " ".join([error.message, *error.metadata.values(), error.violations[0].description])
    assert text not in said
    # Nor any piece of it: the words redaction takes away are the secret's.
    redacted = redact_secrets(text)
    taken = [w.strip("\"'.,;()") for w in text.split() if w not in redacted.split()]
    # (PEM armour words such as PRIVATE are the kind's name, not the secret.)
    pieces = [
        w for w in taken if len(w) >= 4 and w not in redacted and not re.fullmatch(r"[A-Z-]+", w)
    ]
    assert pieces
    assert not [w for w in pieces if w in said]


@pytest.mark.parametrize("text", CORPUS_SECRETS)
def test_every_corpus_secret_is_found_inside_longer_text(text: str) -> None:
    assert find_secrets(f"Notes from the deploy on 2024-05-01.\n{text}\nAsk ops before rotating.")
    assert find_secrets(f"from the runbook: {text} (ask ops first)")


@pytest.mark.parametrize("text", CORPUS_ORDINARY)
def test_every_corpus_ordinary_text_is_allowed(text: str) -> None:
    assert find_secrets(text) == []
    refuse_secrets("value", text)


@pytest.mark.parametrize("text", CORPUS_SECRETS)
def test_redaction_leaves_no_secret(text: str) -> None:
    redacted = redact_secrets(text)
    assert "[REDACTED:" in redacted
    assert find_secrets(redacted) == []
    assert redact_secrets(redacted) == redacted


@pytest.mark.parametrize("text", CORPUS_ORDINARY)
def test_redaction_leaves_ordinary_text_alone(text: str) -> None:
    assert redact_secrets(text) == text


def test_on_the_held_back_part_nothing_ordinary_is_refused_and_most_secrets_are() -> None:
    # Measured, not tuned to (bench/secret_detector.py prints it): a floor, so that a
    # change that loses ground on text the rules were not written from is seen.
    flagged = [t for _, t in secret_corpus.HELD_BACK_ORDINARY if find_secrets(t)]
    assert flagged == []
    found = [t for _, t in secret_corpus.HELD_BACK_SECRETS if find_secrets(t)]
    assert len(found) / len(secret_corpus.HELD_BACK_SECRETS) >= 0.9


def test_a_token_named_in_a_transcript_never_reaches_the_model() -> None:
    transcript = "user: the api token 5f4dcc3b5aa765d61d8327deb882cf99 stopped working"
    sent = redact_secrets(transcript)
    assert "5f4dcc3b5aa765d61d8327deb882cf99" not in sent
    assert sent.startswith("user: the api token [REDACTED:")


# -- the shapes that used to be stored, and the ones that used to be refused --------------

HEROKU_KEY = "0b5d3f6e-8c2a-" + "4f1e-9d7b-3a6c5e4f2b1d"
BASIC_CREDENTIALS = "dXNlcjpw" + "YXNzd29yZDEyMw=="  # base64 of user:password123

NAMED_SECRETS = [
    pytest.param(
        "password = Hunter2Winter!", "PASSWORD", "Hunter2Winter!", id="password-assignment"
    ),
    pytest.param(
        "The prod DB password is Tr0ub4dor&3", "PASSWORD", "Tr0ub4dor&3", id="password-prose"
    ),
    pytest.param("DATABASE_PASSWORD=s3cr3t-value", "PASSWORD", "s3cr3t-value", id="env-password"),
    pytest.param(
        f"Authorization: Basic {BASIC_CREDENTIALS}",
        "BASIC_AUTH_HEADER",
        BASIC_CREDENTIALS,
        id="basic-auth-header",
    ),
    pytest.param("redis://:pw@host:6379/0", "PASSWORD_IN_URL", ":pw@", id="url-empty-user"),
    pytest.param("mysql -u root -pS3cret", "PASSWORD", "S3cret", id="mysql-p"),
    pytest.param(
        "curl -u admin:Sup3rSecret https://api.example.com/v1/status",
        "PASSWORD",
        "Sup3rSecret",
        id="curl-u",
    ),
    pytest.param(
        f"HEROKU_API_KEY={HEROKU_KEY}", "SECRET_ASSIGNMENT", HEROKU_KEY, id="uuid-api-key"
    ),
    pytest.param(
        "Hasło aplikacji do Gmaila (dla Outlooka w pracy): vhsn qpla tmwc ryex — zwykłe nie",
        "PASSWORD",
        "vhsn qpla tmwc ryex",
        id="app-password-after-an-aside",
    ),
    pytest.param(
        "Alkalmazásspecifikus jelszó az iCloud naptárhoz: mhkr-twpz-dfqa-xeno",
        "PASSWORD",
        "mhkr-twpz-dfqa-xeno",
        id="app-password-in-hyphenated-groups",
    ),
]


@pytest.mark.parametrize(("text", "kind", "secret"), NAMED_SECRETS)
def test_named_shapes_are_refused_and_redacted(text: str, kind: str, secret: str) -> None:
    assert kind in [f.kind for f in find_secrets(text)]
    error = refusal("value", text)
    assert secret not in " ".join([error.message, *error.metadata.values()])
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert find_secrets(redacted) == []


def test_redaction_keeps_the_text_around_the_secret() -> None:
    assert redact_secrets("password = Hunter2Winter! (rotated monthly)") == (
        "password = [REDACTED:PASSWORD] (rotated monthly)"
    )
    assert redact_secrets("redis://:pw@host:6379/0") == (
        "redis://:[REDACTED:PASSWORD_IN_URL]@host:6379/0"
    )
    assert redact_secrets("") == ""


def test_redaction_removes_a_whole_private_key_block() -> None:
    redacted = redact_secrets(f"the deploy key:\n{PEM_KEY}\nkeep it safe")
    assert redacted == "the deploy key:\n[REDACTED:PRIVATE_KEY]\nkeep it safe"


def test_overlapping_findings_become_one_placeholder() -> None:
    # A GitHub token is both a known format and a value given to a credential name.
    redacted = redact_secrets(f"GITHUB_TOKEN={GITHUB_TOKEN}")
    assert redacted.count("[REDACTED:") == 1
    assert GITHUB_TOKEN not in redacted


NAMED_ORDINARY = [
    pytest.param("postgres://app:${DB_PASSWORD}@db/prod", id="env-reference-in-url"),
    pytest.param(
        "https://docs.google.com/document/d/1aBcD3fGhIjKlMnOpQrStUvWxYz0123456789AbCdEf/edit",
        id="google-docs-url",
    ),
    pytest.param(
        "sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC", id="sri-hash"
    ),
    pytest.param("QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG", id="ipfs-cid-v0"),
    pytest.param("bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi", id="ipfs-cid-v1"),
    pytest.param("kTq3bXz9WZNq2v0cP8hYdR1sLmF2", id="firebase-uid"),
    pytest.param("user_2NNEqL2nrIRdJ194ndJqAHwEfxC", id="clerk-user-id"),
    # Four short words after a password word are no app password.
    pytest.param("password reset instructions: send them your mail", id="four-short-words"),
    pytest.param("App password notes: this will work fine", id="four-short-words-after-app"),
]


@pytest.mark.parametrize("text", NAMED_ORDINARY)
def test_named_ordinary_shapes_are_allowed(text: str) -> None:
    assert find_secrets(text) == []


PLACEHOLDERS = [
    "${DB_PASSWORD}",
    "$DB_PASSWORD",
    "%DB_PASSWORD%",
    "{{ secrets.DB_PASSWORD }}",
    "<password>",
    "****",
    "xxx",
    "...",
    "changeme",
    "[REDACTED:PASSWORD]",
]


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
@pytest.mark.parametrize(
    "template",
    [
        "password = {}",
        "DATABASE_PASSWORD={}",
        'api_key: "{}"',
        "postgres://app:{}@db/prod",
        "curl -u admin:{} https://api.example.com",
        "Authorization: Bearer {}",
    ],
)
def test_pointers_and_placeholders_are_not_secrets(template: str, placeholder: str) -> None:
    text = template.format(placeholder)
    assert find_secrets(text) == [], text


# -- staying linear ----------------------------------------------------------------------------

# Inputs that made patterns backtrack: a keyword then thousands of spaces was cubic in
# one of detect-secrets' own patterns; repeated prefixes were quadratic in others.
ADVERSARIAL = {
    "keyword-then-spaces": "api_key" + " " * 20_000 + "x",
    "password-then-spaces": "password" + " " * 20_000 + "x",
    "slashes-before-a-token-name": "//a" * 10_000,
    "scheme-separators": "://" * 10_000,
    "repeated-key-prefix": "sk-" * 10_000,
    "repeated-jwt-prefix": "eyJ" * 10_000,
    "repeated-prose": "password for " * 3_000,
    "repeated-assignments": "key=" * 8_000,
    "repeated-credential-names": "token=" * 5_000,
    "repeated-password-labels": "pw: " * 8_000,
    "one-long-token": "aB3" * 10_000,
    "repeated-commands": "curl mysql -p " * 2_000,
    "key-blocks-without-end": "-----BEGIN RSA PRIVATE KEY-----" * 1_000,
}


# Linear scanning takes tens of milliseconds here; the backtracking this guards against
# took minutes. The bound is the test's own timeout, far above any noise of the machine.
@pytest.mark.timeout(60)
@pytest.mark.parametrize("text", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_long_adversarial_inputs_are_scanned_quickly(text: str) -> None:
    find_secrets(text)
    redact_secrets(text)
