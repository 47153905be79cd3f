"""Undo (a new commit, never a rewrite) and review state rebuilt from commit trailers."""

from __future__ import annotations

import pytest

from memoryui import review
from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Kind, NotFound

from .conftest import DAY, LEAD, MEMORY, draft_and_save, snapshot

D = DAY


def promote_draft(store, ledger, keys, kind, **kw):
    return draft_and_save(store, ledger, keys, kind, **kw)[0]


def test_undo_is_a_new_commit_that_puts_the_entries_back(store, ledger, entries) -> None:
    path = store.path_for(Kind.MEMORY, "ops-bot")
    promo = promote_draft(store, ledger, [entries["a"], entries["b"]], "memory",
                          scope="ops-bot")
    commits = len(store.log(limit=100))
    undone = review.undo(store, ledger, promo.pk, LEAD)
    assert store.read(path) == MEMORY
    c = store.log(limit=1)[0]
    assert len(store.log(limit=100)) == commits + 1  # history is never rewritten
    assert c.trailers["Reverts"] == [promo.commit_sha] and c.tools == ["promote-undo"]
    assert c.actor == "user:lead" and c.email == "lead@example.com"
    assert (undone.undo_commit_sha, undone.undone_by) == (c.sha, "lead")
    assert ReviewState.objects.count() == 0
    with pytest.raises(review.AlreadyReviewed, match="already undone by lead"):
        review.undo(store, ledger, promo.pk, LEAD)
    with pytest.raises(NotFound):
        review.undo(store, ledger, 999, LEAD)


def test_undo_keeps_unrelated_edits_and_refuses_edited_lines(store, ledger, entries) -> None:
    path = store.path_for(Kind.MEMORY, "ops-bot")
    promo = promote_draft(store, ledger, [entries["a"]], "memory", scope="ops-bot")
    edited = store.read(path).replace("## Facts\n", "## Facts\n- Office is in Oslo.\n")
    store.write(path, edited, actor=Actor.user("alice"), tool="edit")
    review.undo(store, ledger, promo.pk, LEAD)
    assert store.read(path) == MEMORY.replace("## Facts\n", "## Facts\n- Office is in Oslo.\n")

    promo = promote_draft(store, ledger, [entries["a"]], "memory", scope="ops-bot")
    text = store.read(path).replace("Canaries catch bad builds.", "Canaries work.")
    store.write(path, text, actor=Actor.user("alice"), tool="edit")
    head = store.head()
    with pytest.raises(review.UndoConflict, match="edit it by hand"):
        review.undo(store, ledger, promo.pk, LEAD)
    assert store.head() == head and store.read(path) == text
    assert ReviewState.objects.get().status == "promoted"


def test_undo_of_a_promotion_that_created_the_file_deletes_it(store, ledger, entries) -> None:
    promo = promote_draft(store, ledger, [entries["c"]], "world", name="search")
    assert store.exists("memory/world/search.md")
    review.undo(store, ledger, promo.pk, LEAD)
    assert not store.exists("memory/world/search.md")
    assert store.log(limit=1)[0].trailers["Reverts"] == [promo.commit_sha]


def test_rebuild_from_trailers_restores_promotions_undos_and_keeps_dismissals(
        store, ledger, entries) -> None:
    promote_draft(store, ledger, [entries["a"], entries["b"]], "memory", scope="ops-bot")
    skill = promote_draft(store, ledger, [entries["c"]], "skill", name="rerank",
                          description="Rerank results. Use when BM25 is not enough.")
    review.undo(store, ledger, skill.pk, LEAD)
    promote_draft(store, ledger, [entries["c"]], "global")  # promoted again after the undo
    review.dismiss(store, ledger, [entries["d"]], "lead")
    before = snapshot()
    assert len(before[0]) == 4 and len(before[1]) == 3

    found, stats = review.scan(store)
    assert [f.target_kind for f in found] == ["global", "skill", "memory"]  # newest first
    assert found[1].undone_by == "lead" and found[1].refs == []

    ReviewState.objects.filter(status="promoted").delete()
    Promotion.objects.all().delete()
    stats = review.rebuild(store, ledger, dry_run=True)
    assert (stats.promotions, stats.undone, stats.entries) == (3, 1, 3)
    assert Promotion.objects.count() == 0
    stats = review.rebuild(store, ledger)
    assert (stats.promotions, stats.undone, stats.entries, stats.dismissals_kept) == (3, 1, 3, 1)
    assert stats.skipped == []
    assert snapshot() == before
    review.rebuild(store, ledger)
    assert snapshot() == before  # twice changes nothing


def test_rebuild_skips_trailers_that_are_not_daily_entries(store, ledger) -> None:
    store.write("memory/MEMORY.md", "# Shared\n", actor=LEAD, tool="promote",
                trailers=[("Promoted-From", "memory/world/x.md#abc"),
                          ("Promoted-From", "garbage")])
    stats = review.rebuild(store, ledger)
    assert stats.promotions == 1 and stats.entries == 0
    assert len(stats.skipped) == 2 and "is not a daily entry" in stats.skipped[0]
    assert ReviewState.objects.count() == 0
