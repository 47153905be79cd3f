"""The queue: which entries, in which order, with which counts; never through a symlink."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from memoryui import review
from memoryui.store import Actor, Kind, NotFound, Store

from .conftest import LEAD, log

D0, D1, D2 = dt.date(2026, 2, 10), dt.date(2026, 2, 11), dt.date(2026, 2, 12)


def queue(store: Store, ledger, since=D0, until=D2, **kw) -> review.Queue:
    return review.build_queue(store, ledger, review.Filters(since, until, **kw))


@pytest.fixture
def seeded(store: Store) -> dict[str, str]:
    return {
        "ops1": log(store, "ops-bot", D1.isoformat(), "09:15", "Canary at 5% caught it."),
        "ops2": log(store, "ops-bot", D2.isoformat(), "10:02", "Rollback worked."),
        "ops3": log(store, "ops-bot", D2.isoformat(), "16:40", "Paged Bob for disk."),
        "res1": log(store, "research-agent", D2.isoformat(), "11:30", "BM25 plus rerank."),
        "sup1": log(store, "support-bot", D0.isoformat(), "08:05", "Globex prefers email."),
    }


def keys(q: review.Queue) -> list[str]:
    return [it.key for it in q.items]


def test_newest_first_grouped_by_day_with_counts_per_scope(store, ledger, seeded) -> None:
    q = queue(store, ledger)
    assert keys(q) == [seeded[k] for k in ("ops3", "res1", "ops2", "ops1", "sup1")]
    assert [day for day, _items in q.days] == [D2.isoformat(), D1.isoformat(), D0.isoformat()]
    assert q.counts == [("ops-bot", 3), ("research-agent", 1), ("support-bot", 1)]
    assert q.total == q.counted == 5 and q.pages == 1
    assert q.scopes == ["ops-bot", "research-agent", "support-bot"]
    # "Skip" jumps to the next entry on the page.
    assert [it.next_dom for it in q.items] == [it.dom_id for it in q.items[1:]] + [""]
    first = q.items[0]
    assert (first.scope, first.date, first.time, first.status) == (
        "ops-bot", D2.isoformat(), "16:40", "todo")
    assert "<p>Paged Bob for disk.</p>" in first.html


def test_filters_by_scope_words_dates_and_status(store, ledger, seeded) -> None:
    q = queue(store, ledger, scope="ops-bot")
    assert len(q.items) == 3
    assert dict(q.counts)["support-bot"] == 1  # counts ignore the scope filter
    assert keys(queue(store, ledger, q="GLOBEX email")) == [seeded["sup1"]]
    assert keys(queue(store, ledger, since=D2)) == [seeded[k] for k in ("ops3", "res1", "ops2")]
    review.dismiss(store, ledger, [seeded["sup1"]], "lead")
    assert seeded["sup1"] not in keys(queue(store, ledger))
    assert keys(queue(store, ledger, status="dismissed")) == [seeded["sup1"]]
    assert len(queue(store, ledger, status="all").items) == 5
    assert queue(store, ledger, status="promoted").items == []


def test_pages_of_fifty_and_a_page_past_the_end_is_the_last(store, ledger) -> None:
    path = store.path_for(Kind.DAILY, "ops-bot", D2.isoformat())
    text = "".join(f"\n## {h:02d}:{m:02d}\n\nFact {h}-{m}.\n" for h in range(9)
                   for m in range(0, 60, 10))
    store.append(path, text, header=f"# {D2}\n", actor=Actor.agent("ops-bot"), tool="remember")
    q = queue(store, ledger)
    assert q.total == 54 and q.pages == 2 and len(q.items) == review.PAGE_SIZE
    assert q.items[0].time == "08:50"
    last = queue(store, ledger, page=9)
    assert last.filters.page == 2 and len(last.items) == 4
    assert [it.time for it in last.items] == ["00:30", "00:20", "00:10", "00:00"]


@pytest.mark.parametrize("days", [3, review.sources.ENUMERATE_DAYS + 5])
def test_a_daily_log_linked_to_an_outside_file_is_never_read(store, ledger, tmp_path,
                                                              days) -> None:
    """Short ranges stat candidate names, long ones walk the folder: both skip links."""
    real = log(store, "ops-bot", D2.isoformat(), "09:00", "A real entry.")
    secret = tmp_path / "secret.md"
    secret.write_text(f"# {D1}\n\n## 10:00\n\nAWS_SECRET=hunter2\n")
    linked = store.root / store.path_for(Kind.DAILY, "ops-bot", D1.isoformat())
    os.symlink(secret, linked)
    # A whole scope whose daily folder is a link to a folder outside the workspace.
    outside = tmp_path / "outside-daily"
    outside.mkdir()
    (outside / f"{D2}.md").write_text(f"# {D2}\n\n## 11:00\n\nOutside secret.\n")
    folder = store.root / "agents" / "evil-bot" / "memory"
    folder.mkdir(parents=True)
    os.symlink(outside, folder / "daily")

    q = queue(store, ledger, since=D2 - dt.timedelta(days=days - 1))
    assert keys(q) == [real]
    assert all("secret" not in it.entry.text.lower() for it in q.items)
    key = f"{linked.relative_to(store.root)}#1000-00000000"
    with pytest.raises(NotFound):
        review.resolve(store, ledger, [key])
    assert review.entries_of(store, str(linked.relative_to(store.root))) == []


def test_long_ranges_list_the_folder_and_keep_only_daily_logs(store, ledger) -> None:
    a = log(store, "ops-bot", "2026-01-02", "09:00", "Early January.")
    b = log(store, "ops-bot", "2026-04-01", "09:00", "April.")
    folder = store.root / store.layout.folder(Kind.DAILY, "ops-bot")
    (folder / "notes.md").write_text("## 09:00\n\nnot a daily log\n")
    (folder / ".2026-01-03.md").write_text("## 09:00\n\nhidden\n")
    q = queue(store, ledger, since=dt.date(2026, 1, 1), until=dt.date(2026, 3, 31))
    assert keys(q) == [a]
    q = queue(store, ledger, since=dt.date(2026, 1, 1), until=dt.date(2026, 12, 31))
    assert keys(q) == [b, a]


def test_parsed_logs_are_cached_until_the_log_changes(store, ledger) -> None:
    key = log(store, "ops-bot", D2.isoformat(), "09:00", "First.")
    path = key.split("#")[0]
    first = review.entries_of(store, path)
    assert review.entries_of(store, path) is first  # the cache answered
    log(store, "ops-bot", D2.isoformat(), "10:00", "Second.")
    assert [e.body for e in review.entries_of(store, path)] == ["First.", "Second."]


def test_resolve_and_neighbours(store, ledger, seeded) -> None:
    items = review.resolve(store, ledger, [seeded["ops3"], seeded["ops1"], seeded["ops3"]])
    assert [it.key for it in items] == [seeded["ops1"], seeded["ops3"]]  # oldest first, once
    review.dismiss(store, ledger, [seeded["ops2"]], "lead")
    before, current, after = review.neighbours(store, ledger, seeded["ops3"])
    assert [it.key for it in before] == [seeded["ops2"]] and before[0].status == "dismissed"
    assert current.key == seeded["ops3"] and after == []
    for bad in ("memory/MEMORY.md#x", "../../etc/passwd#x", "no-hash",
                "agents/ops-bot/memory/daily/2026-02-12.md#" + "x" * 65):
        with pytest.raises(review.ReviewError):
            review.resolve(store, ledger, [bad])
    with pytest.raises(review.ReviewError, match="at most 200"):
        review.resolve(store, ledger, [f"{seeded['ops1']}{i}" for i in range(201)])
    gone = seeded["ops3"].split("#")[0] + "#1640-00000000"
    with pytest.raises(NotFound):
        review.neighbours(store, ledger, gone)
    assert review.resolve(store, ledger, [gone], missing_ok=True) == []


def test_layouts_without_daily_logs_have_an_empty_queue(tmp_path, ledger) -> None:
    dagu = Store(tmp_path / "dagu", layout="dagu")
    try:
        q = queue(dagu, ledger)
        assert q.items == [] and not q.has_daily
    finally:
        dagu.close()


def test_zerostack_entries_are_in_the_queue(tmp_path, ledger) -> None:
    zs = Store(tmp_path / "zs", layout="zerostack")
    try:
        path = zs.path_for(Kind.DAILY, "proj-1a2b3c4d", D2.isoformat())
        zs.append(path, "\n### 14:05 — compaction summary\nGoal: ship.\n",
                  actor=Actor.agent("proj-1a2b3c4d"), tool="memory_write")
        q = queue(zs, ledger)
        assert [(it.scope, it.time, it.entry.heading) for it in q.items] == [
            ("proj-1a2b3c4d", "14:05", "compaction summary")]
        assert review.target_kinds(zs) == [Kind.GLOBAL, Kind.SKILL]
        assert review.default_kind(zs) == Kind.GLOBAL
    finally:
        zs.close()


def test_dismiss_and_reopen_change_no_file_and_are_recorded(store, ledger, seeded) -> None:
    head = store.head()
    items = review.dismiss(store, ledger, [seeded["ops1"], seeded["res1"]], LEAD.name)
    assert [it.status for it in items] == ["dismissed", "dismissed"]
    # Recorded in history as one empty commit (no file changes: nothing for agents).
    c = store.log(limit=1)[0]
    assert c.parents == [head] and c.files == [] and store.diff(head, c.sha) == []
    assert c.trailers["Dismissed"] == [seeded["ops1"], seeded["res1"]]
    back = review.reopen(store, ledger, [seeded["ops1"]])
    assert [it.status for it in back] == ["todo"]
    assert keys(queue(store, ledger, status="dismissed")) == [seeded["res1"]]
    with pytest.raises(review.ReviewError):
        review.dismiss(store, ledger, [], LEAD.name)


def test_the_overviews_counts_are_the_queues_through_decisions(store, ledger, seeded) -> None:
    """`undecided_counts` (the overview's column) says what the queue counts, before and
    after dismissals and a reopen, with the logs found in the file catalogue."""
    def both() -> tuple[dict, dict]:
        return (review.undecided_counts(store, ledger, D0, D2),
                dict(queue(store, ledger).counts))

    counts, expected = both()
    assert counts == expected == {"ops-bot": 3, "research-agent": 1, "support-bot": 1}
    review.dismiss(store, ledger, [seeded["ops1"], seeded["res1"]], LEAD.name)
    assert both()[0] == both()[1] == {"ops-bot": 2, "support-bot": 1}
    review.reopen(store, ledger, [seeded["ops1"]])
    log(store, "support-bot", D1.isoformat(), "09:00", "A new entry.")
    assert both()[0] == both()[1] == {"ops-bot": 3, "support-bot": 2}
