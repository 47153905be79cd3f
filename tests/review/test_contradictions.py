"""Duplicates by meaning and contradiction candidates (memoryui.review.meaning,
contradictions, cues), on a real Store with the real embedding model and the ORM stores."""

from __future__ import annotations

import datetime as dt
import subprocess

import pytest

from memoryui import review
from memoryui.review import contradictions, cues, meaning
from memoryui.search.embeddings import embedder
from memoryui.store import Actor, Kind, Store

from .conftest import LEAD, log

DAY = dt.date(2026, 2, 12)
REFUNDS_OLD = "Refunds are allowed for purchases under 30 days."
REFUNDS_NEW = "Refunds only under 14 days since the policy change."
POLICY = (f"# support-bot memory\n\n## Policies\n- {REFUNDS_OLD}\n- Backups run nightly.\n"
          "- Alice owns the billing service.\n")

pytestmark = pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")


@pytest.fixture
def policy(store: Store) -> str:
    meaning.clear_caches()
    path = store.path_for(Kind.MEMORY, "support-bot")
    store.write(path, POLICY, actor=Actor.agent("support-bot"), tool="reflect")
    return path


@pytest.fixture
def verdicts(db):
    from memoryui.review.state import VERDICTS

    return VERDICTS


def commits_of(store: Store, path: str) -> list[str]:
    return subprocess.run(["git", "-C", str(store.root), "log", "--format=%H", "--", path],
                          capture_output=True, text=True, check=True).stdout.split()


def marked(store: Store, ledger, verdicts, keys: list[str]) -> list[review.Item]:
    items = review.resolve(store, ledger, keys)
    contradictions.mark(store, verdicts, items)
    return items


def test_the_refunds_example_is_a_contradiction_and_says_why(store, ledger, verdicts, policy):
    key = log(store, "support-bot", DAY.isoformat(), "09:00", REFUNDS_NEW)
    (it,) = marked(store, ledger, verdicts, [key])
    assert [m.passage.text for m in it.conflicts] == [f"- {REFUNDS_OLD}"]
    assert it.conflicts[0].differences == (cues.NUMBER,)
    assert it.conflicts[0].passage.path == policy and it.conflicts[0].passage.start == 4
    assert it.paraphrase is None


def test_a_paraphrase_is_a_duplicate_and_unrelated_text_is_nothing(store, ledger, verdicts,
                                                                    policy):
    para = log(store, "support-bot", DAY.isoformat(), "09:00",
               "The billing service is owned by Alice.")
    other = log(store, "support-bot", DAY.isoformat(), "10:00",
                "The CI pipeline caches node_modules between runs.")
    dup, unrelated = marked(store, ledger, verdicts, [para, other])
    assert dup.paraphrase is not None and dup.conflicts == []
    assert dup.paraphrase.passage.text == "- Alice owns the billing service."
    assert unrelated.paraphrase is None and unrelated.conflicts == []


def test_a_negation_is_a_contradiction(store, ledger, verdicts, policy):
    key = log(store, "support-bot", DAY.isoformat(), "09:00", "Backups do not run nightly.")
    (it,) = marked(store, ledger, verdicts, [key])
    assert [(m.passage.text, m.differences) for m in it.conflicts] == [
        ("- Backups run nightly.", (cues.NEGATION,))]


def test_the_cues() -> None:
    assert cues.differences(REFUNDS_OLD, REFUNDS_NEW) == [cues.NUMBER]
    assert cues.differences("Backups run nightly.", "Backups do not run nightly.") == \
        [cues.NEGATION]
    assert cues.differences("Alice owns billing today.", "Bob owns billing today.") == \
        [cues.NAME]
    assert cues.differences("The review is on 2026-03-14.", "The review is on 2026-03-21.") \
        == [cues.DATE]
    # the same values written otherwise, or a number standing for another thing, are not
    assert cues.differences("Dumps run at 02:00.", "Dumps run every night at 2:00.") == []
    assert cues.differences("Dumps run at 02:00.", "Dumps are kept for 30 days.") == []
    assert cues.differences("Deploys need approval.", "Deploys no longer need approval.") \
        == [cues.NEGATION]


