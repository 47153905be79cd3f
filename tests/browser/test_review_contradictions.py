"""In real Chromium: contradiction candidates on review cards, resolved by "replace the old
line", "keep both" and "dismiss" without a reload; related memories load into the card; a
curated file's page loads its meaning panel by itself; no console error or CSP violation."""

from __future__ import annotations

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from memoryui.models import ContradictionVerdict, ReviewState
from memoryui.review import dom_id, meaning
from memoryui.search.embeddings import embedder
from memoryui.store import Actor, Kind
from tests.browser.conftest import htmx_idle, watch_console
from tests.browser.test_review import _log

pytestmark = pytest.mark.skipif(embedder() is None, reason="the embedding model is missing")

D2 = "2026-02-12"
MEMORY = ("# support-bot memory\n\n- Refunds are allowed for purchases under 30 days.\n"
          "- Backups run nightly.\n- The API rate limit is 100 requests per minute.\n")


def _memories(store) -> str:
    """support-bot's MEMORY.md (its path) and ops-bot's, which relates to a backup entry."""
    meaning.clear_caches()
    path = store.path_for(Kind.MEMORY, "support-bot")
    store.write(path, MEMORY, actor=Actor.agent("support-bot"), tool="reflect")
    store.write(store.path_for(Kind.MEMORY, "ops-bot"),
                "# ops-bot memory\n\n- Backups are encrypted with the ops team's key.\n",
                actor=Actor.agent("ops-bot"), tool="reflect")
    return path


def test_replace_keep_and_dismiss_on_cards(live_workspace, page_for):
    base, store = live_workspace
    path = _memories(store)
    refunds = _log(store, "support-bot", D2, "09:00",
                   "Refunds only under 14 days since the policy change.")
    backups = _log(store, "support-bot", D2, "10:00", "Backups do not run nightly.")
    limit = _log(store, "support-bot", D2, "11:00",
                 "The API rate limit is 500 requests per minute.")

    page = page_for("curator", "lead")
    errors = watch_console(page)
    page.goto(f"{base}/review/?from={D2}&to={D2}")
    marker = page.evaluate("() => (window.__notReloaded = Math.random())")

    # Each card shows the old line and the new entry side by side.
    for key, old in ((refunds, "under 30 days"), (backups, "Backups run nightly."),
                     (limit, "100 requests")):
        box = page.locator(f"#{dom_id(key)} .contradiction")
        expect(box).to_have_count(1)
        expect(box.locator(".is-old")).to_contain_text(old)
    # Related memories load into the card by themselves.
    expect(page.locator(f"#{dom_id(backups)} .related")).to_contain_text("known by ops-bot")

    page.locator(f"#{dom_id(backups)} .js-keep").click()
    expect(page.locator(f"#{dom_id(backups)} .contradiction")).to_have_count(0)
    expect(page.locator(".flash")).to_contain_text("Kept both")
    htmx_idle(page)
    page.locator(f"#{dom_id(limit)} .js-not-contradiction").click()
    expect(page.locator(f"#{dom_id(limit)} .contradiction")).to_have_count(0)
    htmx_idle(page)
    page.locator(f"#{dom_id(refunds)} .js-replace").click()
    expect(page.locator(f"#{dom_id(refunds)}")).to_have_class("queue-item is-promoted")
    htmx_idle(page)

    assert page.evaluate("() => window.__notReloaded") == marker
    assert store.read(path) == MEMORY.replace(
        "Refunds are allowed for purchases under 30 days.",
        "Refunds only under 14 days since the policy change.")
    assert sorted(ContradictionVerdict.objects.values_list("choice", flat=True)) == \
        ["dismiss", "keep", "replace"]
    assert ReviewState.objects.get().status == "promoted"
    page.reload()  # the choices are remembered
    for key in (backups, limit):
        expect(page.locator(f"#{dom_id(key)}")).to_be_visible()
        expect(page.locator(f"#{dom_id(key)} .contradiction")).to_have_count(0)
    assert errors == []


def test_the_file_page_loads_its_meaning_panel(live_workspace, page_for):
    base, store = live_workspace
    path = _memories(store)
    _log(store, "support-bot", timezone.localdate().isoformat(), "09:00",
         "Backups do not run nightly.")

    page = page_for("curator", "lead")
    errors = watch_console(page)
    page.goto(f"{base}/f/{path}")
    panel = page.locator(".file-meaning")
    expect(panel.locator(".related")).to_contain_text("known by ops-bot")
    expect(panel.locator(".contradiction .is-old")).to_contain_text("Backups run nightly.")
    panel.locator(".js-not-contradiction").click()  # a plain form: the file's page comes back
    expect(page.locator(".flash")).to_contain_text("Dismissed")
    expect(page.locator(".file-meaning .related")).to_contain_text("known by ops-bot")
    expect(page.locator(".file-meaning .contradiction")).to_have_count(0)
    assert ContradictionVerdict.objects.get().choice == "dismiss"
    assert store.read(path) == MEMORY
    assert errors == []
