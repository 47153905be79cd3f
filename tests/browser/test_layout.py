"""In real Chromium: the phone layout (390 px: the sidebar is a drawer, no page is wider than
the screen) and a sweep of every main page as an admin with no console error and no CSP
violation, the review page after a promotion included.

With MEMORYUI_SCREENSHOTS=1 the README's screenshots in docs/screenshots/ are refreshed.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

from playwright.sync_api import expect

from memoryui.demo import build_demo
from tests.browser.conftest import htmx_idle, new_context, screenshot, sign_in

TODAY = dt.date(2026, 2, 12)
MEM = "agents/ops-bot/memory/MEMORY.md"
PHONE = {"width": 390, "height": 844}
DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"

# Chromium reports a CSP violation to the page as an event (and to the console); collect both.
CSP_WATCH = """
document.addEventListener('securitypolicyviolation', (e) => {
  (window.__csp = window.__csp || []).push(
    e.violatedDirective + ' ' + (e.blockedURI || 'inline') + ' ' + (e.sourceFile || '') + ':' + e.lineNumber);
});
"""


def watch(page) -> list[str]:
    """Console errors (the favicon's too: there is one now) and uncaught page errors."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    page.add_init_script(CSP_WATCH)
    return errors


def violations(page) -> list[str]:
    return page.evaluate("() => window.__csp || []")


def shot(page, name: str) -> None:
    screenshot(page, name)
    if os.environ.get("MEMORYUI_SCREENSHOTS") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / f"{name}.png"), full_page=False)


def file_shas(root: Path, path: str) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%H", "--", path], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def main_pages(root: Path) -> dict[str, str]:
    shas = file_shas(root, MEM)
    new, old = shas[0], shas[-1]
    log = sorted((root / "agents/ops-bot/memory/daily").iterdir())[-1].name
    return {
        "overview": "/", "scope": "/s/ops-bot/", "file": f"/f/agents/ops-bot/memory/daily/{log}",
        "source": f"/f/{MEM}?view=raw", "editor": f"/edit/{MEM}", "history": f"/history/{MEM}",
        "blame": f"/blame/{MEM}", "compare": f"/compare/{MEM}?from={old}&to={new}",
        "at-commit": f"/at/{old}/{MEM}", "commit": f"/commit/{new}/", "activity": "/activity/",
        "scope-history": "/s/ops-bot/history/", "pending": "/pending/",
        "search": "/search/?q=deploy", "review": f"/review/?from=2026-01-01&to={TODAY}",
        "sync": "/sync/", "tokens": "/settings/tokens/",
    }


