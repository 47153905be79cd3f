"""In real Chromium: line anchors and ranges on a file's Source view and on blame (a range in
the URL is highlighted and scrolled to, shift-click selects one and puts it in the URL), and
"blame before this change" walking back to the older blame at the same line.

With MEMORYUI_SCREENSHOTS=1 docs/screenshots/blame.png is refreshed."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import screenshot, watch_console

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
MEM = "agents/ops-bot/memory/MEMORY.md"
V1 = "# Ops\n\n" + "".join(f"- fact {n}: the deploy window is day {n}\n" for n in range(1, 79))
V2 = V1.replace("- fact 43: the deploy window is day 43\n",
                "- fact 43: the deploy window moved to Thursday\n- fact 43b: ask Bob first\n")


def selected(page) -> list[str]:
    return page.locator("[data-lines] tr.is-selected").evaluate_all(
        "rows => rows.map(r => r.id)")


def test_line_ranges_and_blame_before(live_workspace, page_for):
    base, store = live_workspace
    first = store.write(MEM, V1, actor=Actor.agent("ops-bot"), tool="reflect").commit
    second = store.write(MEM, V2, actor=Actor.user("alice"), tool="edit",
                         message="Move the deploy window").commit
    assert first and second

    page = page_for("viewer")
    errors = watch_console(page)

    # a range in the URL: highlighted and scrolled into view (the page starts at the top)
    page.goto(f"{base}/f/{MEM}?view=raw#L60-L62")
    expect(page.locator("#L60.is-selected")).to_be_in_viewport()
    assert selected(page) == ["L60", "L61", "L62"]
    for n in (60, 61, 62):
        expect(page.locator(f"#L{n}")).to_be_in_viewport()
    expect(page.locator("#L1")).not_to_be_in_viewport()

    # click one line number, shift-click another: the range is selected and in the URL
    page.locator("#L64 td.ln a").click()
    page.wait_for_url(re.compile(r".*#L64$"))
    expect(page.locator("#L64.is-selected")).to_have_count(1)
    assert selected(page) == ["L64"]
    page.locator("#L66 td.ln a").click(modifiers=["Shift"])
    page.wait_for_url(re.compile(r".*#L64-L66$"))
    expect(page.locator("#L66.is-selected")).to_have_count(1)
    assert selected(page) == ["L64", "L65", "L66"]
    expect(page.locator("#L64")).to_be_in_viewport()  # selecting does not jump away

    # blame: the lines of the newer commit link to the blame before it, at the same line
    page.goto(f"{base}/blame/{MEM}#L45-L46")
    expect(page.locator("#L45.is-selected")).to_be_in_viewport()
    assert selected(page) == ["L45", "L46"]
    block = page.locator("#L45 td.blame-commit")
    expect(block).to_contain_text("Move the deploy window")
    screenshot(page, "blame")
    if os.environ.get("MEMORYUI_SCREENSHOTS") == "1":  # refresh the README's picture
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / "blame.png"), full_page=False)
    expect(page.locator("td.blame-commit a.blame-before")).to_have_count(1)  # root: none
    block.get_by_role("link", name="↶ blame before this change").click()
    page.wait_for_url(f"{base}/blame/{MEM}?rev={first}#L45")
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"at {first[:8]}")
    older = page.locator("#L45")
    expect(older.locator("td.code")).to_have_text("- fact 43: the deploy window is day 43")
    expect(older).to_be_in_viewport()
    assert selected(page) == ["L45"]
    expect(page.locator("td.blame-commit a.blame-before")).to_have_count(0)
    expect(page.locator("table.blame tr")).to_have_count(V1.count("\n"))

    # a range past the end or backwards still selects what exists, in order
    page.goto(f"{base}/f/{MEM}?view=raw#L79-L1000000000")
    expect(page.locator("#L79.is-selected")).to_be_in_viewport()
    assert selected(page) == ["L79", "L80", "L81"]
    page.goto(f"{base}/f/{MEM}?view=raw#L12-L10")  # same page: only the hash changes
    expect(page.locator("#L10.is-selected")).to_be_in_viewport()
    assert selected(page) == ["L10", "L11", "L12"]
    assert errors == []
