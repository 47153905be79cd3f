"""Near-duplicate groups and "already known" marks (memoryui.review.similar)."""

from __future__ import annotations

import datetime as dt

from memoryui import review
from memoryui.demo import SUBJECTS
from memoryui.review import similar
from memoryui.store import Actor, Kind, Store

from .conftest import log

D0, D2 = dt.date(2026, 2, 10), dt.date(2026, 2, 12)
CANARY = SUBJECTS["deploy"]  # "Deployed api v2.{n} to production; canary at 5% …"


def queue(store: Store, ledger, **kw) -> review.Queue:
    return review.build_queue(store, ledger, review.Filters(D0, D2, **kw))


def test_the_demos_canary_entries_group_and_its_other_facts_do_not() -> None:
    canaries = [CANARY.format(n=n) for n in range(1, 6)]
    reworded = "Deployed api v2.9 to prod; canary at 10% for 15 minutes, no errors seen."
    others = [t.format(n=3) for k, t in SUBJECTS.items() if k != "deploy"]
    texts = [*canaries, reworded, *others]
    groups = similar.group(texts, str, 88)
    assert groups[0] == [*canaries, reworded]  # one card, newest (first given) leading
    assert [g for g in groups[1:] if len(g) > 1] == []  # every other fact stands alone
    assert len(groups) == 1 + len(others)


def test_what_is_not_similar() -> None:
    # Numbers are masked, but a short text cannot be told apart from another short one,
    # and a text that only shares a few words with a longer one is another fact.
    assert similar.normalise("Deployed API v2.14 at 5%, sha 3f2a9c1e") == \
        "deployed api # at # sha #"
    assert similar.group(["Fact 1-10.", "Fact 2-20."], str, 88) == [["Fact 1-10."],
                                                                   ["Fact 2-20."]]
    long_ = ("Deployed api v2.3 to production; canary at 5% for 20 minutes, then rolled "
             "back billing-worker after a schema mismatch and paged Bob about disk pressure.")
    assert len(similar.group([CANARY.format(n=1), long_], str, 88)) == 2
    # Identifiers are kept: another incident, customer or host is another fact.
    for subject in ("incident", "refund", "disk", "ticket"):
        one, two = SUBJECTS[subject].format(n=3), SUBJECTS[subject].format(n=7)
        assert len(similar.group([one, two], str, 88)) == 2, subject
        assert len(similar.group([one, one.rstrip(".") + ", today."], str, 88)) == 1
    assert similar.normalise("Incident INC-6: p99 at 2.6s; ticket #482, db-7 at 87%") == \
        "incident inc6 p99 at # ticket no482 db7 at #"
    assert similar.similar(similar.normalise(CANARY.format(n=1)),
                           similar.normalise(SUBJECTS["rollback"].format(n=1)), 88) == 0


def test_threshold_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("MEMORYUI_SIMILAR", "0")
    assert similar.threshold() == 0
    assert len(similar.group([CANARY.format(n=1), CANARY.format(n=2)], str)) == 2
    monkeypatch.setenv("MEMORYUI_SIMILAR", "95")
    assert similar.threshold() == 95
    monkeypatch.setenv("MEMORYUI_SIMILAR", "lots")
    assert similar.threshold() == similar.DEFAULT_THRESHOLD


def test_the_queue_shows_a_group_as_one_card_across_days_and_scopes(store, ledger) -> None:
    keys = [log(store, scope, day.isoformat(), time, CANARY.format(n=n))
            for n, (scope, day, time) in enumerate([
                ("ops-bot", D0, "09:00"), ("ops-bot", D2, "09:00"),
                ("deploy-bot", D2, "10:00")], 1)]
    other = log(store, "ops-bot", D2.isoformat(), "11:00", "Globex prefers email over chat.")
    q = queue(store, ledger)
    assert q.total == 4 and q.cards == 2 and q.grouped == 2
    assert [it.key for it in q.items] == [other, keys[2]]
    card = q.items[1]
    assert [it.key for it in card.group] == [keys[2], keys[1], keys[0]]  # newest first
    assert {it.scope for it in card.group} == {"ops-bot", "deploy-bot"}
    assert q.day_counts == {D2.isoformat(): 3, D0.isoformat(): 1}
    assert q.items[0].group is None
    # Decided entries leave the group; "all" shows each entry as itself.
    review.dismiss(store, ledger, [keys[2]], "lead")
    q = queue(store, ledger)
    assert [it.key for it in q.items[1].group] == [keys[1], keys[0]]
    assert all(it.group is None for it in queue(store, ledger, status="all").items)


def test_already_known_marks_the_file_and_line(store, ledger) -> None:
    memory = store.path_for(Kind.MEMORY, "ops-bot")
    store.write(memory, "# ops-bot memory\n\n## Deploys\n\n- Canary first.\n"
                "- Deployed api v2.0 to production; canary at 5% for 20 minutes.\n",
                actor=Actor.agent("ops-bot"), tool="reflect")
    topic = store.path_for(Kind.WORLD, name="customers")
    store.write(topic, "# Customers\n\nSome text.\n\nGlobex prefers email over chat; "
                "their contact is Dana.\n", actor=Actor.user("lead"), tool="edit")
    known = log(store, "ops-bot", D2.isoformat(), "09:00", CANARY.format(n=7))
    world = log(store, "support-bot", D2.isoformat(), "10:00",
                "Globex prefers email over chat, contact Dana.")
    new = log(store, "support-bot", D2.isoformat(), "11:00",
              "Initech asked for a refund of their last invoice; approved.")
    marks = {it.key: it.known for it in queue(store, ledger).items}
    assert (marks[known].path, marks[known].line) == (memory, 6)
    assert (marks[world].path, marks[world].line) == (topic, 5)
    assert marks[new] is None
    # Another scope's MEMORY.md is not "known" for this scope (the newer entry leads
    # the group now).
    other = log(store, "research-agent", D2.isoformat(), "12:00", CANARY.format(n=8))
    assert {it.key: it.known for it in queue(store, ledger).items}[other] is None
    # The mark follows the file: edited away, the fact is no longer known.
    review.dismiss(store, ledger, [other], "lead")
    assert {it.key: it.known for it in queue(store, ledger).items}[known] is not None
    store.write(memory, "# ops-bot memory\n\n- Canary first.\n",
                actor=Actor.agent("ops-bot"), tool="reflect")
    assert {it.key: it.known for it in queue(store, ledger).items}[known] is None


def test_paragraphs_and_list_items_with_their_lines() -> None:
    text = ("# T\n\nFirst para\ncontinues here.\n\n- item one\n  more\n* item two\n\n"
            "```\ncode\n```\n| a | b |\n|---|---|\n| x | y |\n")
    assert similar.paragraphs(text) == [
        (3, "First para continues here."), (6, "- item one more"), (8, "* item two"),
        (13, "| a | b |"), (15, "| x | y |")]


def test_a_memory_file_that_is_a_symbolic_link_is_never_read(store, ledger, tmp_path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- Deployed api v2.0 to production; canary at 5% for 20 minutes.\n")
    memory = store.root / store.path_for(Kind.MEMORY, "ops-bot")
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.symlink_to(outside)
    key = log(store, "ops-bot", D2.isoformat(), "09:00", CANARY.format(n=7))
    assert {it.key: it.known for it in queue(store, ledger).items}[key] is None