def test_phone_width_drawer_and_no_page_wider_than_the_screen(live_workspace, browser, make_user):
    base, store = live_workspace
    build_demo(store.root, today=TODAY)
    admin = make_user("admin", "lead")
    ctx = new_context(browser, viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        errors = watch(page)
        sign_in(page, base, admin.username)
        for name, url in main_pages(store.root).items():
            page.goto(base + url)
            page.wait_for_load_state()
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{name} is {width} px wide"
            # The content starts on the first screen: the sidebar is not drawn above it.
            top = page.evaluate("() => document.querySelector('main').getBoundingClientRect().top")
            assert top < PHONE["height"] / 2, f"{name}: content starts at {top} px"
            expect(page.locator(".sidebar")).to_be_hidden()
            if name in ("overview", "file"):
                shot(page, f"phone-{name}")
            else:
                screenshot(page, f"phone-{name}")  # tests/browser/screenshots/ only

        # The drawer: "☰ Browse" opens the sidebar over the page; the scrim closes it.
        page.goto(base + main_pages(store.root)["file"])
        button = page.locator("label.drawer-button")
        expect(button).to_be_visible()
        button.click()
        sidebar = page.locator(".sidebar")
        expect(sidebar).to_be_visible()
        expect(sidebar.locator("a[aria-current=page]")).to_be_visible()  # the open file
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        page.mouse.click(PHONE["width"] - 10, PHONE["height"] // 2)  # on the scrim
        expect(sidebar).to_be_hidden()
        button.click()
        expect(sidebar).to_be_visible()
        page.keyboard.press("Escape")  # app.js (d)
        expect(sidebar).to_be_hidden()
        # A link in the drawer goes where it says.
        htmx_idle(page)  # the header's badges have loaded: leaving aborts nothing
        button.click()
        sidebar.get_by_role("link", name="Sync").click()
        page.wait_for_url(base + "/sync/")
        expect(page.locator("h1")).to_contain_text("Sync")
        assert violations(page) == []
        assert errors == []
    finally:
        ctx.close()


def test_the_drawer_opens_without_javascript(live_workspace, browser, make_user):
    base, store = live_workspace
    build_demo(store.root, today=TODAY)
    user = make_user("viewer", "nojs")
    ctx = new_context(browser, viewport=PHONE, java_script_enabled=False)
    try:
        page = ctx.new_page()
        sign_in(page, base, user.username)
        page.goto(f"{base}/f/{MEM}")
        sidebar = page.locator(".sidebar")
        expect(sidebar).to_be_hidden()
        page.locator("label.drawer-button").click()
        expect(sidebar).to_be_visible()
        page.locator(".drawer-scrim").click(position={"x": 370, "y": 400})
        expect(sidebar).to_be_hidden()
    finally:
        ctx.close()


def test_wide_screens_keep_the_sidebar_and_no_page_breaks_its_csp(live_workspace, browser,
                                                                   make_user):
    base, store = live_workspace
    build_demo(store.root, today=TODAY)
    admin = make_user("admin", "lead")
    ctx = new_context(browser)
    try:
        page = ctx.new_page()
        errors = watch(page)
        sign_in(page, base, admin.username)
        pages = main_pages(store.root)
        for name, url in pages.items():
            page.goto(base + url)
            page.wait_for_load_state()
            assert violations(page) == [], name
            assert errors == [], name
            if page.locator(".sidebar > *").count():  # the editor has none
                expect(page.locator(".sidebar")).to_be_visible()
            expect(page.locator("label.drawer-button")).to_be_hidden()
            if name in ("overview", "history", "commit", "activity", "pending", "editor"):
                shot(page, name)
        expect(page.get_by_role("link", name="Tokens", exact=True)).to_have_attribute(
            "aria-current", "page")

        # Promote an entry from the review queue (htmx), then look at the queue again.
        page.goto(base + pages["review"])
        first_id = page.locator("#review-queue li.queue-item.is-todo").first.get_attribute("id")
        first = page.locator(f"#{first_id}")
        first.locator(".js-promote").click()
        editor = first.locator(".promote-editor")
        expect(editor).to_be_visible()
        editor.get_by_role("button", name="Promote and commit").click()
        expect(first.locator(".entry-outcome")).to_contain_text("Promoted to")
        assert violations(page) == [] and errors == []
        page.goto(base + pages["review"])
        expect(page.locator("#recent-promotions li").first).to_be_visible()
        shot(page, "review")
        assert violations(page) == [] and errors == []
        # The watch itself works: an inline style slipped into the page is reported.
        page.evaluate("() => { const d = document.createElement('div');"
                      " d.innerHTML = '<b style=\"color: red\">x</b>'; document.body.append(d); }")
        page.wait_for_function("() => (window.__csp || []).length > 0")
        assert "style-src" in violations(page)[0]
    finally:
        ctx.close()


DESKTOP = {"width": 1280, "height": 800}
# Each cell's text and how tall its content is, in lines of its font size.
LINES = """cells => cells.map(cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const boxes = [...range.getClientRects()].filter(b => b.height > 0);
  const top = Math.min(...boxes.map(b => b.top)), bottom = Math.max(...boxes.map(b => b.bottom));
  return [cell.innerText.trim(), (bottom - top) / parseFloat(getComputedStyle(cell).fontSize)];
})"""


def test_desktop_sidebar_runs_to_the_page_bottom_and_agent_rows_stay_on_one_line(
        live_workspace, browser, make_user):
    base, store = live_workspace
    build_demo(store.root, today=TODAY)
    viewer = make_user("viewer", "lead")
    ctx = new_context(browser, viewport=DESKTOP)
    try:
        page = ctx.new_page()
        sign_in(page, base, viewer.username)

        # The overview's agents table at 1280 px: dates and sizes are never broken.
        page.goto(base + "/")
        heads = page.locator("table.ov-scopes thead th").all_inner_texts()
        for name in ("MEMORY.md", "Latest log", "Last change", "Size"):
            col = [h.strip() for h in heads].index(name) + 1
            cells = page.locator(f"table.ov-scopes tbody tr > :nth-child({col})")
            lines = cells.evaluate_all(LINES)
            assert len(lines) == 3 and all(n < 2 for _text, n in lines), (name, lines)
        box = page.evaluate("() => [document.querySelector('.ov-scopes').scrollWidth,"
                            " document.querySelector('.ov-scopes').closest('.table-scroll')"
                            ".clientWidth]")
        assert box[0] <= box[1], f"the agents table scrolls at 1280 px: {box}"
        screenshot(page, "desktop-overview")

        # A long page: the sidebar's column (its background) reaches the bottom of the page,
        # and its links stay in view at the bottom.
        page.goto(base + "/s/ops-bot/history/")
        height, bottom, painted, body = page.evaluate(
            "() => { const s = document.querySelector('.sidebar');"
            " return [document.documentElement.scrollHeight,"
            " s.getBoundingClientRect().bottom + window.scrollY,"
            " getComputedStyle(s).backgroundColor, getComputedStyle(document.body).backgroundColor]; }")
        assert height > 2 * DESKTOP["height"]
        assert bottom >= height - 1, f"the sidebar ends at {bottom} px of {height}"
        assert painted != body
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        expect(page.locator(".sidebar").get_by_role("link", name="Overview")).to_be_in_viewport()
        screenshot(page, "desktop-long-page-bottom")
    finally:
        ctx.close()
