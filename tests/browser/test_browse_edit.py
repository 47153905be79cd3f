"""In real Chromium: sign in, browse from the overview to an agent's daily log, edit
MEMORY.md with the live preview, save, and resolve a conflict between two curators."""

from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import expect

from memoryui.demo import build_demo
from memoryui.store import Actor
from tests.browser.conftest import screenshot, watch_console

MEM = "agents/ops-bot/memory/MEMORY.md"
TODAY = dt.date(2026, 2, 12)



def test_browse_from_overview_to_a_daily_log(live_workspace, page_for):
    base, store = live_workspace
    build_demo(store.root, today=TODAY)
    page = page_for("viewer")
    errors = watch_console(page)
    page.goto(base + "/")
    expect(page.locator("h1")).to_have_text("Overview")
    assert page.locator("table.ov-scopes tbody tr").count() == 3
    expect(page.locator(".badge-warn", has_text="1 pending change")).to_be_visible()  # htmx
    screenshot(page, "overview")

    page.locator("table.ov-scopes").get_by_role("link", name="ops-bot", exact=True).click()
    page.wait_for_url(base + "/s/ops-bot/")
    expect(page.locator("h1")).to_have_text("ops-bot")
    logs = page.locator("section.sc-month.is-open table a")
    newest = logs.first.inner_text()
    assert re.fullmatch(r"2026-02-\d\d", newest)
    logs.first.click()
    page.wait_for_url(f"{base}/f/agents/ops-bot/memory/daily/{newest}.md")
    expect(page.locator("h1")).to_have_text(f"Daily log {newest}")
    entries = page.locator("ol.entries > li.entry")
    assert entries.count() >= 2
    first_id = entries.first.get_attribute("id")
    assert first_id and first_id.startswith("e-")
    # the sidebar has the scope open at this log
    current = page.locator(".sidebar a[aria-current=page]")
    expect(current).to_have_text(newest)
    screenshot(page, "file")
    # the raw view shows the same file with line numbers
    page.get_by_role("link", name="Source", exact=True).click()
    expect(page.locator("table.raw-lines tr#L1 td.code")).to_have_text(f"# {newest}")
    assert errors == []


def test_edit_memory_with_live_preview_and_save(live_workspace, page_for):
    base, store = live_workspace
    build_demo(store.root, today=TODAY)
    page = page_for("curator", "alice")
    errors = watch_console(page)
    page.goto(f"{base}/f/{MEM}")
    page.get_by_role("link", name="Edit", exact=True).click()
    page.wait_for_url(f"{base}/edit/{MEM}")
    editor = page.locator("#editor-text")
    old = editor.input_value()
    assert old == store.read(MEM)  # the full text, exactly
    editor.fill(old + "- **Never** deploy on Fridays.\n")
    # the preview updates before anything is saved
    expect(page.locator("#preview strong", has_text="Never")).to_be_visible()
    assert "Never" not in store.read(MEM)
    screenshot(page, "editor")
    page.fill("#editor-message", "Add the Friday rule")
    page.get_by_role("button", name="Save").click()
    page.wait_for_url(f"{base}/f/{MEM}")
    expect(page.locator(".markdown strong", has_text="Never")).to_be_visible()
    commit = store.log(MEM, limit=1)[0]
    expect(page.locator(".flash-success")).to_contain_text(f"in commit {commit.short}")
    assert commit.subject == "Add the Friday rule" and commit.actor == "user:alice"
    assert store.read(MEM) == old + "- **Never** deploy on Fridays.\n"
    assert errors == []


def test_two_curators_conflict_and_resolve(live_workspace, page_for):
    base, store = live_workspace
    store.write(MEM, "# ops-bot\n\n## Facts\n- deploys on Tuesday\n\n## Lessons\n- canaries\n",
                actor=Actor.agent("ops-bot"),
                tool="reflect")
    alice = page_for("curator", "alice")
    bob = page_for("curator", "bob")
    errors = watch_console(bob)
    for page in (alice, bob):
        page.goto(f"{base}/edit/{MEM}")
    a_text = alice.locator("#editor-text").input_value().replace("Tuesday", "Thursday")
    alice.locator("#editor-text").fill(a_text)
    alice.get_by_role("button", name="Save").click()
    alice.wait_for_url(f"{base}/f/{MEM}")

    # Bob edited the same line from the old version: his save is stopped, nothing is lost
    b_text = bob.locator("#editor-text").input_value().replace("Tuesday", "Wednesday")
    bob.locator("#editor-text").fill(b_text + "- dashboards too\n")
    bob.get_by_role("button", name="Save").click()
    expect(bob.locator(".conflict h2")).to_have_text("This file changed while you were editing")
    assert store.read(MEM) == a_text  # Alice's save stands
    their_diff = bob.locator("details.conflict-part").first.locator("table.diff")
    expect(their_diff.locator("tr.add")).to_have_text(["- deploys on Thursday"])
    expect(their_diff.locator("tr.del")).to_have_text(["- deploys on Tuesday"])
    merged = bob.locator("#editor-text").input_value()
    assert "<<<<<<< your edit" in merged and "- dashboards too" in merged
    assert bob.locator("#conflict-ours").input_value() == b_text + "- dashboards too\n"
    # the preview shows the marked place as a conflict, each side labelled, not as quotes
    block = bob.locator("#preview .conflict-block")
    expect(block).to_have_count(1)
    expect(block.locator(".conflict-side-label")).to_have_text(["your edit", "current file"])
    expect(block.locator(".conflict-ours li")).to_have_text(["deploys on Wednesday"])
    expect(block.locator(".conflict-theirs li")).to_have_text(["deploys on Thursday"])
    expect(bob.locator("#preview blockquote")).to_have_count(0)
    screenshot(bob, "conflict")

    # Bob resolves the marked place and saves against the new version
    resolved = re.sub(r"<<<<<<< your edit\n.*?>>>>>>> current file\n",
                      "- deploys on Wednesday or Thursday\n", merged, flags=re.S)
    bob.locator("#editor-text").fill(resolved)
    # the live preview follows: no conflict left to draw
    expect(bob.locator("#preview .conflict-block")).to_have_count(0)
    expect(bob.locator("#preview")).to_contain_text("Wednesday or Thursday")
    bob.get_by_role("button", name="Save").click()
    bob.wait_for_url(f"{base}/f/{MEM}")
    expect(bob.locator(".markdown")).to_contain_text("Wednesday or Thursday")
    assert store.read(MEM) == resolved
    authors = [c.actor for c in store.log(MEM, limit=3)]
    assert authors[:2] == ["user:bob", "user:alice"]
    assert [e for e in errors if "status of 409" not in e] == []  # the 409 is the conflict
