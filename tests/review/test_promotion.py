"""Promotion to each target: one commit with provenance, recorded once, refused cleanly."""

from __future__ import annotations

import datetime as dt

import pytest

from memoryui import review
from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Conflict, Kind, Store, promote, skills
from memoryui.store.skills import SkillError

from .conftest import LEAD, MEMORY, draft_and_save, log

D = "2026-02-12"


@pytest.fixture
def entries(store: Store, memory: str) -> dict[str, str]:
    return {
        "canary": log(store, "ops-bot", D, "09:15", "Canary at 5% caught the bad build."),
        "code": log(store, "ops-bot", D, "10:02",
                    "Rollback worked.\n\n## Root cause\n\nA lock.\n\n```sh\n## not a heading\n```"),
        "rerank": log(store, "research-agent", D, "11:30", "BM25 plus rerank beats dense-only."),
    }


def test_into_a_scope_memory_under_a_heading_is_one_commit_with_provenance(
        store, ledger, entries) -> None:
    head = store.head()
    keys = [entries["code"], entries["canary"]]
    promo, target, text = draft_and_save(store, ledger, keys, "memory", scope="ops-bot",
                                         place=1)
    assert store.read(target.path) == text
    outline = [(h.level, h.text) for h in promote.headings(text)]
    assert outline == [(1, "ops-bot memory"), (2, "Facts"), (3, "Root cause"), (2, "Lessons")]
    assert text.index("Canary at 5%") < text.index("Rollback worked")  # oldest first
    c, before = store.log(limit=2)
    assert before.sha == head and c.sha == promo.commit_sha
    assert [f.path for f in c.files] == [target.path]
    assert c.trailers["Promoted-From"] == [entries["canary"], entries["code"]]
    assert c.actor == "user:lead" and c.email == "lead@example.com" and c.tools == ["promote"]
    assert c.subject == f"Promote 2 entries from ops-bot into {target.path}"
    assert (promo.target_path, promo.target_kind, promo.created_by) == (
        target.path, "memory", "lead")
    states = ReviewState.objects.filter(promotion=promo)
    assert {(s.entry_id, s.status, s.reviewed_by) for s in states} == {
        (k.split("#")[1], "promoted", "lead") for k in keys}
    q = review.build_queue(store, ledger, review.Filters.default(dt.date(2026, 2, 12)))
    assert [it.key for it in q.items] == [entries["rerank"]]


def test_into_global_memory_a_new_world_topic_and_a_new_skill(store, ledger, entries) -> None:
    promo, target, text = draft_and_save(store, ledger, [entries["rerank"]], "global")
    assert (target.path, text) == ("memory/MEMORY.md", "BM25 plus rerank beats dense-only.\n")
    assert store.read("memory/MEMORY.md") == text

    promo, target, text = draft_and_save(store, ledger, [entries["code"]], "world",
                                         name="Deploy Lessons")
    assert target.path == "memory/world/deploy-lessons.md" and target.name == "deploy-lessons"
    assert text.startswith("# Deploy lessons\n\nRollback worked.\n\n## Root cause")
    assert store.read(target.path) == text and promo.target_kind == "world"
    assert review.existing_names(store, Kind.WORLD) == ["deploy-lessons"]

    desc = "Ship behind a canary. Use when deploying."
    promo, target, text = draft_and_save(store, ledger, [entries["canary"]], "skill",
                                         name="canary-deploys", description=desc)
    assert target.path == "skills/canary-deploys/SKILL.md"
    skill = skills.parse(text, "canary-deploys")
    assert skill.description == desc and "Canary at 5%" in skill.body
    assert review.existing_names(store, Kind.SKILL) == ["canary-deploys"]
    assert Promotion.objects.count() == 3


def test_target_names_and_shared_files_show_every_change_there(store: Store) -> None:
    """The choosers' names and the world files "already known" reads come from the file
    catalogue: a write, an outside edit, a deletion and a commit made by hand all show on
    the next ask; a daily entry leaves them as they were."""
    import os
    import subprocess

    from memoryui.review.similar import shared_files

    store.write("memory/world/people.md", "# People\n", actor=LEAD, tool="edit")
    assert review.existing_names(store, Kind.WORLD) == ["people"]
    first = shared_files(store)
    log(store, "ops-bot", D, "09:15", "Canary at 5% caught the bad build.")
    assert review.existing_names(store, Kind.WORLD) == ["people"]
    assert shared_files(store) == first
    store.write("memory/world/vendors.md", "# Vendors\n", actor=LEAD, tool="edit")
    assert review.existing_names(store, Kind.WORLD) == ["people", "vendors"]
    (store.root / "memory/world/people.md").write_text("# People\n\nAlice leads.\n")
    store.notify(["memory/world/people.md"])  # as a sync or a scan for outside edits says
    sizes = dict(shared_files(store))
    assert sizes["memory/world/people.md"][1] == len("# People\n\nAlice leads.\n")
    store.delete("memory/world/vendors.md", actor=LEAD, tool="delete")
    assert review.existing_names(store, Kind.WORLD) == ["people"]
    (store.root / "skills/by-hand").mkdir(parents=True)
    (store.root / "skills/by-hand/SKILL.md").write_text(
        "---\nname: by-hand\ndescription: Made by hand. Use when testing.\n---\n\nBody\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "h", "GIT_AUTHOR_EMAIL": "h@x.test",
           "GIT_COMMITTER_NAME": "h", "GIT_COMMITTER_EMAIL": "h@x.test"}
    subprocess.run(["git", "add", "-A"], cwd=store.root, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "by hand"], cwd=store.root, check=True, env=env)
    assert review.existing_names(store, Kind.SKILL) == ["by-hand"]


