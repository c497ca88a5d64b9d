# ruff: noqa: RUF001
# (texts in many languages and scripts are the point of these tests)
"""The shortcut before the secret finders (``may_hold_secret``): a text it turns away
must be one in which no finder finds anything. Every pattern's matches, generated from
the pattern itself, and every secret of the corpus must pass it; ordinary prose should
not."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agent_memory.detectors import credentials, secrets
from agent_memory.detectors.secrets import may_hold_secret
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
    # credentials by class (detectors/credentials.py)
    # (the words of common classes pass only with what their finder needs: below)
    "credential word": re.compile(
        "(?i)"
        + "|".join(
            credentials._bounded(t)
            for t in credentials._VOCABULARY
            if t.cls not in credentials.GATED_CLASSES
        )
    ),
    "login pair, any language": credentials.LOGIN_PAIR,
    "national id word": credentials.ID_WORDS,
    **{f"number: {name}": shape for name, shape in credentials._SHAPES.items()},
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
        "Press enter to continue, type your name, then pass the form to the front door team.",
        "def close(self) -> None:\n    pass  # type: ignore",
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


# -- credentials by class ----------------------------------------------------------------------


@pytest.mark.parametrize("term", credentials._VOCABULARY, ids=lambda t: f"{t.cls}:{t.pattern}")
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_every_word_of_the_vocabulary_holds_its_literal(
    term: credentials._Term, data: st.DataObject
) -> None:
    """The gate looks for a word's literal in the folded text: each match holds it."""
    pattern = re.compile("(?i)" + term.pattern)
    text = data.draw(st.from_regex(pattern, fullmatch=True))
    assert term.literal in credentials.fold(text), (term, text)


CLASS_WORDS = st.sampled_from(
    [
        "senha",
        "Senha",
        "SENHA",
        "contraseña",
        "CONTRASEÑA",
        "mot de passe",
        "Passwort",
        "WLAN-Passwort",
        "wachtwoord",
        "hasło",
        "HASŁO",
        "пароль",
        "ПАРОЛЬ",
        "şifre",
        "ŞİFRE",
        "lösenord",
        "密码",
        "パスワード",
        "暗証番号",
        "비밀번호",
        "κωδικός",
        "ΚΩΔΙΚΌΣ",
        "door code",
        "Türcode",
        "código do portão",
        "codice del cancello",
        "PIN",
        "pin",
        "Pin-Code",
        "пин-код",
        "CVV",
        "cryptogramme",
        "opens with",
        "geht mit",
        "digita",
        "type",
        "marca",
        "TAPEZ",
        "pass",
        "key",
        "WLAN-Schlüssel",
        "chave da rede",
        "lockbox",
        "Tresor",
        "punch in",
        "番号",
        "비번",
        "改成",
        " is the wifi password",
        " é o código do portão",
        "wifi ",
        "network ",
        "user ",
        "for the wifi",
        "for the gate",
        "pour le portail",
        "it's ",
        "c'est ",
        "'s ",
        ", now it's ",
        " provisória ",
        " the ",
        "basic auth",
        "user/pass",
        "Zugangsdaten",
        "SSN",
        "CPF",
        "NIE",
        "Steuer-ID",
        "身份证",
        "IBAN",
        "card",
        "seed",
        " ",
        ": ",
        " is ",
        " é ",
        " ist ",
        "是",
        "は",
        "：",
        "=",
        " - ",
        "\n",
    ]
)
VALUES = st.sampled_from(
    [
        "4417",
        "#5580",
        "12-34-56",
        "Pa55w0rd!",
        "abcd efgh ijkl mnop",
        "ana:Pa55w0rd!",
        "4663 9233 2146 8814",
        "4663923321468814",
        "787-78-9328",
        "213.224.190-27",
        "X2318929T",
        "RSSMRA85T10A562S",
        "DE27 3704 0044 2876 6249 78",
        "99 281 637 542",
        "110105198506127172",
        "4B721",
        "'s3cret pass'",
        "hunter2x",
        "bluedoor2468",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(CLASS_WORDS, VALUES, st.sampled_from(CASE_FOLDS), st.text(max_size=4)),
        max_size=8,
    ).map("".join)
)
def test_whatever_the_class_finders_find_passes_the_gate(text: str) -> None:
    if found_without_gate(text):
        assert may_hold_secret(text), text


PHRASE = (
    "fancy muffin offer equal scorpion harsh caught arm never jar cake hire",
    "1. animal 2. recall 3. suspect 4. carbon 5. sphere 6. shop 7. rabbit 8. whip "
    "9. mosquito 10. zebra 11. mobile 12. drive",
    "aplicar tutor boina fosa malla tecla desfile untar tóxico olor arroz ligero",
    "ふるい　ばあさん　こつこつ　ようちえん　かくとく　いくぶん　"
    "くらべる　せつでん　こころ　かほご　わすれもの　さつまいも",
)


@pytest.mark.parametrize("phrase", PHRASE)
def test_a_recovery_phrase_passes_the_gate_wherever_it_stands(phrase: str) -> None:
    for text in (phrase, f"seed: {phrase}", f"keep this safe\n{phrase}\nthanks"):
        assert found_without_gate(text)
        assert may_hold_secret(text)
        assert find_all(text) == find_all(text, gated=False)


@pytest.mark.parametrize("item", secret_corpus.BY_CLASS, ids=lambda i: f"{i.cls}-{i.language}")
def test_the_corpus_by_class_is_judged_as_without_the_gate(item: secret_corpus.Labelled) -> None:
    assert find_all(item.text) == find_all(item.text, gated=False)
    if found_without_gate(item.text):
        assert may_hold_secret(item.text)


@pytest.mark.parametrize(
    "text",
    [
        "Fui ao mercado e depois passei na casa da minha avó para almoçar.",
        "Wir haben das Meeting auf Donnerstag verschoben, weil Anna krank ist.",
        "今天下午我们讨论了新版本的发布计划。",
        "明日の会議は午後三時からです。",
        "La réunion de demain est annulée, on se voit vendredi.",
    ],
)
def test_ordinary_prose_in_other_languages_skips_the_finders(text: str) -> None:
    assert not may_hold_secret(text)
