"""In real Chromium: the review queue's forms, with JavaScript and without.

A new skill keeps the Description typed after "Update draft" when it is promoted; each card
promotes through one form (a button per target); near-duplicates are folded until opened.
"""

from __future__ import annotations

from playwright.sync_api import expect

from memoryui.demo import SUBJECTS
from memoryui.review import dom_id
from memoryui.store import skills
from tests.browser.conftest import htmx_idle, new_context, sign_in, watch_console
from tests.browser.test_review import _log

D0, D1, D2 = "2026-02-10", "2026-02-11", "2026-02-12"
DESCRIPTION = "Roll out changes behind a canary. Use when deploying anything customers see."


def test_a_new_skill_keeps_its_description_with_and_without_javascript(
        live_workspace, page_for, browser, make_user):
    base, store = live_workspace
    canary = _log(store, "ops-bot", D2, "09:15", "Canary at 5% caught the bad build.")
    disk = _log(store, "ops-bot", D2, "10:00", "Paged Bob at night for disk pressure.")
    queue_url = f"{base}/review/?from={D2}&to={D2}"

    # With JavaScript: the editor opens inside the card.
    page = page_for("curator", "lead")
    errors = watch_console(page)
    page.goto(queue_url)
    card = page.locator(f"#{dom_id(canary)}")
    card.locator(".promote-menu summary").click()
    card.locator(".promote-menu button", has_text="Skill").click()
    editor = card.locator(".promote-editor")
    htmx_idle(page)
    editor.locator("input[name=name]").fill("canary-deploys")
    editor.get_by_role("button", name="Update draft").click()
    htmx_idle(page)
    expect(editor.locator("textarea[name=text]")).to_contain_text("name: canary-deploys")
    editor.get_by_label("Description").fill(DESCRIPTION)
    editor.get_by_role("button", name="Promote and commit").click()
    path = "skills/canary-deploys/SKILL.md"
    expect(card.locator(".entry-outcome")).to_contain_text("Promoted to " + path)
    skill = skills.parse(store.read(path), "canary-deploys")
    assert skill.description == DESCRIPTION
    assert "Canary at 5% caught the bad build." in skill.body
    assert store.log(limit=1)[0].trailers["Promoted-From"] == [canary]
    assert errors == []

    # Without JavaScript: the same steps on the editor's own page.
    user = make_user("curator", "nojs")
    ctx = new_context(browser, java_script_enabled=False)
    try:
        page = ctx.new_page()
        sign_in(page, base, user.username)
        page.goto(queue_url)
        card = page.locator(f"#{dom_id(disk)}")
        card.locator(".promote-menu summary").click()
        card.locator(".promote-menu button", has_text="Skill").click()
        page.wait_for_url(f"{base}/review/promote/**")
        page.locator("input[name=name]").fill("disk-pressure")
        page.get_by_role("button", name="Update draft").click()
        expect(page.locator("textarea[name=text]")).to_contain_text("name: disk-pressure")
        page.get_by_label("Description").fill("Free disk space. Use when a disk fills up.")
        page.get_by_role("button", name="Promote and commit").click()
        page.wait_for_url(queue_url)
        expect(page.locator("#messages")).to_contain_text(
            "Promoted 1 entry into skills/disk-pressure/SKILL.md")
        skill = skills.parse(store.read("skills/disk-pressure/SKILL.md"), "disk-pressure")
        assert skill.description == "Free disk space. Use when a disk fills up."
    finally:
        ctx.close()


def test_near_duplicates_fold_and_a_card_promotes_through_one_form_without_javascript(
        live_workspace, browser, make_user):
    base, store = live_workspace
    group = [_log(store, scope, day, "09:00", SUBJECTS["deploy"].format(n=n))
             for n, (scope, day) in enumerate(
                 [("ops-bot", D0), ("ops-bot", D1), ("deploy-bot", D2)], 1)]
    rerank = _log(store, "research-agent", D2, "13:00", "BM25 plus rerank beats dense-only.")
    queue_path = f"/review/?from={D0}&to={D2}"
    user = make_user("curator", "nojs")
    ctx = new_context(browser, java_script_enabled=False)
    try:
        page = ctx.new_page()
        sign_in(page, base, user.username)
        page.goto(base + queue_path)

        # The group is one card; its other entries stay folded until the lead opens them.
        card = page.locator(f"#{dom_id(group[-1])}")
        expect(card.locator(".badge-group")).to_have_text("×3 similar")
        members = card.locator(".entry-group-members li")
        expect(members).to_have_count(2)
        expect(members.first).to_be_hidden()
        card.get_by_text("The same fact, also written 2 more times").click()
        expect(members.nth(0)).to_be_visible()
        expect(members.nth(0)).to_contain_text(D1)
        expect(members.nth(1)).to_contain_text(D0)
        expect(card.get_by_role("button", name="Dismiss all 3")).to_be_visible()

        # "Promote once" opens the editor for every entry of the group, the newest text once.
        card.get_by_role("button", name="Promote once").click()
        page.wait_for_url(f"{base}/review/promote/**")
        expect(page.locator(".page-header h1")).to_have_text("Promote 3 entries")
        text = page.locator("textarea[name=text]").input_value()
        assert text.count("Deployed api") == 1 and "v2.3" in text

        # A card's menu is one form: each target is a button sending the entry and the way back.
        page.goto(base + queue_path)
        card = page.locator(f"#{dom_id(rerank)}")
        menu = card.locator(".promote-menu")
        expect(menu.locator("button")).to_have_count(4)
        menu.locator("summary").click()
        menu.get_by_role("button", name="Global memory").click()
        page.wait_for_url(f"{base}/review/promote/**")
        expect(page.locator(".promote-editor h2")).to_contain_text("Promote 1 entry into")
        expect(page.locator(".promote-editor-head a.mono")).to_have_text("memory/MEMORY.md")
        page.get_by_role("button", name="Promote and commit").click()
        page.wait_for_url(base + queue_path)  # back to the queue, filters kept
        assert store.log(limit=1)[0].trailers["Promoted-From"] == [rerank]
    finally:
        ctx.close()
