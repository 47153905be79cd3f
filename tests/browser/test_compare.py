"""In real Chromium: tick two versions in a file's history and compare them (no htmx needed),
switch to the split view, and tick two commits on the activity page."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import htmx_idle, watch_console

MEM = "agents/ops-bot/memory/MEMORY.md"
V1 = "# Ops\n\n- the deploy window is Tuesday\n"
V2 = V1 + "- pager rotation is weekly\n"
V3 = "# Ops\n\n- the deploy window is Thursday\n- pager rotation is weekly\n"


def test_compare_two_versions_from_history_and_activity(live_workspace, page_for):
    base, store = live_workspace
    first = store.write(MEM, V1, actor=Actor.agent("ops-bot"), tool="reflect").commit
    store.write(MEM, V2, actor=Actor.agent("ops-bot"), tool="reflect")
    last = store.write(MEM, V3, actor=Actor.user("alice"), tool="edit",
                       message="Move the deploy window").commit

    page = page_for("viewer")
    errors = watch_console(page)
    page.goto(f"{base}/history/{MEM}")
    page.locator(f"#c-{last} input[name=rev]").check()
    page.locator(f"#c-{first} input[name=rev]").check()
    page.get_by_role("button", name="Compare the two ticked versions").click()
    page.wait_for_url(f"{base}/compare/{MEM}?from={first}&to={last}")
    diff = page.locator("table.diff-unified")
    expect(diff.locator("tr.del")).to_have_count(1)
    expect(diff.locator("tr.add")).to_have_count(2)
    assert diff.locator("del").first.inner_text() == "Tuesday"

    page.get_by_role("link", name="Split").click()
    page.wait_for_url(re.compile(r".*view=split"))
    htmx_idle(page)
    expect(page.locator("table.diff-split")).to_have_count(1)

    # only people: the person's one commit is left
    page.goto(f"{base}/history/{MEM}")
    page.get_by_role("link", name="Only people").click()
    page.wait_for_url(re.compile(r".*who=people"))
    expect(page.locator("li.commit-item")).to_have_count(1)

    # activity: tick two commits, compare everything between them
    page.goto(f"{base}/activity/")
    page.locator(f"#c-{last} input[name=rev]").check()
    page.locator(f"#c-{first} input[name=rev]").check()
    page.get_by_role("button", name="Compare the two ticked commits").click()
    page.wait_for_url(f"{base}/compare/?from={first}&to={last}")
    expect(page.locator("table.diff-unified tr.add")).to_have_count(2)
    assert errors == []
