"""In real Chromium: promotion that fits the target. A lead promotes an entry under a
numbered list (it becomes the list's next item, dated and linked back), rewrites it, moves
it to global memory and back without losing the rewrite, saves; then promotes another entry
from the daily log's own page. No console error or CSP violation on the way."""

from __future__ import annotations

from playwright.sync_api import expect

from memoryui.review import dom_id
from memoryui.store import Actor, Kind, parse_daily
from tests.browser.conftest import SCREENSHOTS, htmx_idle, watch_console

D = "2026-02-12"
MEM = "agents/ops-bot/memory/MEMORY.md"
MEMORY = ("# ops-bot memory\n\n## Runbook\n1. Check the canary dashboard.\n"
          "2. Roll back on a red canary.\n\n## Contacts\nBob is on call this week.\n")


def _log(store, time: str, text: str) -> str:
    path = store.path_for(Kind.DAILY, "ops-bot", D)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {D}\n",
                 actor=Actor.agent("ops-bot"), tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time)
    return f"{path}#{entry.id}"


def test_list_style_promotion_keeps_edits_across_targets(live_workspace, page_for):
    base, store = live_workspace
    store.write(MEM, MEMORY, actor=Actor.agent("ops-bot"), tool="reflect")
    key = _log(store, "09:15", "Canary at 5% caught the bad build.\nRollback took 2 minutes.")
    disk = _log(store, "16:40", "Disk alerts fire at 85%.")
    mark = f"([{D}, ops-bot](daily/{D}.md#e-{key.split('#')[1]}))"
    page = page_for("curator", "lead")
    errors = watch_console(page)
    page.goto(f"{base}/review/?from={D}&to={D}")

    card = page.locator(f"#{dom_id(key)}")
    card.locator(".js-promote").click()
    editor = card.locator(".promote-editor")
    expect(editor).to_be_visible()
    htmx_idle(page)
    editor.locator("select[name=place]").select_option(label="under ## Runbook")
    expect(card.locator("textarea[name=text]")).to_have_value(MEMORY.replace(
        "2. Roll back on a red canary.\n",
        "2. Roll back on a red canary.\n3. Canary at 5% caught the bad build.\n"
        f"    Rollback took 2 minutes. {mark}\n"))
    # The preview shows a three-item numbered list.
    expect(card.locator(".editor-preview ol > li")).to_have_count(3)
    htmx_idle(page)
    textarea = card.locator("textarea[name=text]")
    textarea.fill(textarea.input_value().replace("Canary at 5% caught the bad build.",
                                                 "Watch the 5% canary: it caught build 4711."))
    expect(card.locator(".editor-preview")).to_contain_text("it caught build 4711")
    # caret="initial": hiding the caret leaves `style=""` on form fields, which htmx's
    # settle then copies onto the swapped-in fields (a CSP violation no person causes).
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "promote-fit.png"), caret="initial")

    # To global memory: a paragraph there, the rewrite kept, the link re-pointed.
    htmx_idle(page)
    card.locator("select[name=kind]").select_option("global")
    shared = f"([{D}, ops-bot](../agents/ops-bot/memory/daily/{D}.md#e-{key.split('#')[1]}))"
    expect(card.locator("textarea[name=text]")).to_have_value(
        f"Watch the 5% canary: it caught build 4711.\nRollback took 2 minutes. {shared}\n")
    # Back to ops-bot's MEMORY.md under "## Runbook": the list's next item again, still edited.
    htmx_idle(page)
    card.locator("select[name=kind]").select_option("memory")
    htmx_idle(page)
    card.locator("select[name=place]").select_option(label="under ## Runbook")
    expected = MEMORY.replace(
        "2. Roll back on a red canary.\n",
        "2. Roll back on a red canary.\n3. Watch the 5% canary: it caught build 4711.\n"
        f"    Rollback took 2 minutes. {mark}\n")
    expect(card.locator("textarea[name=text]")).to_have_value(expected)
    htmx_idle(page)
    card.get_by_role("button", name="Promote and commit").click()
    expect(card.locator(".entry-outcome")).to_contain_text("Promoted to " + MEM)
    assert (store.root / MEM).read_text() == expected
    assert store.log(limit=1)[0].trailers["Promoted-From"] == [key]

    # The file page renders the list with the marker linking to the entry on its daily log.
    page.goto(f"{base}/f/{MEM}")
    item = page.locator("article.markdown ol > li").nth(2)
    expect(item).to_contain_text(f"it caught build 4711. Rollback took 2 minutes. ({D}, ops-bot)")
    item.get_by_role("link", name=f"{D}, ops-bot").click()
    page.wait_for_url(f"**/f/{store.path_for(Kind.DAILY, 'ops-bot', D)}#e-{key.split('#')[1]}")

    # Promote from the daily log's own page: the editor for that entry, then back here.
    daily_url = page.url.split("#")[0]
    page.locator(f"#e-{disk.split('#')[1]}").get_by_role("link", name="Promote").click()
    page.wait_for_url(f"{base}/review/promote/**")
    expect(page.locator("textarea[name=text]")).to_contain_text("Disk alerts fire at 85%.")
    htmx_idle(page)
    page.get_by_role("button", name="Promote and commit").click()
    page.wait_for_url(daily_url)
    assert store.log(limit=1)[0].trailers["Promoted-From"] == [disk]
    assert errors == []