def test_the_files_page_lists_undecided_candidates(store, ledger, verdicts, policy):
    key = log(store, "support-bot", DAY.isoformat(), "09:00", REFUNDS_NEW)
    log(store, "ops-bot", DAY.isoformat(), "09:00", "Refunds only under 7 days.")  # another scope
    found = contradictions.in_file(store, ledger, verdicts, policy, DAY)
    assert [(c.item.key, c.match.passage.start) for c in found] == [(key, 4)]
    assert contradictions.in_file(store, ledger, verdicts,
                                  store.path_for(Kind.DAILY, "support-bot", DAY.isoformat()),
                                  DAY) is None  # a daily log is not a curated file


def test_keep_both_and_dismiss_are_remembered_and_change_no_file(store, ledger, verdicts,
                                                                 policy):
    k1 = log(store, "support-bot", DAY.isoformat(), "09:00", REFUNDS_NEW)
    k2 = log(store, "support-bot", DAY.isoformat(), "10:00", "Backups do not run nightly.")
    one, two = marked(store, ledger, verdicts, [k1, k2])
    contradictions.decide(store, ledger, verdicts, user="lead", key=k1, path=policy,
                          digest=one.conflicts[0].passage.digest, choice=contradictions.KEEP)
    contradictions.decide(store, ledger, verdicts, user="lead", key=k2, path=policy,
                          digest=two.conflicts[0].passage.digest,
                          choice=contradictions.DISMISS)
    assert store.read(policy) == POLICY
    assert len(commits_of(store, policy)) == 1  # only the agent's own write
    again = marked(store, ledger, verdicts, [k1, k2])
    assert [it.conflicts for it in again] == [[], []]
    assert contradictions.in_file(store, ledger, verdicts, policy, DAY) == []
    assert [it.status for it in again] == ["todo", "todo"]  # still in the queue


def test_replace_is_one_commit_citing_the_entry_and_can_be_undone(store, ledger, verdicts,
                                                                  policy):
    key = log(store, "support-bot", DAY.isoformat(), "09:00", REFUNDS_NEW)
    (it,) = marked(store, ledger, verdicts, [key])
    old = it.conflicts[0].passage
    store.write(policy, POLICY + "- Edited elsewhere since.\n", actor=LEAD, tool="edit")
    sha = contradictions.replace(store, ledger, verdicts, actor=LEAD, key=key, path=policy,
                                 digest=old.digest)
    assert store.read(policy) == POLICY.replace(REFUNDS_OLD, REFUNDS_NEW) + \
        "- Edited elsewhere since.\n"
    show = subprocess.run(["git", "-C", str(store.root), "show", "-s", "--format=%an%n%B",
                           sha], capture_output=True, text=True, check=True).stdout
    assert show.startswith("lead\nReplace " + policy + ":4 with the 2026-02-12 09:00 entry")
    assert key in show and f"Promoted-From: {key}" in show and REFUNDS_OLD in show
    (after,) = review.resolve(store, ledger, [key])
    assert after.status == "promoted"
    promo = ledger.recent(1)[0]
    review.undo(store, ledger, promo.pk, LEAD)
    assert store.read(policy) == POLICY + "- Edited elsewhere since.\n"


def test_replace_refuses_a_reworded_line(store, ledger, verdicts, policy):
    key = log(store, "support-bot", DAY.isoformat(), "09:00", REFUNDS_NEW)
    (it,) = marked(store, ledger, verdicts, [key])
    digest = it.conflicts[0].passage.digest
    store.write(policy, POLICY.replace("30 days", "31 days"), actor=LEAD, tool="edit")
    with pytest.raises(review.ReviewError, match="has changed since"):
        contradictions.replace(store, ledger, verdicts, actor=LEAD, key=key, path=policy,
                               digest=digest)
    (still,) = review.resolve(store, ledger, [key])
    assert still.status == "todo"
    assert store.read(policy) == POLICY.replace("30 days", "31 days")


def test_huge_binary_looking_and_foreign_entries_are_judged_without_error(store, ledger,
                                                                         verdicts, policy):
    huge = log(store, "support-bot", DAY.isoformat(), "09:00",
               "Refunds under 30 days." + " x1 y2" * 170_000)  # about 1 MB
    binary = log(store, "support-bot", DAY.isoformat(), "10:00",
                 "\ufffd\ufffd 0x7f 0xdeadbeef ÿþ")
    foreign = log(store, "support-bot", DAY.isoformat(), "11:00", "退款期限为三十天。")
    items = marked(store, ledger, verdicts, [huge, binary, foreign])
    assert [it.conflicts for it in items[1:]] == [[], []]
    assert [it.paraphrase for it in items[1:]] == [None, None]
    assert cues.differences("a " * 500_000, "b " * 500_000) == []
