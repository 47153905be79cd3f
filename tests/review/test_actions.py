"""Dismissals recorded in git (an empty commit per decision) and restored by `rebuild`."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from memoryui import review
from memoryui.models import ReviewState
from memoryui.store import Actor, Store

from .conftest import DAY, LEAD, draft_and_save, log, snapshot

D = DAY


def test_a_dismissal_is_an_empty_commit_by_the_person(store, ledger, entries) -> None:
    head = store.head()
    tree = store.list_files()
    review.dismiss(store, ledger, [entries["a"], entries["c"]], LEAD)
    c = store.log(limit=1)[0]
    assert c.parents == [head] and c.files == [] and store.list_files() == tree
    assert (c.author, c.email, c.actor, c.tools) == ("lead", "lead@example.com", "user:lead",
                                                     ["review-dismiss"])
    assert c.subject == "Dismiss 2 entries of ops-bot, research-agent"
    assert c.trailers["Dismissed"] == [entries["a"], entries["c"]]
    assert store.pending() == []  # nothing for the pending-changes page either
    # Dismissing again records nothing new; putting back is recorded too.
    review.dismiss(store, ledger, [entries["a"]], LEAD)
    assert store.head() == c.sha
    review.reopen(store, ledger, [entries["a"]], LEAD)
    back = store.log(limit=1)[0]
    assert back.trailers["Reopened"] == [entries["a"]] and back.files == []
    assert back.subject == f"Reopen the {D} 09:00 entry of ops-bot"


def test_rebuild_from_an_empty_database_restores_dismissals(store, ledger, entries) -> None:
    review.dismiss(store, ledger, [entries["a"], entries["b"]], LEAD)
    review.reopen(store, ledger, [entries["b"]], LEAD)
    review.dismiss(store, ledger, [entries["c"]], Actor.user("alice", "alice@example.com"))
    draft_and_save(store, ledger, [entries["b"]], "global")  # promoted after the reopen
    before = snapshot()
    assert {(s[1], s[2], s[5]) for s in before[0]} == {
        (entries["a"].split("#")[1], "dismissed", "lead"),
        (entries["c"].split("#")[1], "dismissed", "alice"),
        (entries["b"].split("#")[1], "promoted", "lead")}

    ReviewState.objects.all().delete()  # a fresh database
    dry = review.rebuild(store, ledger, dry_run=True)
    assert dry.dismissals_restored == 2 and ReviewState.objects.count() == 0
    stats = review.rebuild(store, ledger)
    assert (stats.entries, stats.dismissals_kept, stats.dismissals_restored) == (1, 0, 2)
    assert snapshot() == before
    day = dt.date(2026, 2, 12)
    q = review.build_queue(store, ledger, review.Filters(day, day, None, "", "dismissed", 1))
    assert {it.key for it in q.items} == {entries["a"], entries["c"]}
    assert review.rebuild(store, ledger).dismissals_restored == 0  # twice changes nothing
    assert snapshot() == before


def test_rebuild_applies_a_reopening_and_ignores_forged_trailers(store, ledger,
                                                                entries) -> None:
    review.dismiss(store, ledger, [entries["a"]], LEAD)
    review.reopen(store, ledger, [entries["a"]], LEAD)
    # An agent's write carrying a Dismissed trailer (not a decision commit) is not trusted.
    store.write("agents/ops-bot/memory/notes/x.md", "x\n", actor=Actor.agent("ops-bot"),
                tool="review-dismiss", trailers=[("Dismissed", entries["b"])])
    # A database restored from a backup older than the reopening still says dismissed.
    path, entry_id = entries["a"].split("#")
    ReviewState.objects.create(path=path, entry_id=entry_id, scope="ops-bot", date=D,
                               status="dismissed", reviewed_by="lead",
                               reviewed_at=timezone.now())
    stats = review.rebuild(store, ledger)
    assert stats.dismissals_restored == 0
    assert ReviewState.objects.count() == 0  # "a" reopened as history says; "b" never dismissed


def test_a_dismissal_survives_sync_to_another_instance(tmp_path, ledger) -> None:
    from memoryui.store.sync import RemoteConfig, Syncer, bootstrap
    from tests.sync_fixtures import make_bare

    config = RemoteConfig(f"file://{make_bare(tmp_path / 'memory.git')}")
    stores = []
    try:
        for name in ("a", "b"):
            bootstrap(tmp_path / name, config)
            stores.append(Store(tmp_path / name))
        a, b = stores
        sa, sb = Syncer(a, config), Syncer(b, config)
        key = log(a, "ops-bot", D, "09:00", "Canaries catch bad builds.")
        sa.round(blocking=True)
        sb.round(blocking=True)
        review.dismiss(a, ledger, [key], LEAD)
        # Meanwhile b changes something else: the next rounds merge the two histories.
        log(b, "support-bot", D, "10:00", "Globex prefers email.")
        sb.round(blocking=True)
        sa.round(blocking=True)
        sb.round(blocking=True)
        assert [c.sha for c in b.log(limit=200) if c.trailers.get("Dismissed") == [key]]
        ReviewState.objects.all().delete()  # b's instance rebuilds from its own clone
        stats = review.rebuild(b, ledger)
        assert stats.dismissals_restored == 1
        assert ReviewState.objects.get().status == "dismissed"
    finally:
        for s in stores:
            s.close()
