"""In real Chromium: history with an inline diff, the commit page, restore, activity filters,
and committing a change made outside memoryui from the pending page."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import screenshot, watch_console

MEM = "agents/ops-bot/memory/MEMORY.md"
V1 = "# Ops\n\n- the deploy window is Tuesday\n- pager rotation is weekly\n"
V2 = "# Ops\n\n- the deploy window is Thursday\n- pager rotation is weekly\n"



def test_history_restore_and_pending_commit(live_workspace, page_for):
    base, store = live_workspace
    first = store.write(MEM, V1, actor=Actor.agent("ops-bot"), tool="reflect").commit
    edit = store.write(MEM, V2, actor=Actor.user("alice"), tool="edit",
                       message="Move the deploy window").commit
    store.write("agents/billing-agent/memory/daily/2026-02-12.md", "# 2026-02-12\n\n## 09:00\n\n"
                "invoice run ok\n", actor=Actor.agent("billing-agent"), tool="remember")

    page = page_for("curator")
    errors = watch_console(page)
    page.on("dialog", lambda d: d.accept())

    # -- history: both commits, the latest diff loaded inline by htmx
    page.goto(f"{base}/history/{MEM}")
    rows = page.locator("li.commit-item")
    assert rows.count() == 2
    latest = page.locator(f"#c-{edit}")
    assert "Move the deploy window" in latest.inner_text()
    latest.get_by_role("link", name="Compare with previous").click()
    inline = page.locator(f"#inline-{edit} table.diff")
    inline.wait_for()
    assert page.url == f"{base}/history/{MEM}"  # htmx, not a navigation
    assert inline.locator("del").first.inner_text() == "Tuesday"
    assert inline.locator("ins").first.inner_text() == "Thursday"
    screenshot(page, "history")

    # -- the commit page, unified then split
    latest.locator("a.sha").click()
    page.wait_for_url(f"{base}/commit/{edit}/")
    assert page.locator("h1.commit-title").inner_text() == "Move the deploy window"
    assert page.locator("table.diff-unified tr.add").count() == 1
    assert page.locator("table.diff-unified tr.del").count() == 1
    page.get_by_role("link", name="Split").click()
    page.wait_for_url(re.compile(r".*view=split"))
    assert page.locator("table.diff-split").count() == 1
    page.get_by_role("link", name="Unified").click()
    page.wait_for_url(f"{base}/commit/{edit}/?")
    screenshot(page, "commit")

    # -- restore the first version from the history page
    page.goto(f"{base}/history/{MEM}")
    page.locator(f"#c-{first}").get_by_role("button", name="Restore").click()
    page.wait_for_url(f"{base}/history/{MEM}")
    assert "Restored " in page.locator("#messages").inner_text()
    assert (store.root / MEM).read_text() == V1
    newest = store.log(MEM, limit=1)[0]
    assert newest.trailers["Restored-From"] == [first] and newest.actor == "user:curator"
    assert page.locator("li.commit-item").count() == 3
    assert page.locator(f"#c-{newest.sha}").is_visible()

    # -- activity: the filter form updates the rows in place (htmx) and the URL
    page.goto(f"{base}/activity/")
    assert page.locator("li.commit-item").count() == 4
    page.select_option("#f-scope", "billing-agent")
    page.wait_for_url(re.compile(r".*scope=billing-agent"))
    expect(page.locator("li.commit-item")).to_have_count(1)
    assert "billing-agent" in page.locator("#activity-results").inner_text()
    page.select_option("#f-scope", "")
    expect(page.locator("li.commit-item")).to_have_count(4)
    screenshot(page, "activity")

    # -- an agent writes natively; commit it from the pending page
    (store.root / MEM).write_text(V1 + "- learned outside memoryui\n")
    page.goto(f"{base}/pending/")
    item = page.locator("li.pending-item")
    assert item.count() == 1
    assert "learned outside memoryui" in item.locator("tr.add").inner_text()
    assert item.locator(".badge-agent").inner_text() == "ops-bot"
    screenshot(page, "pending")
    page.get_by_role("button", name="Commit selected").click()
    page.wait_for_url(re.compile(r".*/pending/\?committed="))
    committed = store.log(MEM, limit=1)[0]
    assert committed.actor == "agent:ops-bot" and committed.author == "ops-bot"
    assert page.locator(f'a[href="/commit/{committed.sha}/"]').is_visible()
    assert "No pending changes" in page.content()
    assert store.pending() == []

    assert errors == []


def test_discard_asks_and_restores_the_file(live_workspace, page_for):
    base, store = live_workspace
    store.write(MEM, V1, actor=Actor.agent("ops-bot"), tool="reflect")
    (store.root / MEM).write_text("scribbled over\n")
    page = page_for("curator")
    errors = watch_console(page)
    asked: list[str] = []

    def on_dialog(d) -> None:
        asked.append(d.message)
        d.dismiss() if len(asked) == 1 else d.accept()

    page.on("dialog", on_dialog)
    page.goto(f"{base}/pending/")
    page.get_by_role("button", name="Discard selected…").click()
    assert asked and "cannot be recovered" in asked[0]
    assert (store.root / MEM).read_text() == "scribbled over\n"  # cancelled
    page.get_by_role("button", name="Discard selected…").click()
    page.wait_for_url(f"{base}/pending/")
    expect(page.locator("p.empty")).to_contain_text("No pending changes")
    assert (store.root / MEM).read_text() == V1
    assert errors == []


def test_a_planted_link_is_refused_and_discarded_from_the_pending_page(live_workspace, page_for,
                                                                       tmp_path):
    """The pending page stays usable with a symbolic link present: the regular change is
    committed, the link is shown as refused with its reason and discarded with one button."""
    base, store = live_workspace
    store.write(MEM, V1, actor=Actor.agent("ops-bot"), tool="reflect")
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET KEY\n")
    link = store.root / "agents/ops-bot/memory/notes/k.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    (store.root / MEM).write_text(V1 + "- learned outside memoryui\n")

    page = page_for("curator")
    errors = watch_console(page)
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.goto(f"{base}/pending/")
    refused = page.locator("li.pending-item-refused")
    expect(refused).to_have_count(1)
    expect(refused.locator(".pending-reason")).to_contain_text("a symbolic link")
    assert refused.locator("input[type=checkbox]").count() == 0
    assert "TOP SECRET" not in page.content()

    page.get_by_role("button", name="Commit selected").click()
    page.wait_for_url(re.compile(r".*/pending/\?committed="))
    assert store.log(MEM, limit=1)[0].actor == "agent:ops-bot"
    expect(page.locator("li.pending-item-refused")).to_have_count(1)  # still listed, refused

    page.locator("li.pending-item-refused").get_by_role("button", name="Discard").click()
    expect(page.locator("p.empty")).to_contain_text("No pending changes")
    assert asked and "k.md" in asked[0]
    assert not link.is_symlink() and secret.read_text() == "TOP SECRET KEY\n"
    assert "Discarded the outside changes to 1 file(s)" in page.locator("#messages").inner_text()
    assert errors == []


def test_pending_page_warns_of_a_secret_and_refuses_a_hard_link(live_workspace, page_for,
                                                                  tmp_path):
    """A native edit that adds an AWS key shows the warning before it is committed, each
    path is named once, a hard link is refused with its reason, and once only the link is
    left the commit form gives way to a sentence; discarding removes the link only."""
    import os

    from tests.secrets.samples import AWS

    base, store = live_workspace
    store.write(MEM, V1, actor=Actor.agent("ops-bot"), tool="reflect")
    secret = tmp_path / "secret.key"
    secret.write_text("TOP SECRET KEY\n")
    key = "agents/ops-bot/memory/notes/key.md"
    (store.root / key).parent.mkdir(parents=True)
    os.link(secret, store.root / key)
    (store.root / MEM).write_text(V1 + f"- deploy with {AWS}\n")

    page = page_for("curator")
    errors = watch_console(page)
    page.on("dialog", lambda d: d.accept())
    page.goto(f"{base}/pending/")
    item = page.locator("li.pending-item:not(.pending-item-refused)")
    expect(item).to_have_count(1)
    expect(item.locator(".pending-secrets .secret-badge")).to_contain_text("AWS Access Key")
    expect(item.locator(".pending-secrets")).to_contain_text("history keeps it")
    assert item.inner_text().count(MEM) == 1
    refused = page.locator("li.pending-item-refused")
    expect(refused.locator(".pending-reason")).to_contain_text("Refused: a hard link")
    assert refused.inner_text().count(key) == 1
    assert "TOP SECRET" not in page.content()
    screenshot(page, "pending-secret-hardlink")

    page.get_by_role("button", name="Commit selected").click()
    page.wait_for_url(re.compile(r".*/pending/\?committed="))
    expect(page.locator(".pending-nothing")).to_contain_text("Nothing here can be committed")
    expect(page.get_by_role("button", name="Commit selected")).to_have_count(0)
    expect(page.locator("li.pending-item-refused")).to_have_count(1)

    page.locator("li.pending-item-refused").get_by_role("button", name="Discard").click()
    expect(page.locator("p.empty")).to_contain_text("No pending changes")
    assert not os.path.lexists(store.root / key)
    assert secret.read_text() == "TOP SECRET KEY\n"
    assert errors == []
