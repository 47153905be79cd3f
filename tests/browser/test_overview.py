"""In real Chromium: the overview of a 300-agent workspace narrows as the lead types,
sorts by size, pages and goes Back, without reloading the page and without console errors.

With MEMORYUI_SCREENSHOTS=1, docs/screenshots/overview-filter.png is refreshed."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import htmx_idle, screenshot, watch_console

N = 300
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def make_agents(store) -> None:
    """300 agents' MEMORY.md written natively and committed at once, as `manage.py
    snapshot` does (fast, and the overview reads it like any commit). agent-123 is the
    largest."""
    for i in range(N):
        f = store.root / "agents" / f"agent-{i:03d}" / "memory" / "MEMORY.md"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("# memory\n" + "x" * (5000 if i == 123 else 10 + i % 97) + "\n")
    done = store.commit_pending(actor=Actor.user("importer"), message="Import 300 agents")
    assert not done.refused


def test_filter_sort_and_page_three_hundred_agents(live_workspace, page_for):
    base, store = live_workspace
    make_agents(store)
    page = page_for("viewer")
    errors = watch_console(page)
    page.goto(base + "/")
    rows = page.locator("table.ov-scopes tbody tr th[scope=row] a")
    expect(rows).to_have_count(50)
    expect(page.locator("#ov-scopes-table .ov-range")).to_have_text("1–50 of 300")
    page.evaluate("window.__sameDocument = true")  # gone if the page reloads

    page.locator("#ov-q").press_sequentially("agent-12", delay=20)
    expect(rows).to_have_count(10)  # agent-120 … agent-129
    expect(rows.first).to_have_text("agent-120")
    expect(page.locator("#ov-scopes-table .ov-range")).to_contain_text("1–10 of 10")
    page.wait_for_url(re.compile(r"\?q=agent-12$"))
    assert page.evaluate("window.__sameDocument") is True
    htmx_idle(page)
    screenshot(page, "overview-filter")
    if os.environ.get("MEMORYUI_SCREENSHOTS") == "1":  # refresh the README's picture
        page.screenshot(path=str(DOCS / "overview-filter.png"), caret="initial")

    page.locator("table.ov-scopes").get_by_role("link", name="Size").click()
    expect(rows.first).to_have_text("agent-123")  # biggest first
    expect(page.locator("table.ov-scopes th[aria-sort=descending]")).to_contain_text("Size")
    page.wait_for_url(re.compile(r"sort=-size"))

    page.locator("#ov-q").fill("")
    expect(rows).to_have_count(50)
    expect(rows.first).to_have_text("agent-123")  # clearing the filter kept the sort
    htmx_idle(page)
    page.locator("#ov-scopes-table").get_by_role("link", name="Next").click()
    expect(page.locator("#ov-scopes-table .ov-range")).to_have_text("51–100 of 300")
    page.wait_for_url(re.compile(r"page=2"))
    assert page.evaluate("window.__sameDocument") is True

    page.go_back()  # htmx restores the first page from its history cache
    expect(page.locator("#ov-scopes-table .ov-range")).to_have_text("1–50 of 300")
    expect(rows.first).to_have_text("agent-123")
    assert "page=2" not in page.url
    htmx_idle(page)
    assert errors == [], errors  # nor a CSP report when htmx settles the restored page


def test_a_first_start_shows_the_agents_at_once_and_the_counts_by_itself(
        live_workspace, page_for, monkeypatch):
    """A large repository opened for the first time: the lead sees every agent by name at
    once, told that what each holds is being counted, and the page turns into the full
    overview by itself (it reloads; no script needed) once the count is done."""
    import threading

    from memoryui.search.catalogue import Catalogue

    base, store = live_workspace
    make_agents(store)
    from memoryui.search import catalogue

    monkeypatch.setattr(catalogue, "FILL_AT_ONCE_BELOW", 0)  # filled behind, as at 200k files
    counting = threading.Event()
    real = Catalogue.fill
    monkeypatch.setattr(Catalogue, "fill", lambda self: counting.wait(120) and real(self))
    try:
        page = page_for("viewer")  # (signing in lands on the overview)
        errors = watch_console(page)
        page.goto(base + "/")
        expect(page.locator(".hierarchy-notice")).to_contain_text(
            "indexing this workspace for the first time")
        expect(page.locator(".overview-stats")).to_contain_text("files not counted yet")
        rows = page.locator("table.ov-scopes tbody tr")
        expect(rows).to_have_count(50)
        expect(rows.first.locator("td").first).to_have_text("…")
        expect(page.locator("#ov-scopes-table .ov-range")).to_have_text("1–50 of 300")
        counting.set()
        expect(page.locator(".overview-stats")).to_contain_text("300 files", timeout=90_000)
        expect(page.locator("body")).not_to_contain_text("for the first time")
        expect(rows.first.locator("td").first).not_to_have_text("…")
        assert errors == [], errors
    finally:
        counting.set()
        Catalogue.of(store).wait_for_fill(120)
