"""In real Chromium: from a DAG's page to "What etl-nightly sees": the exact text with
Dagu's 200-line cut marked and the dropped lines collapsed, the token estimate, the
since-diff redrawn by the date picker, and the way to the review queue.

With MEMORYUI_SCREENSHOTS=1 docs/screenshots/context.png is refreshed."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

from playwright.sync_api import expect

from memoryui.store import Actor, Kind
from tests.browser.conftest import htmx_idle, screenshot, watch_console

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DAG = "etl-nightly"
LESSONS = ["Retry the S3 upload once before failing the run.",
           "The warehouse is read-only between 02:00 and 02:30 UTC.",
           "Backfills over 7 days need the large worker pool."]


def test_what_a_dag_sees(settings, tmp_path, live_server, page_for) -> None:
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "ws-dagu"
    settings.MEMORYUI_LAYOUT = "dagu"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    try:
        store = get_store()
        agent = Actor.agent(DAG)
        path = store.path_for(Kind.MEMORY, DAG)
        body = "# etl-nightly\n\n## Lessons\n" + "".join(f"- {t}\n" for t in LESSONS) + \
            "\n## Run log\n" + "".join(f"- run {i}: ok\n" for i in range(1, 221))
        old = dt.datetime.now(dt.UTC) - dt.timedelta(days=10)
        store.write(store.path_for(Kind.GLOBAL), "# Global\n\n- Times are UTC.\n",
                    actor=agent, tool="agent_memory_update", when=old.timestamp())
        store.write(path, body, actor=agent, tool="agent_memory_update",
                    when=old.timestamp())
        added = "- Page the data team when a backfill stalls."
        store.write(path, body.replace("## Run log\n", f"{added}\n\n## Run log\n"),
                    actor=Actor.user("alice"), tool="edit")

        page = page_for("viewer")
        errors = watch_console(page)
        page.goto(f"{live_server.url}/s/{DAG}/")
        page.get_by_role("link", name=f"What {DAG} sees").click()
        page.wait_for_url(re.compile(rf".*/review/sees/{DAG}/$"))
        expect(page.get_by_role("heading", level=1)).to_have_text(f"What {DAG} sees")

        text = page.locator("[data-context-text]")
        expect(text).to_contain_text("[... truncated at 200 lines. Use read tool for full "
                                     f"file: {path}]")
        cut = page.locator("[data-cut]")
        expect(cut).to_have_text("— cut here: Dagu injects and reads the first 200 lines "
                                 "of MEMORY.md —")
        dropped = page.locator("details.ctx-dropped")
        expect(dropped.locator("pre")).to_be_hidden()  # collapsed until asked for
        dropped.locator("summary").click()
        expect(dropped.locator("pre")).to_contain_text("run 220: ok")
        expect(page.locator("[data-context-tokens]")).to_contain_text(re.compile(r"≈ \d+ tokens"))

        diff = page.locator("[data-context-diff]")
        expect(diff.locator("tr.add")).to_contain_text([added])
        dropped.locator("summary").click()
        cut.scroll_into_view_if_needed()
        screenshot(page, "context")
        if os.environ.get("MEMORYUI_SCREENSHOTS") == "1":  # refresh the README's picture
            DOCS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS / "context.png"), full_page=False)

        page.fill("#ctx-since-date", "2000-01-01")
        page.get_by_role("button", name="Compare").click()
        page.wait_for_url(re.compile(r".*since=2000-01-01"))
        htmx_idle(page)
        expect(page.locator("#context-diff")).to_contain_text("No commit before 2000-01-01")
        expect(page.locator("[data-context-diff] tr.del")).to_have_count(0)

        page.get_by_role("link", name=f"Review {DAG}'s entries").click()
        page.wait_for_url(re.compile(rf".*/review/\?scope={DAG}$"))
        assert errors == []
    finally:
        reset_store()
