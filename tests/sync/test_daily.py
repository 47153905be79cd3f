"""Daily logs merge entry by entry: each entry once, in time order, the date header once.

Each case is first run through git's own `merge=union` (git merge-file --union) to show the
failure a line-based union gives, then through merge_daily.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from memoryui.store.entries import parse_daily
from memoryui.store.sync import merge_daily

BASE = "# 2026-02-12\n\n## 09:00\n\nbase entry\n"


def git_union(tmp: Path, base: str, ours: str, theirs: str) -> str:
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp / name).write_text(text)
    return subprocess.run(["git", "merge-file", "-p", "--union", "ours", "base", "theirs"],
                          cwd=tmp, capture_output=True, text=True).stdout


def bodies(text: str) -> list[tuple[str | None, str]]:
    return [(e.time, e.body) for e in parse_daily(text)]


def test_same_minute_entries_stay_whole_where_union_splits_them(tmp_path: Path) -> None:
    ours = BASE + "\n## 09:20\n\nours at nine twenty\n"
    theirs = BASE + "\n## 09:20\n\ntheirs at nine twenty\nsecond line\n"
    union = git_union(tmp_path, BASE, ours, theirs)
    assert len(parse_daily(union)) == 2  # their entry lost its header: glued onto ours

    merged = merge_daily(BASE, ours, theirs)
    assert bodies(merged) == [("09:00", "base entry"), ("09:20", "ours at nine twenty"),
                              ("09:20", "theirs at nine twenty\nsecond line")]
    assert merged == (BASE + "\n## 09:20\n\nours at nine twenty\n"
                      "\n## 09:20\n\ntheirs at nine twenty\nsecond line\n")


def test_repeated_headers_become_one_where_union_keeps_them(tmp_path: Path) -> None:
    # Duragent's HEAD writes the date header before every entry.
    base = "# 2026-02-12\n\n## 09:00\n\nX\n"
    ours = base + "# 2026-02-12\n\n## 09:10\n\nA\n"
    theirs = base + "# 2026-02-12\n\n## 09:20\n\nB\n"
    union = git_union(tmp_path, base, ours, theirs)
    assert union.count("# 2026-02-12") == 2

    merged = merge_daily(base, ours, theirs)
    assert merged.count("# 2026-02-12") == 1
    assert merged == "# 2026-02-12\n\n## 09:00\n\nX\n\n## 09:10\n\nA\n\n## 09:20\n\nB\n"


def test_both_sides_create_the_day_entries_interleave_by_time(tmp_path: Path) -> None:
    ours = "# 2026-02-12\n\n## 09:00\n\nA\n"
    theirs = "# 2026-02-12\n\n## 08:00\n\nB\n\n## 09:30\n\nC\n"
    union = git_union(tmp_path, "", ours, theirs)
    assert [t for t, _b in bodies(union)] != sorted(t for t, _b in bodies(union))

    merged = merge_daily(None, ours, theirs)
    assert merged == "# 2026-02-12\n\n## 08:00\n\nB\n\n## 09:00\n\nA\n\n## 09:30\n\nC\n"


def test_each_entry_once_when_both_sides_already_have_it() -> None:
    shared = "\n## 10:00\n\nlearned the deploy key rotates monthly\n"
    ours = BASE + shared + "\n## 10:05\n\nours\n"
    theirs = BASE + shared
    assert merge_daily(BASE, ours, theirs) == ours
    # Added independently on both sides (a published copy coming back): still once.
    theirs2 = BASE + shared + "\n## 10:02\n\ntheirs\n"
    merged = merge_daily(BASE, ours, theirs2)
    assert merged.count("learned the deploy key") == 1
    assert [t for t, _b in bodies(merged)] == ["09:00", "10:00", "10:02", "10:05"]


def test_an_entry_a_curator_deleted_stays_deleted() -> None:
    base = BASE + "\n## 09:30\n\nwrong fact\n"
    ours = BASE  # the curator removed the wrong entry here
    theirs = base + "\n## 09:40\n\nnew remote entry\n"
    merged = merge_daily(base, ours, theirs)
    assert "wrong fact" not in merged
    assert bodies(merged) == [("09:00", "base entry"), ("09:40", "new remote entry")]


def test_zerostack_entries_and_untimed_text() -> None:
    base = "raw note\n\n### 14:05 \u2014 compaction summary (3 msgs)\nGoal: ship\n"
    ours = base + "\n### 14:07 \u2014 compaction summary\nours\n"
    theirs = base + "\n### 14:06 \u2014 compaction summary (9 msgs)\ntheirs\n"
    merged = merge_daily(base, ours, theirs)
    assert merged == (base + "\n### 14:06 \u2014 compaction summary (9 msgs)\ntheirs\n"
                      "\n### 14:07 \u2014 compaction summary\nours\n")


def test_code_fences_with_header_lines_are_kept() -> None:
    body = "```\n# 2026-02-12\n## 09:00\n```"
    ours = BASE + f"\n## 09:10\n\n{body}\n"
    theirs = BASE + "\n## 09:05\n\ntheirs\n"
    merged = merge_daily(BASE, ours, theirs)
    assert body in merged
    assert [t for t, _b in bodies(merged)] == ["09:00", "09:05", "09:10"]


def test_one_side_unchanged_takes_the_other_verbatim() -> None:
    theirs = BASE + "\n## 11:00\n\nx\n"
    assert merge_daily(BASE, BASE, theirs) == theirs
    assert merge_daily(BASE, theirs, BASE) == theirs
    assert merge_daily(None, None, theirs) == theirs
