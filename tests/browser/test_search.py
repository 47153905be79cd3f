"""In real Chromium: the search box finds as you type (the last word is a prefix), groups with
parentheses and NOT, and marks the place of a mistake in the query."""

from __future__ import annotations

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import htmx_idle, watch_console

BOT = Actor.agent("ops-bot")


def test_live_search_finds_while_typing_and_points_at_mistakes(live_workspace, page_for):
    base, store = live_workspace
    store.write(store.path_for("note", "ops-bot", "paging"),
                "# Paging\n\nThe escalation went to the on-call lead.\n", actor=BOT, tool="t")
    store.write(store.path_for("note", "ops-bot", "canary"),
                "# Canary\n\nThe escalation of the canary deploy.\n", actor=BOT, tool="t")
    page = page_for("viewer")
    errors = watch_console(page)
    page.goto(base + "/search/")
    box = page.locator("#search-q")
    results = page.locator("#search-results")

    box.press_sequentially("escal")  # typing, not submitting: htmx asks as the text changes
    expect(results.locator("li.search-result")).to_have_count(2)
    expect(results.locator("mark", has_text="escalation").first).to_be_visible()
    htmx_idle(page)
    assert "q=escal" in page.url  # the URL follows, so a reload shows the same results

    box.fill("")
    box.press_sequentially("escalation AND NOT (canary")
    expect(results.locator(".search-error")).to_contain_text("parenthesis is not closed")
    expect(results.locator(".search-error-mark")).to_have_text("(")
    box.press_sequentially(")")
    expect(results.locator("li.search-result")).to_have_count(1)
    expect(results.locator(".search-result-path")).to_have_text(
        "agents/ops-bot/memory/notes/paging.md")
    htmx_idle(page)

    page.reload()  # without htmx: the same answer from the full page
    expect(page.locator("li.search-result")).to_have_count(1)
    assert errors == []
