"""The editor's draft: entries in the target's style, provenance markers, and a lead's
edits kept when the target or the place changes (`refit_draft`)."""

from __future__ import annotations

import pytest

from memoryui import review
from memoryui.review.drafts import refit_draft
from memoryui.store import Store, promote

from .conftest import MEMORY, log

D = "2026-02-12"


@pytest.fixture
def entries(store: Store, memory: str) -> dict[str, str]:
    return {
        "canary": log(store, "ops-bot", D, "09:15", "Canary at 5% caught the bad build."),
        "code": log(store, "ops-bot", D, "10:02", "Rollback worked.\n\n## Root cause\n\nA lock."),
    }


def eid(key: str) -> str:
    return key.split("#")[1]


def test_draft_into_a_list_is_an_item_with_or_without_a_marker(store, ledger, entries) -> None:
    target = review.make_target(store, "memory", "ops-bot")
    items = review.resolve(store, ledger, [entries["canary"]])
    plain = review.make_draft(target, items, 1)  # under ## Facts
    assert plain.text == MEMORY.replace(
        "- I work for Initech.\n", "- I work for Initech.\n- Canary at 5% caught the bad build.\n")
    marked = review.make_draft(target, items, 1, provenance=True)
    mark = f"([{D}, ops-bot](daily/{D}.md#e-{eid(entries['canary'])}))"
    assert marked.text == MEMORY.replace(
        "- I work for Initech.\n",
        f"- I work for Initech.\n- Canary at 5% caught the bad build. {mark}\n")
    # Into global memory (a new file) the link goes up to the scope's daily log.
    shared = review.make_draft(review.make_target(store, "global"), items, provenance=True)
    assert shared.text == (f"Canary at 5% caught the bad build. ([{D}, ops-bot](../agents/"
                           f"ops-bot/memory/daily/{D}.md#e-{eid(entries['canary'])}))\n")


def test_refit_without_edits_is_the_new_draft(store, ledger, entries) -> None:
    old = review.make_target(store, "memory", "ops-bot")
    items = review.resolve(store, ledger, [entries["canary"]])
    started = review.make_draft(old, items, None).text
    new = review.make_target(store, "global")
    draft = refit_draft(old, new, items, text=started, started=started)
    assert draft.text == "Canary at 5% caught the bad build.\n"


def test_changing_the_place_keeps_the_leads_edits_restyled(store, ledger, entries) -> None:
    target = review.make_target(store, "memory", "ops-bot")
    items = review.resolve(store, ledger, [entries["canary"], entries["code"]])
    started = review.make_draft(target, items, None, provenance=True).text
    mark = f"([{D}, ops-bot](daily/{D}.md#e-{eid(entries['canary'])}))"
    assert f"- Check canaries.\n- Canary at 5% caught the bad build. {mark}\n" in started
    edited = started.replace("Canary at 5% caught the bad build.", "Canaries at 5% catch bad builds.")
    # Into global memory (no list there): a paragraph, the marker re-pointed, headings kept.
    shared = review.make_target(store, "global")
    draft = refit_draft(target, shared, items, text=edited, started=started, provenance=True)
    assert draft.text.startswith(
        f"Canaries at 5% catch bad builds. ([{D}, ops-bot](../agents/ops-bot/memory/daily/"
        f"{D}.md#e-{eid(entries['canary'])}))\n\nRollback worked.")
    assert [h.text for h in promote.headings(draft.text)] == ["Root cause"]
    # Back under "## Facts" of the same MEMORY.md: a list item again, heading demoted to ###.
    again = refit_draft(shared, target, items, text=draft.text,
                        started=review.make_draft(shared, items, provenance=True).text, place=1,
                        provenance=True)
    assert again.text.startswith(
        f"# ops-bot memory\n\n## Facts\n- I work for Initech.\n- Canaries at 5% catch bad "
        f"builds. {mark}\n\nRollback worked.")
    assert [(h.level, h.text) for h in promote.headings(again.text)] == [
        (1, "ops-bot memory"), (2, "Facts"), (3, "Root cause"), (2, "Lessons")]


def test_refit_into_a_new_world_topic_keeps_the_edits_under_its_title(store, ledger,
                                                                       entries) -> None:
    target = review.make_target(store, "memory", "ops-bot")
    items = review.resolve(store, ledger, [entries["canary"]])
    started = review.make_draft(target, items).text
    edited = started.replace("caught the bad build", "caught build 4711")
    world = review.make_target(store, "world", name="deploys")
    draft = refit_draft(target, world, items, text=edited, started=started)
    assert draft.text == "# Deploys\n\nCanary at 5% caught build 4711.\n"
    # ... and from there into a numbered list, as its next item.
    store.write("memory/MEMORY.md", "# Shared\n\n1. one\n", actor=review_actor(), tool="t")
    shared = review.make_target(store, "global")
    moved = refit_draft(world, shared, items, text=draft.text,
                        started=review.make_draft(world, items).text)
    assert moved.text == "# Shared\n\n1. one\n2. Canary at 5% caught build 4711.\n"


def review_actor():
    from .conftest import LEAD

    return LEAD


def test_another_place_in_the_same_file_keeps_edits_to_its_other_lines(store, ledger,
                                                                        entries) -> None:
    target = review.make_target(store, "memory", "ops-bot")
    items = review.resolve(store, ledger, [entries["canary"]])
    started = review.make_draft(target, items, None).text  # at the end, after "Lessons"
    edited = started.replace("I work for Initech.", "I work for Initech (since 2024).")
    edited = edited.replace("caught the bad build", "caught build 4711")
    draft = refit_draft(target, target, items, text=edited, started=started, place=1)
    assert draft.text == MEMORY.replace(
        "- I work for Initech.\n",
        "- I work for Initech (since 2024).\n- Canary at 5% caught build 4711.\n")
    assert draft.target.text == MEMORY  # the save still checks against the file as it was


def test_a_new_skills_description_field_fills_the_front_matter_unless_edited_in_the_text(
        store, ledger, entries) -> None:
    skill = review.make_target(store, "skill", name="canary-deploys")
    items = review.resolve(store, ledger, [entries["canary"]])
    started = review.make_draft(skill, items).text  # drafted before a description was typed
    filled = review.fill_description(skill, started, started, "Deploy behind a canary.")
    assert filled == started.replace("description: ''", "description: Deploy behind a canary.")
    # The body stays byte for byte.
    assert filled.split("---\n", 2)[2] == started.split("---\n", 2)[2]
    # The lead wrote a description in the text itself: that one is saved.
    own = started.replace("description: ''", "description: Mine.")
    assert review.fill_description(skill, own, started, "Deploy behind a canary.") == own
    # Any other target (an existing skill's text included) is saved as the lead left it.
    memory = review.make_target(store, "memory", "ops-bot")
    assert review.fill_description(memory, "text\n", "text\n", "x") == "text\n"
