"""Daily logs parsed into entries with stable ids, in every format agents write."""

from __future__ import annotations

import pytest

from memoryui.store import parse_daily
from memoryui.store.entries import find_entry, parse_daily_after

DURAGENT = "# 2026-02-12\n\n## 14:03\n\nLearned something\n\n## 14:05\n\nAnother thing\n"
DURAGENT_HEAD_BUG = (
    "# 2026-02-12\n\n## 14:03\n\nLearned something\n# 2026-02-12\n\n## 14:05\n\nAnother thing\n"
)


def test_duragent_entries() -> None:
    entries = parse_daily(DURAGENT)
    assert [(e.time, e.body) for e in entries] == [("14:03", "Learned something"),
                                                   ("14:05", "Another thing")]
    assert entries[0].start_line == 3 and all(e.format == "duragent" for e in entries)


def test_repeated_date_headers_are_tolerated() -> None:
    assert [e.body for e in parse_daily(DURAGENT_HEAD_BUG)] == [
        "Learned something", "Another thing"]
    assert [e.id for e in parse_daily(DURAGENT_HEAD_BUG)] == [e.id for e in parse_daily(DURAGENT)]


def test_entry_bodies_keep_their_own_headings_and_code() -> None:
    text = ("# 2026-02-12\n\n## 09:00\n\nDeploy notes\n## Not a time\n```\n## 10:00\n```\n"
            "\n## 11:00\n\nnext\n")
    first, second = parse_daily(text)
    assert first.body == "Deploy notes\n## Not a time\n```\n## 10:00\n```"
    assert second.time == "11:00"


def test_ids_are_stable_when_entries_are_added_or_removed() -> None:
    ids = [e.id for e in parse_daily(DURAGENT)]
    grown = DURAGENT + "\n## 16:00\n\nThird\n"
    assert [e.id for e in parse_daily(grown)][:2] == ids
    shrunk = "# 2026-02-12\n\n## 14:05\n\nAnother thing\n"
    assert parse_daily(shrunk)[0].id == ids[1]
    assert find_entry(grown, ids[1]).body == "Another thing"


def test_identical_entries_get_distinct_ids() -> None:
    text = "# 2026-02-12\n\n## 14:03\n\nsame\n\n## 14:03\n\nsame\n"
    a, b = parse_daily(text)
    assert a.id != b.id


def test_zerostack_flush_entries_and_untimed_text() -> None:
    text = ("raw note one\n\nraw note two\nstill two\n\n"
            "### 14:05 \u2014 compaction summary (37 msgs)\nGoal: ship\nProgress: done\n")
    entries = parse_daily(text)
    assert [(e.format, e.time, e.heading) for e in entries] == [
        ("text", None, None), ("text", None, None),
        ("zerostack", "14:05", "compaction summary (37 msgs)")]
    assert entries[1].body == "raw note two\nstill two"
    assert entries[2].text == "compaction summary (37 msgs)\n\nGoal: ship\nProgress: done"


def test_empty_and_header_only_logs_have_no_entries() -> None:
    assert parse_daily("") == []
    assert parse_daily("# 2026-02-12\n") == []


# Appends as agents make them, and the awkward ones: a header split over two appends, a code
# fence opened in one append and closed in the next, an entry repeated word for word, a
# zerostack flush, untimed text, a second date header.
APPENDS = ["# 2026-02-12\n", "\n## 14:03\n\nLearned something\n", "\n## 14:0", "5\n\nsplit header\n",
           "\n## 15:00\n\n```\n## 16:00\n", "still code\n```\nafter\n",
           "\n## 14:03\n\nLearned something\n", "\n### 17:10 \u2014 flush\nGoal: ship\n",
           "raw note\n\nanother", " raw note\n", "# 2026-02-12\n", "\n## 18:00\n\nlast\n"]


@pytest.mark.parametrize("first", range(len(APPENDS)))
def test_a_log_parsed_after_each_append_has_the_entries_of_a_whole_parse(first: int) -> None:
    """What indexing a busy log after every append sees: the same entries, ids and lines
    as the log parsed whole, whatever each append ended on."""
    text = "".join(APPENDS[:first])
    parse = parse_daily_after(text)
    for piece in APPENDS[first:]:
        text += piece
        parse = parse_daily_after(text, parse)
        assert list(parse.entries) == parse_daily(text)
    assert [e.time for e in parse.entries if e.format == "duragent"] == [
        "14:03", "14:05", "15:00", "14:03", "18:00"]


def test_a_log_edited_before_its_end_is_parsed_whole() -> None:
    before = parse_daily_after(DURAGENT)
    edited = DURAGENT.replace("Learned something", "Learned it twice")
    assert list(parse_daily_after(edited, before).entries) == parse_daily(edited)
    assert parse_daily_after(edited, before).entries[0].body == "Learned it twice"
