"""In real Chromium: a memory file full of XSS payloads (tests/fixtures/xss.md) is shown on
its file page, in the editor's preview and in the live preview with no script run, no
dialog, and no event handler, script element, htmx attribute or javascript: URL left in the
rendered markdown. Checked in the DOM the browser built, not in the HTML text."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from memoryui.store import Actor

XSS = (Path(__file__).resolve().parents[1] / "fixtures" / "xss.md").read_text()
PATH = "agents/ops-bot/memory/notes/xss.md"

DOM_CHECK = """() => {
  const bad = [];
  for (const el of document.querySelectorAll("*")) {
    for (const a of el.attributes) {
      if (/^on/i.test(a.name)) bad.push(`${el.tagName} ${a.name}`);
    }
  }
  for (const root of document.querySelectorAll(".markdown")) {
    for (const el of root.querySelectorAll("script, iframe, object, embed, form, style, svg, math, base, meta, link")) {
      bad.push(`element ${el.tagName} in .markdown`);
    }
    for (const el of root.querySelectorAll("[hx-get], [hx-post], [hx-trigger], [data-confirm], [style]")) {
      bad.push(`attribute on ${el.tagName} in .markdown`);
    }
    for (const el of root.querySelectorAll("a[href], img[src]")) {
      const url = new URL(el.href || el.src, location.href);
      if (!["http:", "https:", "mailto:"].includes(url.protocol)) {
        bad.push(`${el.tagName} with ${url.protocol} URL`);
      }
    }
  }
  return bad;
}"""


@pytest.fixture
def xss_page(live_workspace, page_for):
    base, store = live_workspace
    store.write(PATH, XSS, actor=Actor.agent("ops-bot"), tool="memory_write")
    page = page_for("curator")
    dialogs: list[str] = []

    def on_dialog(d) -> None:  # any alert/confirm/prompt means a payload ran
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return base, page, dialogs, errors


def _settle(page) -> None:
    """Wait until the page is quiet and every image has loaded or failed: a failed load
    fires its `error` event in the same task that marks the image complete, so by then an
    `onerror` payload that survived would have run."""
    page.wait_for_load_state("networkidle")
    page.wait_for_function(
        "() => Array.from(document.images).every(i => i.complete || i.loading === 'lazy')")


def test_file_page_runs_no_payload(xss_page):
    base, page, dialogs, errors = xss_page
    page.goto(f"{base}/f/{PATH}")
    _settle(page)
    expect(page.locator("article.markdown h2").first).to_contain_text("script-tag")
    assert page.evaluate(DOM_CHECK) == []
    assert page.locator(".markdown script").count() == 0
    assert dialogs == [] and errors == []
    # hovering and clicking the hostile links does nothing either
    page.locator(".markdown a").first.hover()
    page.get_by_text("hover", exact=True).hover()
    assert dialogs == []


def test_raw_view_and_editor_run_no_payload(xss_page):
    base, page, dialogs, errors = xss_page
    page.goto(f"{base}/f/{PATH}?view=raw")
    _settle(page)
    expect(page.locator("table.raw-lines")).to_contain_text("<script>alert(1)</script>")
    assert page.evaluate(DOM_CHECK) == []
    page.goto(f"{base}/edit/{PATH}")
    _settle(page)
    assert page.locator("#editor-text").input_value() == XSS  # shown as text, whole
    assert page.evaluate(DOM_CHECK) == []
    # typing more payloads into the live preview swaps them in through htmx: still inert
    page.locator("#editor-text").fill("live-marker <img src=y onerror=alert(2)>\n\n" + XSS)
    expect(page.locator("#preview")).to_contain_text("live-marker")
    _settle(page)
    assert page.evaluate(DOM_CHECK) == []
    assert dialogs == [] and errors == []
