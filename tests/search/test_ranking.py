"""Ranking and snippets: the best file first, matches highlighted, file text never markup."""

from __future__ import annotations

from memoryui.rendering import marked_html
from memoryui.store.entries import parse_daily
from tests.search.helpers import BOT, FILLER, daily, note, paths

# -- ranking ---------------------------------------------------------------------------------


def test_a_file_named_after_the_query_ranks_above_a_body_mention(store, index):
    body_hit = note(store, "ops-bot", "weekly-sync",
                    "# Weekly sync\n\n" + FILLER + "We talked about kafka rebalancing briefly.\n")
    name_hit = note(store, "ops-bot", "kafka-rebalancing",
                    "# Notes\n\n" + FILLER + "Partitions move when a consumer leaves.\n")
    res = index.search("kafka rebalancing")
    assert paths(res)[:2] == [name_hit, body_hit]
    assert res.hits[0].score > res.hits[1].score


def test_a_heading_hit_ranks_above_a_body_hit(store, index):
    body_hit = note(store, "ops-bot", "alpha",
                    "# Daily routine\n\n" + FILLER + "The failover drill went fine.\n")
    heading_hit = note(store, "ops-bot", "beta",
                       "# Routine\n\n## Failover drill\n\n" + FILLER + "Went fine.\n")
    assert paths(index.search("failover drill"))[:2] == [heading_hit, body_hit]


def test_equal_scores_put_the_most_recent_change_first(store, index):
    text = "# Cache\n\nThe cache warmer runs every ten minutes.\n"
    older = note(store, "ops-bot", "cache-a", text)
    newer = note(store, "ops-bot", "cache-b", text)
    assert paths(index.search("warmer")) == [newer, older]
    # Touching the older file makes it the most recent one.
    store.write(older, text + "\n", actor=BOT, tool="test")
    assert paths(index.search("warmer")) == [older, newer]


# -- snippets --------------------------------------------------------------------------------


def test_snippets_highlight_matches_and_escape_html(store, index):
    note(store, "ops-bot", "xss", "Before <script>alert('x')</script> the kafka broker & co.\n")
    hit = index.search("kafka").hits[0]
    snippet_html = marked_html(hit.snippet_spans)
    assert "<mark>kafka</mark>" in snippet_html
    assert "<script>" not in snippet_html
    assert "&lt;script&gt;" in snippet_html and "&amp; co" in snippet_html
    start, end = hit.highlights[0]
    assert hit.snippet_text[start:end] == "kafka"


def test_highlights_are_spans_of_plain_text(store, index):
    note(store, "ops-bot", "kafka-notes", "# Kafka lag\n\nThe kafka consumer lags.\n")
    hit = index.search("kafka").hits[0]
    assert ("kafka", True) in [(t.lower(), m) for t, m in hit.snippet_spans]
    assert hit.has_title_match and any(m for _, m in hit.path_spans)
    for spans in (hit.snippet_spans, hit.title_spans, hit.path_spans):
        assert all(text and "\x02" not in text and "\x03" not in text for text, _ in spans)
    assert "".join(t for t, _ in hit.path_spans) == hit.path


def test_control_characters_in_a_file_never_fake_a_highlight(store, index):
    note(store, "ops-bot", "ctl", "x\x02not a match\x03y and kafka here\n")
    hit = index.search("kafka").hits[0]
    assert [t for t, m in hit.snippet_spans if m] == ["kafka"]


def test_a_daily_hit_names_the_entry_it_came_from(store, index):
    path = daily(store, "ops-bot", "2026-02-12",
                 ("09:00", "Morning checks were green."),
                 ("11:30", "Restarted the flaky consumer on ledger-db."),
                 ("15:00", "Handed over to the night shift."))
    hit = index.search("flaky consumer").hits[0]
    entries = parse_daily(store.read(path))
    assert hit.entry_id == entries[1].id
    assert "flaky consumer" in entries[1].body


def test_marked_html_escapes_every_piece():
    html = marked_html([("<b>", False), ("a&b", True), ('"q"', False)])
    assert html == "&lt;b&gt;<mark>a&amp;b</mark>&quot;q&quot;"
