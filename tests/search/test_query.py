"""The search language: what a person types finds what they meant, on both backends, and a
query that cannot be understood says what is wrong and where."""

from __future__ import annotations

import pytest

from memoryui.search import QueryError, parse_query, parse_tree
from tests.search.helpers import note, paths

# -- words, phrases, prefixes ----------------------------------------------------------------


def test_a_phrase_needs_the_words_together_and_in_order(store, index):
    together = note(store, "ops-bot", "one", "We rolled back the release at noon.\n")
    note(store, "ops-bot", "two", "Back in March we rolled the dice on a new vendor.\n")
    assert paths(index.search('"rolled back"')) == [together]
    assert len(index.search("rolled back").hits) == 2


def test_a_prefix_query_matches_longer_words(store, index):
    p = note(store, "ops-bot", "deploys", "Deployment of payments-api finished.\n")
    note(store, "ops-bot", "other", "Nothing about releases here.\n")
    assert paths(index.search("deploym*")) == [p]
    assert paths(index.search("paym*")) == [p]


def test_words_with_punctuation_are_searched_as_written(store, index):
    p = note(store, "ops-bot", "errors", "payments-api (C++) returned HTTP/2 502; v1.2.3 fixed it\n")
    for q in ("payments-api", "HTTP/2", "v1.2.3", "C++ payments-api"):
        assert paths(index.search(q)) == [p], q


def test_the_last_word_being_typed_matches_as_a_prefix(store, index):
    p = note(store, "ops-bot", "oncall", "Paged the on-call lead; escalation went to the CTO.\n")
    other = note(store, "ops-bot", "escal", "A tool named escal.\n")
    assert paths(index.search("escal")) == [other]  # as typed: the whole word only
    assert set(paths(index.search("escal", prefix_last=True))) == {p, other}
    assert paths(index.search("went escal", prefix_last=True)) == [p]
    # Only the last word: "escal" before another word stays a whole word.
    assert paths(index.search("escal went", prefix_last=True)) == []
    # A finished phrase and a one-letter word stay as typed.
    assert index.search('"went escal"', prefix_last=True).hits == []
    hit = index.search("the escala", prefix_last=True).hits[0]
    assert hit.path == p
    assert ("escalation", True) in hit.snippet_spans


def test_a_prefix_as_you_type_renders_as_a_prefix_query():
    assert parse_query("deploy escal", prefix_last=True) == '("deploy" AND "escal"*)'
    assert parse_query("deploy escal") == '("deploy" AND "escal")'
    assert parse_query("deploy a", prefix_last=True) == '("deploy" AND "a")'
    # two letters as you type stay exact (as prefixes they match nearly every file) ...
    assert parse_query("deploy re", prefix_last=True) == '("deploy" AND "re")'
    assert parse_query("deploy rea", prefix_last=True) == '("deploy" AND "rea"*)'
    assert parse_query("deploy re*", prefix_last=True) == '("deploy" AND "re"*)'  # ... unless asked
    assert parse_query('deploy "on call"', prefix_last=True) == '("deploy" AND "on call")'


# -- operators and grouping ------------------------------------------------------------------


def test_or_and_exclusion(store, index):
    a = note(store, "ops-bot", "a", "staging deploy went fine\n")
    b = note(store, "ops-bot", "b", "production deploy went fine\n")
    assert set(paths(index.search("staging OR production"))) == {a, b}
    assert paths(index.search("deploy -staging")) == [b]
    assert paths(index.search("deploy NOT production")) == [a]


