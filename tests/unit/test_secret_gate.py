"""The shortcut before the secret finders (``may_hold_secret``): a text it turns away
must be one in which no finder finds anything. Every pattern's matches, generated from
the pattern itself, and every secret of the corpus must pass it; ordinary prose should
not."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agent_memory.domain import secrets
from agent_memory.domain.secrets import may_hold_secret
from tests import secret_corpus
from tests.unit.test_secrets import NAMED_SECRETS, SECRETS


def found_without_gate(text: str) -> list[str]:
    """What the finders find in ``text`` when all of them run."""
    lower = text.lower()
    return [span.kind for finder in secrets._FINDERS for span in finder(text, lower)]


# Every pattern whose matches are findings (or, for a credential-named setting, the
# only place one can be); each match of one must pass the gate.
OWN_PATTERNS = {
    "provider keys": secrets._PROVIDER_KEYS,
    "private key block": secrets._PRIVATE_KEY_BLOCK,
    "authorization": secrets._AUTHORIZATION,
    "basic": secrets._BASIC,
    "bearer": secrets._BEARER,
    "password in url": secrets._PASSWORD_IN_URL,
    "curl user": secrets._CURL_USER,
    "mysql password": secrets._MYSQL_PASSWORD,
    "sshpass": secrets._SSHPASS,
    "password flag": secrets._PASSWORD_FLAG,
    "password prose": secrets._PASSWORD_PROSE,
    "passphrase prose": secrets._PASSPHRASE_PROSE,
    "pin prose": secrets._PIN_PROSE,
    "login pair": secrets._LOGIN_PAIR,
    "named token": secrets._NAMED_TOKEN,
    "token prose": secrets._TOKEN_PROSE,
    "random token": secrets._TOKEN,
}
DETECTOR_PATTERNS = {
    f"{type(d.detector).__name__} {i}": regex
    for d in secrets._detectors()
    for i, (regex, _) in enumerate(d.patterns)
}
PATTERNS = {**OWN_PATTERNS, **DETECTOR_PATTERNS}

around = st.text(max_size=12)


def test_every_detector_has_its_triggers() -> None:
    """A detector without triggers would turn the gate off for every text."""
    names = {type(d.detector).__name__ for d in secrets._detectors()}
    assert names <= set(secrets.DETECTOR_TRIGGERS)
    known = {*secrets._CASED_TRIGGERS, *secrets._FOLDED_TRIGGERS, secrets.TOKEN_RUN}
    for name in names:
        assert set(secrets.DETECTOR_TRIGGERS[name]) <= known, name
    assert secrets._triggers() is not None
    # A word that may name a credential's setting is looked for as such in the text.
    assert set(secrets._NAME_GATE) <= set(secrets._FOLDED_TRIGGERS)


def test_an_unknown_detector_turns_the_gate_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "DETECTOR_TRIGGERS", {})
    secrets._triggers.cache_clear()
    try:
        assert may_hold_secret("nothing to see here")
    finally:
        monkeypatch.undo()
        secrets._triggers.cache_clear()


@pytest.mark.parametrize("name", list(PATTERNS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_every_pattern_passes_the_gate(name: str, data: st.DataObject) -> None:
    pattern = PATTERNS[name]
    text = data.draw(st.from_regex(pattern))
    assume(pattern.search(text) is not None)
    assert may_hold_secret(text), text


NAME_WORDS = "|".join(secrets._NAME_GATE)


@settings(max_examples=200, deadline=None)
@given(
    before=around,
    name=st.from_regex(
        rf"(?i)[A-Za-z_][\w.\-]{{0,8}}(?:{NAME_WORDS})[\w.\-]{{0,8}}", fullmatch=True
    ),
    sep=st.sampled_from([":=", "=>", "==", "=", ":", "->"]),
    spaces=st.sampled_from(["", " ", "\t", "  "]),
    value=st.from_regex(r"[A-Za-z0-9!#%&*+\-/@^_~.,]{1,24}", fullmatch=True),
    after=around,
)
def test_every_credential_named_setting_passes_the_gate(
    before: str, name: str, sep: str, spaces: str, value: str, after: str
) -> None:
    text = f"{before} {name}{spaces}{sep}{spaces}{value}{after}"
    if found_without_gate(text):
        assert may_hold_secret(text), text


CASE_FOLDS = ["\u0130", "\u0131", "\u017f", "\u212a"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "pass",
                    "word",
                    "pw",
                    "token",
                    "secret",
                    "key",
                    "api",
                    ": ",
                    "=",
                    " is ",
                    "Bearer ",
                    "Authorization",
                    "login",
                    "pin",
                    "-",
                    "--",
                    " ",
                    "\n",
                    "Tr0ub4dor&3",
                    "hunter2",
                    "abc123DEF456ghi789JKL012",
                    "\u2014",
                ]
            ),
            st.sampled_from(CASE_FOLDS),
            st.text(max_size=6),
        ),
        max_size=10,
    ).map("".join)
)
def test_whatever_the_finders_find_passes_the_gate(text: str) -> None:
    if found_without_gate(text):
        assert may_hold_secret(text), text


SECRET_TEXTS = (
    [text for _, text in secret_corpus.SECRETS]
    + [p.values[0] for p in SECRETS]
    + [p.values[0] for p in NAMED_SECRETS]
)


@pytest.mark.parametrize("text", SECRET_TEXTS)
def test_every_secret_of_the_corpus_passes_the_gate(text: str) -> None:
    assert may_hold_secret(text)
    assert find_all(text) == find_all(text, gated=False)


def find_all(text: str, *, gated: bool = True) -> list[str]:
    return (
        [f.kind for f in secrets.find_secrets(text)]
        if gated
        else list(dict.fromkeys(found_without_gate(text)))
    )


@pytest.mark.parametrize("text", [text for _, text in secret_corpus.ORDINARY])
def test_ordinary_text_is_judged_as_without_the_gate(text: str) -> None:
    assert find_all(text) == find_all(text, gated=False)


@pytest.mark.parametrize(
    "text",
    [
        "Prefers short replies and bullet points over long paragraphs.",
        "We moved the standup to 10:30 because of the release train on Thursdays.",
        "Caroline went camping with her kids last summer and loved the lake.",
        "- Deploys go through the staging cluster first\n- Rollbacks take five minutes",
        "Ünïcödé prose — with an em dash, “quotes” and naïve café words.",
    ],
)
def test_ordinary_prose_skips_the_finders(text: str) -> None:
    assert not may_hold_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "the private \u212aey is Zx9kLm2pQ8vTq4Rw7yHs",
        "the pr\u0130vate key is Zx9kLm2pQ8vTq4Rw7yHs",
        "the pr\u0131vate key is Zx9kLm2pQ8vTq4Rw7yHs",
        "the \u017fecret key: Zx9kLm2pQ8vTq4Rw7yHs",
    ],
)
def test_credential_words_spelled_with_case_folds_pass_the_gate(text: str) -> None:
    """Case-insensitive patterns match these four characters for ASCII letters."""
    assert found_without_gate(text)
    assert may_hold_secret(text)
