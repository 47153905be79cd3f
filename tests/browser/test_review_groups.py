"""In real Chromium: a near-duplicate group card, "dismiss all" updating every count without
a reload, the bulk bar's "N selected", and no console error.

With MEMORYUI_SCREENSHOTS=1 docs/screenshots/review-groups.png is refreshed."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import expect

from memoryui.demo import SUBJECTS
from memoryui.models import ReviewState
from memoryui.review import dom_id
from memoryui.store import Actor, Kind
from tests.browser.conftest import htmx_idle, screenshot, watch_console
from tests.browser.test_review import _log

D0, D1, D2 = "2026-02-10", "2026-02-11", "2026-02-12"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CANARY = SUBJECTS["deploy"]


def _count(page, selector: str) -> str:
    return " ".join(page.locator(selector).inner_text().split())


def test_group_card_dismiss_all_and_counts_without_reload(live_workspace, page_for):
    base, store = live_workspace
    store.write(store.path_for(Kind.MEMORY, "support-bot"),
                "# support-bot memory\n\n- Globex prefers email over chat; contact is Dana.\n",
                actor=Actor.agent("support-bot"), tool="reflect")
    group = [_log(store, scope, day, time, CANARY.format(n=n)) for n, (scope, day, time) in
             enumerate([("ops-bot", D0, "09:00"), ("ops-bot", D1, "09:00"),
                        ("deploy-bot", D2, "09:30")], 1)]
    disk = _log(store, "ops-bot", D2, "11:00", "Paged Bob at night for disk pressure.")
    known = _log(store, "support-bot", D2, "12:00", "Globex prefers email over chat.")
    rerank = _log(store, "research-agent", D1, "13:00", "BM25 plus rerank beats dense-only.")

    page = page_for("curator", "lead")
    errors = watch_console(page)
    page.goto(f"{base}/review/?from={D0}&to={D2}")
    marker = page.evaluate("() => (window.__notReloaded = Math.random())")

    # One card for the three canary entries, with their dates and scopes.
    card = page.locator(f"#{dom_id(group[-1])}")
    expect(card.locator(".badge-group")).to_have_text("×3 similar")
    members = card.locator(".entry-group-members li")
    expect(members).to_have_count(2)
    expect(members.nth(0)).to_contain_text(D1)
    expect(members.nth(1)).to_contain_text(D0)
    expect(members.nth(0)).to_contain_text("ops-bot")
    expect(page.locator("#review-total")).to_contain_text("6 entries to review")
    expect(page.locator(f"#{dom_id(known)} .badge-known")).to_contain_text("already known")
    # The "already known" link goes to the file's line.
    href = page.locator(f"#{dom_id(known)} .badge-known").get_attribute("href")
    assert href.endswith("#L3")

    # The bulk bar counts the selected entries.
    bar = page.locator("#bulk-count")
    expect(bar).to_have_text("No entries selected")
    page.locator(f"#{dom_id(disk)} .js-select").check()
    expect(bar).to_have_text("1 entry selected")
    page.locator(f"#{dom_id(rerank)} .js-select").check()
    expect(bar).to_have_text("2 entries selected")
    page.locator(f"#{dom_id(rerank)} .js-select").uncheck()
    expect(bar).to_have_text("1 entry selected")
    card.scroll_into_view_if_needed()
    screenshot(page, "review-groups")
    if os.environ.get("MEMORYUI_SCREENSHOTS") == "1":  # refresh the README's picture
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / "review-groups.png"), full_page=False)

    # Dismiss all in the group: every count changes, without a reload.
    assert _count(page, f"[data-day-count='{D2}']") == "3"
    card.locator(".js-dismiss-group").click()
    expect(card).to_have_class("queue-item is-dismissed")
    htmx_idle(page)
    expect(page.locator("#review-total")).to_contain_text("3 entries to review")
    chips = page.locator("#review-counts")
    expect(chips).to_contain_text("All 3")
    expect(chips).not_to_contain_text("deploy-bot")
    expect(chips).to_contain_text("ops-bot 1")
    expect(page.locator(f"[data-day-count='{D2}']")).to_have_text("2")
    expect(page.locator(f"[data-day-count='{D1}']")).to_have_text("1")
    assert ReviewState.objects.filter(status="dismissed").count() == 3
    # The selection made before is still counted (the dismissed card had none).
    expect(bar).to_have_text("1 entry selected")

    # A bulk dismissal of the selected entry updates the counts too.
    page.locator(".js-dismiss-selected").click()
    htmx_idle(page)
    expect(page.locator("#review-total")).to_contain_text("2 entries to review")
    expect(bar).to_have_text("No entries selected")
    expect(page.locator(f"[data-day-count='{D2}']")).to_have_text("1")
    assert page.evaluate("() => window.__notReloaded") == marker
    assert errors == []
