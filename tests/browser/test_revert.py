"""In real Chromium: revert a commit from its page (clean), then one that cannot merge:
the conflict view, resolving the text, saving; no console errors or CSP violations."""

from __future__ import annotations

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import watch_console

MEM = "agents/ops-bot/memory/MEMORY.md"
BOT = Actor.agent("ops-bot")


def test_revert_clean_then_with_conflict(live_workspace, page_for):
    base, store = live_workspace
    store.write(MEM, "# Ops\n\n- one\n- two\n- three\n", actor=BOT, tool="reflect")
    bad = store.write(MEM, "# Ops\n\n- one WRONG\n- two\n- three\n", actor=BOT,
                      tool="reflect").commit
    store.write(MEM, "# Ops\n\n- one WRONG\n- two\n- three (later)\n", actor=BOT, tool="reflect")

    page = page_for("curator")
    errors = watch_console(page)
    page.on("dialog", lambda d: d.accept())

    page.goto(f"{base}/commit/{bad}/")
    page.get_by_role("button", name="Revert this commit").click()
    page.wait_for_url(lambda url: bad not in url and "/commit/" in url)
    assert f"Reverted {bad[:8]}" in page.locator("body").inner_text()
    assert page.locator("table.trailers").get_by_role("link", name=bad).count() == 1
    assert store.read(MEM) == "# Ops\n\n- one\n- two\n- three (later)\n"

    # A commit whose lines changed again later: the conflict view, then a resolution.
    sha = store.write(MEM, "# Ops\n\n- one changed\n- two\n- three (later)\n", actor=BOT,
                      tool="reflect").commit
    store.write(MEM, "# Ops\n\n- one changed again\n- two\n- three (later)\n", actor=BOT,
                tool="reflect")
    page.goto(f"{base}/commit/{sha}/")
    page.get_by_role("button", name="Revert this commit").click()
    page.get_by_role("heading", name="Not reverted: 1 file cannot merge").wait_for()
    box = page.get_by_label(f"Merged text of {MEM}")
    assert "<<<<<<< current file" in box.input_value()
    head = store.head()
    box.fill("# Ops\n\n- one (resolved)\n- two\n- three (later)\n")
    page.get_by_role("button", name="Save the revert").click()
    page.wait_for_url(lambda url: sha not in url and "/commit/" in url)
    assert store.head() != head
    assert store.read(MEM) == "# Ops\n\n- one (resolved)\n- two\n- three (later)\n"
    assert store.commit(store.head()).trailers["Reverts"] == [sha]
    # The conflict view is answered with 409 on purpose; Chromium logs that status.
    assert [e for e in errors if "status of 409" not in e] == []


def test_revert_conflict_shows_both_changes_the_texts_and_even_buttons(live_workspace,
                                                                        page_for):
    base, store = live_workspace
    store.write(MEM, "# Ops\n\n- one\n- two\n", actor=BOT, tool="reflect")
    sha = store.write(MEM, "# Ops\n\n- one changed\n- two\n", actor=BOT, tool="reflect").commit
    store.write(MEM, "# Ops\n\n- one changed again\n- two\n", actor=BOT, tool="reflect")

    page = page_for("curator")
    errors = watch_console(page)
    page.on("dialog", lambda d: d.accept())
    page.goto(f"{base}/edit/{MEM}")
    editor_button = page.get_by_role("button", name="Save", exact=True).bounding_box()

    page.goto(f"{base}/commit/{sha}/")
    page.get_by_role("button", name="Revert this commit").click()
    page.get_by_role("heading", name="Not reverted: 1 file cannot merge").wait_for()
    # what the revert undoes and what changed since, drawn as diffs, open
    diffs = page.locator(".conflict-sides details.conflict-part")
    expect(diffs.locator("summary")).to_have_text(["The reverted commit → before the commit",
                                                   "The reverted commit → the current file"])
    expect(diffs.nth(0).locator("tr.del")).to_have_text(["- one changed"])
    expect(diffs.nth(1).locator("tr.add")).to_have_text(["- one changed again"])
    # base, ours and theirs, read-only, one click away
    page.locator(".conflict-texts summary", has_text="The reverted commit").click()
    expect(page.locator("#revert-1-base")).to_have_value("# Ops\n\n- one changed\n- two\n")
    expect(page.locator("#revert-1-base")).to_have_attribute("readonly", "")
    # the merged text's preview draws the conflict as one, not as nested quotes
    page.locator(".revert-preview summary").click()
    block = page.locator(".revert-preview .conflict-block")
    expect(block.locator(".conflict-side-label")).to_have_text(["current file",
                                                                "before the commit"])
    expect(page.locator(".revert-preview blockquote")).to_have_count(0)
    # buttons: the size of the editor's, alike
    save = page.get_by_role("button", name="Save the revert").bounding_box()
    cancel = page.locator(".form-actions").get_by_role("link", name="Cancel").bounding_box()
    assert save and cancel and editor_button
    assert save["height"] == cancel["height"] == editor_button["height"]
    assert [e for e in errors if "status of 409" not in e] == []
