"""In real Chromium: the header badge, the Sync page in manual publishing mode (states, a
diff per file, publish the chosen file, discard another), against a real git remote."""

from __future__ import annotations

from memoryui.store import Actor
from tests.browser.conftest import screenshot, watch_console
from tests.sync_fixtures import git
from tests.web.test_sync import BASE, MEM, NOTE, synced  # noqa: F401 - the fixture


def test_manual_publishing_from_the_sync_page(synced, live_server, page_for):  # noqa: F811
    s = synced(push="manual")
    agent = Actor.agent("ops-bot")
    s.store.write(NOTE, "# Runbook\n\nrestart the worker\n", actor=agent, tool="memory_write")
    s.store.write(MEM, BASE + "- a line the lead does not want\n",
                  actor=Actor.agent("native-bot"), tool="reflect")
    s.syncer.round(blocking=True)  # manual: fetches, pushes nothing

    page = page_for("curator")
    errors = watch_console(page)
    page.on("dialog", lambda d: d.accept())
    page.goto(f"{live_server.url}/")
    badge = page.locator("#sync-badge")
    assert badge.inner_text().strip() == "2 to publish"
    assert "2 files to publish" in badge.get_attribute("title")
    badge.click()
    page.wait_for_url(f"{live_server.url}/sync/")
    items = page.locator("li.sync-item")
    assert items.count() == 2
    note = items.filter(has_text=NOTE)
    assert note.locator(".sync-file-state").inner_text() == "untracked"
    mem = items.filter(has_text=MEM)
    assert mem.locator(".sync-file-state").inner_text() == "modified"
    assert "- a line the lead does not want" in mem.locator("table.diff tr.add").inner_text()
    screenshot(page, "sync")

    # publish the runbook only, with a message
    note.locator("input[name=paths]").check()
    page.fill("#sync-message", "publish the runbook")
    page.click("#sync-publish")
    page.wait_for_url(f"{live_server.url}/sync/")
    assert "published 1 file" in page.locator("#messages").inner_text()
    assert git(s.bare, "show", f"main:{NOTE}") == "# Runbook\n\nrestart the worker\n"
    assert git(s.bare, "log", "-1", "--format=%s|%an", "main").strip() == \
        "publish the runbook|curator"
    assert page.locator("li.sync-item").count() == 1

    # discard the other file back to the remote's version (a confirmation first)
    page.locator("li.sync-item input[name=paths]").check()
    page.click("#sync-discard")
    page.wait_for_url(f"{live_server.url}/sync/")
    assert "Brought back to the remote's version" in page.locator("#messages").inner_text()
    assert s.store.read(MEM) == BASE
    assert page.locator("li.sync-item").count() == 0
    assert page.locator("#sync-badge").inner_text().strip() == "synced"
    assert not errors, errors