def test_not_and_parentheses_work_as_documented(store, index):
    deploy = note(store, "ops-bot", "deploy", "deploy of payments went fine\n")
    refund = note(store, "ops-bot", "refund", "refund batch retried\n")
    canary = note(store, "ops-bot", "canary", "deploy behind a canary, then refund\n")
    note(store, "ops-bot", "other", "nothing relevant\n")
    assert set(paths(index.search("(deploy OR refund) AND NOT canary"))) == {deploy, refund}
    assert set(paths(index.search("(deploy OR refund) NOT canary"))) == {deploy, refund}
    assert set(paths(index.search("-canary (deploy OR refund)"))) == {deploy, refund}
    assert set(paths(index.search("NOT canary deploy"))) == {deploy}
    assert set(paths(index.search("deploy AND refund"))) == {canary}
    assert set(paths(index.search("deploy NOT (canary OR payments)"))) == set()
    assert set(paths(index.search("refund AND NOT (deploy canary)"))) == {refund}


def test_column_filters_search_only_that_part_of_a_file(store, index):
    titled = note(store, "ops-bot", "gamma", "# Zookeeper quirks\n\nSession expiry.\n")
    mentioned = note(store, "ops-bot", "delta", "# Misc\n\nzookeeper was slow today\n")
    assert paths(index.search("title:zookeeper")) == [titled]
    assert paths(index.search("name:delta")) == [mentioned]
    assert set(paths(index.search("body:zookeeper"))) == {titled, mentioned}


# -- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("query", [
    '"unclosed phrase', "(deploy", "deploy)", "NOT", "OR", "deploy OR", "AND deploy",
    "-staging", "***", "*", "!!!", "title:", 'body:""', "((((", "NEAR(", "a" * 600,
    "NOT canary", "deploy OR NOT canary", "()", "deploy AND", "deploy AND OR refund",
])
def test_a_malformed_query_gets_a_clear_message(store, index, query):
    note(store, "ops-bot", "x", "deploy staging\n")
    with pytest.raises(QueryError) as err:
        index.search(query)
    assert err.value.status == 400
    message = str(err.value)
    assert message and "Traceback" not in message and "sqlite" not in message.lower()


@pytest.mark.parametrize("query, column, needle", [
    ("(deploy OR refund", 1, "parenthesis is not closed"),
    ("deploy OR refund)", 17, "nothing before it to close"),
    ('deploy "rolled back', 8, "Unbalanced quote"),
    ("deploy OR", 10, "ends where a word was expected"),
    ("deploy OR OR refund", 11, "OR needs a word on both sides"),
    ("AND deploy", 1, "AND needs a word on both sides"),
    ("deploy AND", 8, "AND needs a word on both sides"),
    ("deploy OR NOT canary", 11, "NOT needs something before it"),
    ("  -canary", 3, "exclusion (-word) needs something before it"),
    ("deploy NOT", 8, "NOT needs a word after it"),
    ("deploy title:", 8, "Nothing to search for after title:"),
    ("deploy ()", 8, "Empty parentheses"),
])
def test_a_query_error_points_at_the_place(query, column, needle):
    with pytest.raises(QueryError) as err:
        parse_tree(query)
    exc = err.value
    assert needle in str(exc)
    assert exc.column == column and exc.position == column - 1
    assert f"(at column {column})" in str(exc)
    line, caret = exc.caret.split("\n")
    assert line == query and caret == " " * (column - 1) + "^"
    before, at, after = exc.parts()
    assert before + at + after == query and len(before) == column - 1


def test_a_long_query_points_past_the_limit():
    with pytest.raises(QueryError, match="too long") as err:
        parse_tree("a" * 600)
    assert err.value.column == 501


def test_fts_operators_typed_as_text_are_not_syntax(store, index):
    p = note(store, "ops-bot", "ops", 'The "NEAR" column and a {brace} and ^caret : colon\n')
    for q in ("NEAR", "{brace}", "^caret", "colon :", "column:x near"):
        res = index.search(q)  # never an error
        assert all(h.path == p for h in res.hits)


def test_filter_tokens_are_not_searchable_words(store, index):
    note(store, "ops-bot", "plain", "nothing special here\n")
    for q in ("knote0", "shared0", "s6f70732d626f740"):
        assert index.search(q).hits == [], q


def test_an_empty_query_is_refused_with_a_message():
    with pytest.raises(QueryError, match="Type a word"):
        parse_query("   ")