def test_stale_target_is_a_conflict_and_nothing_is_written_or_recorded(store, ledger,
                                                                      entries) -> None:
    target = review.make_target(store, "memory", "ops-bot")
    items = review.resolve(store, ledger, [entries["canary"]])
    draft = review.make_draft(target, items, 2)
    # Meanwhile the agent reflects.
    changed = MEMORY.replace("- I work for Initech.", "- I work for Initech.\n- Tuesdays.")
    store.write(target.path, changed, actor=Actor.agent("ops-bot"), tool="reflect")
    head = store.head()
    with pytest.raises(Conflict) as exc:
        review.promote_entries(store, ledger, actor=LEAD, keys=[entries["canary"]],
                               target=target, text=draft.text, base=target.base)
    assert exc.value.current == changed
    assert store.head() == head and store.read(target.path) == changed
    assert ReviewState.objects.count() == 0 and Promotion.objects.count() == 0


def test_an_entry_is_promoted_once_and_a_dismissed_one_can_still_be(store, ledger,
                                                                    entries) -> None:
    review.dismiss(store, ledger, [entries["rerank"]], "other")
    draft_and_save(store, ledger, [entries["canary"], entries["rerank"]], "global")
    assert ReviewState.objects.get(entry_id=entries["rerank"].split("#")[1]).status == \
        "promoted"
    head = store.head()
    with pytest.raises(review.AlreadyReviewed, match="already promoted to memory/MEMORY.md"):
        draft_and_save(store, ledger, [entries["code"], entries["canary"]], "memory",
                       scope="ops-bot")
    assert store.head() == head
    assert not ReviewState.objects.filter(entry_id=entries["code"].split("#")[1]).exists()
    with pytest.raises(review.AlreadyReviewed, match="undo the promotion first"):
        review.dismiss(store, ledger, [entries["canary"]], "lead")


def test_refusals_write_nothing_and_release_the_reservation(store, ledger, entries) -> None:
    head = store.head()
    key = entries["canary"]
    target = review.make_target(store, "skill", name="my-skill")
    bad = "---\nname: other-name\ndescription: Does <things>\n---\n\n# X\n"
    with pytest.raises(SkillError) as exc:
        review.promote_entries(store, ledger, actor=LEAD, keys=[key], target=target,
                               text=bad, base=target.base)
    assert any("folder name" in p for p in exc.value.problems)
    memory = review.make_target(store, "memory", "ops-bot")
    with pytest.raises(review.ReviewError, match="already has exactly this text"):
        review.promote_entries(store, ledger, actor=LEAD, keys=[key], target=memory,
                               text=MEMORY, base=memory.base)
    with pytest.raises(review.ReviewError, match="empty"):
        review.promote_entries(store, ledger, actor=LEAD, keys=[key], target=memory,
                               text=" \n", base=memory.base)
    with pytest.raises(review.ReviewError, match="base version is missing"):
        review.promote_entries(store, ledger, actor=LEAD, keys=[key], target=memory,
                               text="x\n", base="")
    assert store.head() == head
    assert ReviewState.objects.count() == 0 and Promotion.objects.count() == 0


def test_crossing_the_budget_needs_a_confirmation(store, ledger, entries) -> None:
    path = store.path_for(Kind.MEMORY, "ops-bot")
    big = MEMORY + "".join(f"- fact {i:04d} " + "x" * 80 + "\n" for i in range(106))
    store.write(path, big, actor=Actor.agent("ops-bot"), tool="reflect")
    with pytest.raises(review.OverBudget, match="over its budget"):
        draft_and_save(store, ledger, [entries["code"]], "memory", scope="ops-bot")
    assert store.read(path) == big and ReviewState.objects.count() == 0
    promo, _t, text = draft_and_save(store, ledger, [entries["code"]], "memory",
                                     scope="ops-bot", over_budget_ok=True)
    assert store.read(path) == text and len(text.encode()) > 10_000
    info = review.budget_info(store, Kind.MEMORY, text, big)
    assert info.state == "over" and info.limits.endswith("/ 10,000 bytes")


@pytest.mark.parametrize(("kind", "scope", "name", "message"), [
    ("directive", None, None, "cannot be promoted into a directive"),
    ("nope", None, None, "unknown target"),
    ("memory", None, None, "choose the scope"),
    ("memory", "../x", None, "invalid scope name"),
    ("world", None, None, "name the world topic"),
    ("skill", None, "Bad_Name", "lowercase letters, digits and single hyphens"),
])
def test_bad_targets_are_named(store, kind, scope, name, message) -> None:
    with pytest.raises(Exception, match=message) as exc:
        review.make_target(store, kind, scope, name)
    assert getattr(exc.value, "status", None) == 400
