"""Daily logs parsed into entries with stable ids, in every format agents write."""

from __future__ import annotations

from memoryui.store import parse_daily
from memoryui.store.entries import find_entry

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
