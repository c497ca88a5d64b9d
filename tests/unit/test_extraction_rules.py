"""The pure rules of automatic extraction: slugs, near-duplicates, the sift of the model's
candidates, the per-pass budget, the transcript cap and the parsing of the tool input."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest

from agent_memory.domain.extraction import Candidate, DropReason
from agent_memory.domain.memory import Scope
from agent_memory.extract import budget, dedup, prompt
from agent_memory.extract.budget import Price
from agent_memory.extract.model import parse_candidates
from agent_memory.extract.sift import sift
from tests.sift_support import ANTHROPIC_KEY, cand, memory, rules

TEN_WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"


# -- slugs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("proposed", "expected"),
    [
        ("Deploy Command!", "deploy-command"),
        ("deploy-command", "deploy-command"),
        ("  --Tech__Stack // Backend--  ", "tech-stack-backend"),
        ("API v2 endpoint", "api-v2-endpoint"),
        ("a...b   c", "a-b-c"),
        ("UPPER", "upper"),
    ],
)
def test_slug_lowercases_and_collapses_runs_of_non_alphanumerics(
    proposed: str, expected: str
) -> None:
    assert dedup.slug(proposed) == expected
    assert dedup.auto_key(proposed) == f"auto:{expected}"


@pytest.mark.parametrize(
    ("proposed", "expected"),
    [
        ("東京オフィス", "東京オフィス"),
        ("ключ доступа", "ключ-доступа"),
        ("Ünïcödé Key!!", "ünïcödé-key"),
        ("\uff26\uff35\uff2c\uff2c Width", "full-width"),
    ],
)
def test_a_key_in_any_script_keeps_its_letters(proposed: str, expected: str) -> None:
    """As a tag is slugged: a key of Japanese or Russian words is no invalid fact."""
    assert dedup.auto_key(proposed) == f"auto:{expected}"


def test_slug_is_at_most_sixty_characters() -> None:
    assert dedup.slug("a" * 100) == "a" * 60
    assert dedup.auto_key("x" * 300) == "auto:" + "x" * 60


def test_slug_cut_at_sixty_leaves_no_trailing_dash() -> None:
    # The 60th character is the dash between the words: the cut is trimmed again.
    assert dedup.slug("a" * 59 + " bcd") == "a" * 59
    assert len(dedup.slug("word " * 30)) <= 60
    assert not dedup.slug("word " * 30).endswith("-")


@pytest.mark.parametrize("proposed", ["", "   ", "!!!", "--__--", "   /// "])
def test_nothing_to_slug_gives_an_empty_key(proposed: str) -> None:
    assert dedup.slug(proposed) == ""
    assert dedup.auto_key(proposed) == ""


# -- near-duplicates ---------------------------------------------------------------------


def test_word_set_is_lowercased_alphanumeric_words() -> None:
    assert dedup.word_set("Deploy, deploy! with MAKE-release v2.") == frozenset(
        {"deploy", "with", "make", "release", "v2"}
    )
    assert dedup.word_set("  ... ") == frozenset()


def test_jaccard_is_intersection_over_union() -> None:
    a = dedup.word_set("alpha bravo charlie delta")
    b = dedup.word_set("charlie delta echo foxtrot")
    assert dedup.jaccard(a, b) == pytest.approx(2 / 6)
    assert dedup.jaccard(a, a) == 1.0
    assert dedup.jaccard(a, dedup.word_set("zulu")) == 0.0
    assert dedup.jaccard(frozenset(), frozenset()) == 1.0


def test_facts_in_other_scripts_are_compared_by_their_own_words() -> None:
    """Two facts in Japanese were alike in full (no word of a-z in either)."""
    assert dedup.most_similar("東京のオフィス は 渋谷", ["ユーザー は 猫 が 好き"]) < 0.5
    assert dedup.most_similar("Ана живёт в Порту", ["ана живёт в порту"]) == pytest.approx(1.0)


def test_a_second_fact_under_a_key_the_pass_writes_is_a_duplicate() -> None:
    kept, dropped = sift(
        [cand("home", "Ana lives in Porto"), cand("Home", "Ana moved to Lisbon in March")],
        [],
        rules(),
    )
    assert [(k.key, k.value) for k in kept] == [("auto:home", "Ana lives in Porto")]
    assert [(d.key, d.reason) for d in dropped] == [("auto:home", DropReason.DUPLICATE)]


def test_punctuation_case_and_order_do_not_make_a_fact_new() -> None:
    assert dedup.most_similar(
        "Root: deploy WITH make-release.", ["make release with deploy root"]
    ) == pytest.approx(1.0)
    assert dedup.most_similar("anything", []) == 0.0


# -- sift --------------------------------------------------------------------------------


def test_every_distinct_candidate_within_the_limits_is_kept() -> None:
    kept, dropped = sift(
        [
            cand("Deploy Command", "Deploy with make release"),
            cand("api", "The API lives at api.example.com", scope=Scope.WORKSPACE),
        ],
        [],
        rules(),
    )
    assert dropped == []
    assert [(k.key, k.value, k.scope, k.confidence) for k in kept] == [
        ("auto:deploy-command", "Deploy with make release", Scope.AGENT, 0.9),
        ("auto:api", "The API lives at api.example.com", Scope.WORKSPACE, 0.9),
    ]


def test_candidates_beyond_the_fact_limit_are_dropped_over_limit() -> None:
    candidates = [cand(f"fact {i}", f"distinct fact number{i} word{i}") for i in range(7)]
    kept, dropped = sift(candidates, [], rules(max_facts=5))
    assert [k.key for k in kept] == [f"auto:fact-{i}" for i in range(5)]
    assert [(d.key, d.reason) for d in dropped] == [
        ("auto:fact-5", DropReason.OVER_LIMIT),
        ("auto:fact-6", DropReason.OVER_LIMIT),
    ]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ok", ""),
        ("ok", "   \n "),
        ("!!!", "a fine value"),
        ("", "a fine value"),
        ("ok", "a value with a \x00 byte"),
    ],
)
def test_an_empty_value_or_key_is_dropped_invalid(key: str, value: str) -> None:
    kept, dropped = sift([cand(key, value)], [], rules())
    assert kept == []
    assert [d.reason for d in dropped] == [DropReason.INVALID_FACT]


def test_confidence_under_the_minimum_is_dropped_and_the_minimum_itself_kept() -> None:
    kept, dropped = sift(
        [
            cand("low", "a fact held with little confidence", confidence=0.59),
            cand("edge", "a fact held at exactly the minimum", confidence=0.6),
        ],
        [],
        rules(),
    )
    assert [k.key for k in kept] == ["auto:edge"]
    assert [(d.key, d.reason, d.confidence) for d in dropped] == [
        ("auto:low", DropReason.LOW_CONFIDENCE, 0.59)
    ]


def test_agent_facts_are_dropped_when_agent_memory_is_off() -> None:
    kept, dropped = sift(
        [
            cand("style", "this agent prefers small commits", scope=Scope.AGENT),
            cand("stack", "the project runs on PostgreSQL", scope=Scope.WORKSPACE),
        ],
        [],
        rules(memory_enabled=False),
    )
    assert [(k.key, k.scope) for k in kept] == [("auto:stack", Scope.WORKSPACE)]
    assert [(d.key, d.reason, d.scope) for d in dropped] == [
        ("auto:style", DropReason.MEMORY_DISABLED, Scope.AGENT)
    ]


def test_without_a_workspace_every_fact_is_forced_to_agent_scope() -> None:
    kept, _ = sift(
        [cand("stack", "the project runs on PostgreSQL", scope=Scope.WORKSPACE)],
        [],
        rules(has_workspace=False),
    )
    assert [k.scope for k in kept] == [Scope.AGENT]
    # ...and then it is an agent fact, which needs agent memory.
    kept, dropped = sift(
        [cand("stack", "the project runs on PostgreSQL", scope=Scope.WORKSPACE)],
        [],
        rules(has_workspace=False, memory_enabled=False),
    )
    assert kept == []
    assert [(d.reason, d.scope) for d in dropped] == [(DropReason.MEMORY_DISABLED, Scope.AGENT)]


def test_a_secret_in_the_value_is_dropped_and_never_echoed() -> None:
    kept, dropped = sift([cand("anthropic key", f"the API key is {ANTHROPIC_KEY}")], [], rules())
    assert kept == []
    assert len(dropped) == 1
    assert dropped[0].reason is DropReason.SECRET_IN_VALUE
    assert dropped[0].value == ""
    assert dropped[0].key == "auto:anthropic-key"


def test_a_secret_in_the_key_is_not_echoed_either() -> None:
    kept, dropped = sift([cand(ANTHROPIC_KEY, "where the key lives")], [], rules())
    assert kept == []
    assert [(d.key, d.value, d.reason) for d in dropped] == [("", "", DropReason.SECRET_IN_VALUE)]


def test_a_near_duplicate_of_an_existing_value_is_dropped() -> None:
    nine_of_ten = " ".join(TEN_WORDS.split()[:9])  # Jaccard 0.9
    kept, dropped = sift([cand("dup", nine_of_ten.upper() + "!")], [TEN_WORDS], rules())
    assert kept == []
    assert [d.reason for d in dropped] == [DropReason.DUPLICATE]


def test_similarity_of_exactly_the_threshold_is_not_a_duplicate() -> None:
    eight_of_ten = " ".join(TEN_WORDS.split()[:8])  # Jaccard exactly 0.8
    assert dedup.most_similar(eight_of_ten, [TEN_WORDS]) == pytest.approx(0.8)
    kept, dropped = sift([cand("edge", eight_of_ten)], [TEN_WORDS], rules())
    assert [k.value for k in kept] == [eight_of_ten]
    assert dropped == []


def test_a_near_duplicate_of_a_candidate_already_kept_is_dropped() -> None:
    nine_of_ten = " ".join(TEN_WORDS.split()[1:])
    kept, dropped = sift([cand("first", TEN_WORDS), cand("second", nine_of_ten)], [], rules())
    assert [k.key for k in kept] == ["auto:first"]
    assert [(d.key, d.reason) for d in dropped] == [("auto:second", DropReason.DUPLICATE)]


def test_a_dropped_candidate_does_not_count_as_kept_for_duplicates() -> None:
    kept, dropped = sift(
        [cand("low", TEN_WORDS, confidence=0.1), cand("again", TEN_WORDS)], [], rules()
    )
    assert [k.key for k in kept] == ["auto:again"]
    assert [d.reason for d in dropped] == [DropReason.LOW_CONFIDENCE]


def test_values_are_trimmed_and_cut_to_two_thousand_characters() -> None:
    long_value = "  " + "word " * 600  # 3002 characters
    kept, _ = sift([cand("long", long_value)], [], rules())
    assert len(kept[0].value) == 2000
    assert kept[0].value == long_value.strip()[:2000]


# -- budget ------------------------------------------------------------------------------


def test_a_dated_model_id_finds_its_price_by_prefix() -> None:
    assert budget.price_for("claude-haiku-4-5-20251001", budget.DEFAULT_PRICES) == Price(1, 5)
    assert budget.price_for("claude-haiku-4-5", budget.DEFAULT_PRICES) == Price(1, 5)
    assert budget.price_for("gpt-4o", budget.DEFAULT_PRICES) is None


def test_the_longest_matching_prefix_wins() -> None:
    table = {"claude": Price(9, 9), "claude-haiku": Price(1, 5), "claude-h": Price(7, 7)}
    assert budget.price_for("claude-haiku-4-5-20251001", table) == Price(1, 5)
    assert budget.price_for("claude-opus", table) == Price(9, 9)


def test_cost_is_per_million_tokens() -> None:
    assert Price(1, 5).cost(1_000_000, 0) == pytest.approx(1.0)
    assert Price(1, 5).cost(1200, 150) == pytest.approx(0.00195)


def test_max_tokens_is_capped_when_the_budget_is_generous() -> None:
    allowed = budget.allowance(1000, Price(1, 5), 0.03)
    assert allowed.refusal == ""
    assert allowed.max_tokens == budget.MAX_OUTPUT_TOKENS
    assert allowed.worst_case_usd == pytest.approx(Price(1, 5).cost(1000, 4096))


@pytest.mark.parametrize("input_tokens", [10_000, 20_000, 25_000, 28_000])
def test_max_tokens_is_what_the_rest_of_the_budget_buys(input_tokens: int) -> None:
    price = Price(1, 5)
    allowed = budget.allowance(input_tokens, price, 0.03)
    assert allowed.refusal == ""
    assert budget.MIN_OUTPUT_TOKENS <= allowed.max_tokens < budget.MAX_OUTPUT_TOKENS
    # The worst case fits, and the budget buys no more than a token or so beyond it.
    assert price.cost(input_tokens, allowed.max_tokens) <= 0.03
    assert price.cost(input_tokens, allowed.max_tokens + 2) > 0.03
    assert allowed.worst_case_usd <= 0.03


def test_the_call_is_refused_when_even_the_input_does_not_fit() -> None:
    allowed = budget.allowance(40_000, Price(1, 5), 0.03)
    assert allowed.max_tokens == 0
    assert "40000" in allowed.refusal


def test_the_call_is_refused_when_too_little_output_would_be_left() -> None:
    # The input fits, but leaves room for only 100 output tokens.
    allowed = budget.allowance(29_500, Price(1, 5), 0.03)
    assert allowed.max_tokens == 0
    assert allowed.refusal
    assert f"at least {budget.MIN_OUTPUT_TOKENS}" in allowed.refusal


def test_free_output_does_not_let_an_unaffordable_input_through() -> None:
    allowed = budget.allowance(40_000, Price(1, 0), 0.03)
    assert allowed.refusal
    assert allowed.max_tokens == 0


def test_the_input_bound_counts_utf8_bytes_plus_framing() -> None:
    messages = [{"role": "user", "content": "héllo"}]
    payload = json.dumps(["sys", messages, []], ensure_ascii=False)
    bound = budget.input_token_bound("sys", messages, [])
    assert bound == len(payload.encode()) + budget.FRAMING_TOKENS
    assert bound > len(payload)  # é is two bytes


def test_a_price_table_parses_from_json() -> None:
    table = budget.parse_prices('{"claude-haiku-4-5": [1, 5], "m": [0.8, 4.0]}')
    assert table == {"claude-haiku-4-5": Price(1.0, 5.0), "m": Price(0.8, 4.0)}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json", "Expecting value"),
        ("[1, 5]", "must be a JSON object"),
        ('{"m": [1]}', "price of 'm' must be"),
        ('{"m": [1, 5, 7]}', "price of 'm' must be"),
        ('{"m": [-1, 5]}', "price of 'm' must be"),
        ('{"m": ["1", "5"]}', "price of 'm' must be"),
        ('{"m": {"in": 1, "out": 5}}', "price of 'm' must be"),
        ('{"m": 3}', "price of 'm' must be"),
    ],
)
def test_a_malformed_price_table_is_refused(raw: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        budget.parse_prices(raw)


# -- transcript cap ----------------------------------------------------------------------


def numbered(chars: int) -> str:
    lines = "".join(f"line {i:06d}\n" for i in range(chars // 12 + 1))
    return lines[:chars]


@pytest.mark.parametrize("length", [0, 500, 12_000])
def test_a_transcript_within_the_cap_is_untouched(length: int) -> None:
    text = numbered(length)
    capped = prompt.cap_transcript(text, 12_000)
    assert capped.text == text
    assert not capped.was_cut
    assert capped.describe() == f"whole transcript ({length} characters)"


def test_an_over_cap_transcript_keeps_the_first_quarter_and_last_three_quarters() -> None:
    text = numbered(20_000)
    capped = prompt.cap_transcript(text, 12_000)
    assert capped.was_cut
    assert (capped.kept_head, capped.kept_tail, capped.original_chars) == (3000, 9000, 20_000)
    marker = prompt.OMISSION.format(n=8000)
    assert capped.text == text[:3000] + marker + text[-9000:]
    assert "[... 8000 characters omitted ...]" in capped.text
    assert len(capped.text) <= 12_000 + len(marker)
    assert text[3000:11_000] not in capped.text
    assert capped.describe() == "first 3000 and last 9000 of 20000 characters"


@pytest.mark.parametrize(("length", "cap"), [(12_001, 12_000), (50_000, 1000), (10, 7)])
def test_the_cut_transcript_stays_within_cap_plus_marker(length: int, cap: int) -> None:
    text = numbered(length)
    capped = prompt.cap_transcript(text, cap)
    omitted = length - cap
    assert capped.kept_head == cap // 4
    assert capped.kept_head + capped.kept_tail == cap
    assert len(capped.text) == cap + len(prompt.OMISSION.format(n=omitted))


def test_the_user_message_carries_the_known_memories_and_the_transcript() -> None:
    capped = prompt.cap_transcript("the transcript body", 100)
    known = [
        prompt.Known("m1", memory("auto:one", "known one")),
        prompt.Known("m2", memory("long", "x" * 500, scope=Scope.WORKSPACE)),
    ]
    message = prompt.user_message(capped, known, workspace=False)
    assert "- m1 (agent) auto:one: known one\n" in message
    # Long values are cut.
    assert "- m2 (workspace) long: " + "x" * prompt.HINT_VALUE_CHARS + "\n" in message
    assert "no workspace" in message
    assert "<transcript>\nthe transcript body\n</transcript>" in message
    with_ws = prompt.user_message(capped, [], workspace=True)
    assert "no workspace" not in with_ws
    assert "Known memories" not in with_ws


def test_the_tool_schema_carries_the_fact_limit_and_the_allowed_scopes() -> None:
    schema = prompt.tool(5, workspace=False)["input_schema"]
    assert schema["properties"]["facts"]["maxItems"] == 5
    assert schema["properties"]["facts"]["items"]["properties"]["scope"]["enum"] == ["agent"]
    with_ws = prompt.tool(3, workspace=True)["input_schema"]
    assert with_ws["properties"]["facts"]["items"]["properties"]["scope"]["enum"] == [
        "agent",
        "workspace",
    ]


# -- parsing the tool input --------------------------------------------------------------


def test_well_formed_tool_input_parses_to_candidates() -> None:
    parsed = parse_candidates(
        {
            "facts": [
                {"key": "k", "value": "v", "confidence": 1, "scope": "agent"},
                {"key": "w", "value": "x", "confidence": 0.7, "scope": "workspace"},
            ]
        }
    )
    assert parsed == [
        Candidate("k", "v", 1.0, Scope.AGENT),
        Candidate("w", "x", 0.7, Scope.WORKSPACE),
    ]
    assert parse_candidates({"facts": []}) == []


GOOD = {"key": "k", "value": "v", "confidence": 0.9, "scope": "agent"}


@pytest.mark.parametrize(
    "tool_input",
    [
        None,
        "facts",
        [GOOD],
        {},
        {"facts": None},
        {"facts": "k=v"},
        {"facts": {"0": GOOD}},
        {"facts": ["k=v"]},
        {"facts": [{**GOOD, "key": None}]},
        {"facts": [{**GOOD, "key": 7}]},
        {"facts": [{k: v for k, v in GOOD.items() if k != "value"}]},
        {"facts": [{**GOOD, "value": ["v"]}]},
        {"facts": [{**GOOD, "confidence": "0.9"}]},
        {"facts": [{**GOOD, "confidence": True}]},
        {"facts": [{**GOOD, "confidence": None}]},
        {"facts": [{**GOOD, "confidence": math.nan}]},
        {"facts": [{**GOOD, "confidence": math.inf}]},
        {"facts": [{**GOOD, "confidence": 7}]},
        {"facts": [{**GOOD, "confidence": -0.1}]},
        {"facts": [{**GOOD, "scope": "user"}]},
        {"facts": [{**GOOD, "scope": "AGENT"}]},
        {"facts": [{k: v for k, v in GOOD.items() if k != "scope"}]},
        {"facts": [GOOD, {**GOOD, "scope": 1}]},
    ],
)
def test_malformed_tool_input_is_refused(tool_input: object) -> None:
    with pytest.raises(ValueError, match="fact"):
        parse_candidates(tool_input)


def dated(**period: object) -> dict[str, object]:
    return {"key": "lead", "value": "Ana leads platform", "confidence": 0.9, "scope": "agent"} | (
        period
    )


def test_a_fact_may_carry_the_days_its_period_starts_and_ends() -> None:
    (fact,) = parse_candidates(
        {"facts": [dated(valid_from="2026-03-12", valid_until="2026-03-31T12:00:00+02:00")]}
    )
    assert fact.valid_start_time == datetime(2026, 3, 12, tzinfo=UTC)
    assert fact.valid_end_time == datetime(2026, 3, 31, 10, tzinfo=UTC)
    (undated,) = parse_candidates({"facts": [dated()]})
    assert (undated.valid_start_time, undated.valid_end_time) == (None, None)


@pytest.mark.parametrize("bad", ["March", "", "2026-02-30", 20260312, None, True, "9" * 100])
def test_a_bad_day_costs_the_fact_its_bound_only(bad: object) -> None:
    (fact,) = parse_candidates({"facts": [dated(valid_from=bad, valid_until="2026-03-31")]})
    assert fact.valid_start_time is None
    assert fact.valid_end_time == datetime(2026, 3, 31, tzinfo=UTC)


def test_a_period_ending_before_it_starts_is_dropped_whole() -> None:
    (fact,) = parse_candidates(
        {"facts": [dated(valid_from="2026-03-31", valid_until="2026-03-12")]}
    )
    assert (fact.valid_start_time, fact.valid_end_time) == (None, None)


def test_the_model_is_asked_for_the_period_and_told_todays_date() -> None:
    item = prompt.tool(3, workspace=False)["input_schema"]["properties"]["facts"]["items"]
    assert {"valid_from", "valid_until"} <= set(item["properties"])
    assert {"valid_from", "valid_until"}.isdisjoint(item["required"])
    assert "valid_until" in prompt.SYSTEM
    capped = prompt.cap_transcript("the transcript body", 100)
    message = prompt.user_message(capped, [], workspace=True, today="2026-03-01")
    assert message.startswith("Today is 2026-03-01 (UTC).\n")
    assert "Today is" not in prompt.user_message(capped, [], workspace=True)


def test_sift_carries_a_kept_facts_period() -> None:
    start, end = datetime(2026, 3, 12, tzinfo=UTC), datetime(2026, 3, 31, tzinfo=UTC)
    candidate = Candidate(
        "lead", "Ana leads platform", 0.9, Scope.AGENT, valid_start_time=start, valid_end_time=end
    )
    kept, dropped = sift([candidate], [], rules())
    assert dropped == []
    assert (kept[0].valid_start_time, kept[0].valid_end_time) == (start, end)
