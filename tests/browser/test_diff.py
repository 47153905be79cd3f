"""In real Chromium: expand hidden context on a commit page (↓, ↑, all) with htmx, then
switch a markdown diff to the rendered view and find it still chosen after a reload.

With MEMORYUI_SCREENSHOTS=1 docs/screenshots/expand-context.png and prose-diff.png are
refreshed (else the pictures go to tests/browser/screenshots/ only)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from playwright.sync_api import expect

from memoryui.store import Actor
from tests.browser.conftest import htmx_idle, screenshot, watch_console

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
LONG = "agents/ops-bot/memory/notes.md"
PROSE = "agents/ops-bot/memory/MEMORY.md"
OLD = [f"line {n}" for n in range(1, 101)]
NEW = [("line 10 changed" if n == 10 else "line 90 changed" if n == 90 else f"line {n}")
       for n in range(1, 101)]
PROSE_OLD = ("# Runbook\n\nDeploys go out on Tuesday after the standup.\n\n- item one\n"
             "- item two\n\nObsolete: call Bob at night.\n")
PROSE_NEW = ("# Runbook\n\nDeploys go out on Thursday after the standup, canary first.\n\n"
             "- item one\n- item two\n\n## Escalation\n\nPage the on-call engineer.\n")


def shoot(page, name: str) -> None:
    """The test's picture; the README's copy only when asked to refresh it."""
    path = screenshot(page, name)
    if os.environ.get("MEMORYUI_SCREENSHOTS") == "1":
        shutil.copy(path, SHOTS / f"{name}.png")


def gap(page, lines: str):
    return page.locator("tr.gap", has_text=f"(lines {lines})")


def new_line(page, n: int):
    """The code cell of the row showing new line `n` (unified view)."""
    row = page.locator("table.diff-unified tr").filter(
        has=page.locator(f"td.ln:nth-child(2)[data-line='{n}']"))
    return row.locator("td.code")


def test_expand_context_and_rendered_diff(live_workspace, page_for):
    base, store = live_workspace
    ops, alice = Actor.agent("ops-bot"), Actor.user("alice")
    store.write(LONG, "\n".join(OLD) + "\n", actor=ops, tool="reflect")
    sha = store.write(LONG, "\n".join(NEW) + "\n", actor=alice, tool="edit").commit
    store.write(PROSE, PROSE_OLD, actor=ops, tool="reflect")
    prose_sha = store.write(PROSE, PROSE_NEW, actor=alice, tool="edit").commit

    page = page_for("viewer")
    errors = watch_console(page)
    page.goto(f"{base}/commit/{sha}/")
    htmx_idle(page)
    expect(page.locator("tr.gap")).to_have_count(3)
    expect(gap(page, "14–86")).to_have_count(1)
    expect(new_line(page, 30)).to_have_count(0)

    # ↓ below the first hunk: lines 14..33 appear, 34..86 stay hidden
    gap(page, "14–86").locator("a.gap-down").click()
    htmx_idle(page)
    expect(gap(page, "34–86")).to_have_count(1)
    expect(new_line(page, 33)).to_have_text("line 33")
    expect(new_line(page, 14)).to_have_text("line 14")
    # ↑ above the second hunk: lines 67..86
    gap(page, "34–86").locator("a.gap-up").click()
    htmx_idle(page)
    expect(gap(page, "34–66")).to_have_count(1)
    expect(new_line(page, 67)).to_have_text("line 67")
    gap(page, "34–66").scroll_into_view_if_needed()
    shoot(page, "expand-context")
    # all: the rest of the middle, then above the first hunk and below the last
    gap(page, "34–66").locator("a.gap-all").click()
    htmx_idle(page)
    gap(page, "1–6").locator("a.gap-all").click()
    htmx_idle(page)
    gap(page, "94–100").locator("a.gap-all").click()
    htmx_idle(page)
    expect(page.locator("tr.gap")).to_have_count(0)
    # every line once, numbered on both sides: 98 unchanged, 2 changed
    expect(page.locator("table.diff-unified tr.ctx")).to_have_count(98)
    expect(page.locator("table.diff-unified tr.add")).to_have_count(2)
    expect(new_line(page, 100)).to_have_text("line 100")
    old_50 = page.locator("table.diff-unified tr.ctx td.ln:first-child[data-line='50']")
    expect(old_50).to_have_count(1)

    # the rendered view of a markdown diff, chosen once and remembered
    page.goto(f"{base}/commit/{prose_sha}/")
    page.locator(".prose-toggle").get_by_role("link", name="Rendered").click()
    page.wait_for_url(re.compile(rf".*/commit/{prose_sha}/#diff-"))
    prose = page.locator(".prose-diff")
    expect(prose.locator("ins", has_text="Thursday")).to_have_count(1)
    expect(prose.locator("del", has_text="Tuesday")).to_have_count(1)
    expect(prose.locator("del.prose-block")).to_contain_text("call Bob")
    expect(prose.locator("ins.prose-block h2")).to_have_text("Escalation")
    prose.scroll_into_view_if_needed()
    shoot(page, "prose-diff")
    page.reload()
    expect(page.locator(".prose-diff")).to_have_count(1)
    page.locator(".prose-toggle").get_by_role("link", name="Source").click()
    page.wait_for_url(re.compile(rf".*/commit/{prose_sha}/#diff-"))
    expect(page.locator(".prose-diff")).to_have_count(0)
    expect(page.locator("table.diff-unified")).to_have_count(1)
    assert errors == []


def test_rendered_diff_marks_words_inside_a_long_paragraph(live_workspace, page_for):
    base, store = live_workspace
    lines = [f"Line {n} of the runbook keeps the agent's notes on deploys and rollouts."
             for n in range(1, 59)]
    new = [line.replace("deploys", "canary deploys") if n in (5, 21, 38, 56) else line
           for n, line in enumerate(lines, 1)]
    store.write(PROSE, "# Runbook\n\n" + "\n".join(lines) + "\n", actor=Actor.agent("ops-bot"),
                tool="reflect")
    sha = store.write(PROSE, "# Runbook\n\n" + "\n".join(new) + "\n",
                      actor=Actor.user("alice"), tool="edit").commit

    page = page_for("viewer")
    errors = watch_console(page)
    page.goto(f"{base}/commit/{sha}/")
    page.locator(".prose-toggle").get_by_role("link", name="Rendered").click()
    page.wait_for_url(re.compile(rf".*/commit/{sha}/#diff-"))
    prose = page.locator(".prose-diff")
    expect(prose.locator(".prose-change")).to_have_count(1)
    expect(prose.locator(".prose-change ins")).to_have_count(4)
    expect(prose.locator(".prose-change ins").first).to_have_text("canary ")
    # the paragraph is neither struck nor inserted whole
    expect(prose.locator(".prose-block.prose-del, .prose-block.prose-ins")).to_have_count(0)
    expect(prose.locator(".prose-change")).to_contain_text("Line 58 of the runbook")
    assert errors == []
