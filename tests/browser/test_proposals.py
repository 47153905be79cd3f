"""In real Chromium: the inbox of proposed changes. Approve, edit then approve (with the
live preview), reject with a reason, bulk with filters (JavaScript off: plain forms), a
stale proposal whose three-way merge lands, and the conflict view at phone width."""

from __future__ import annotations

from playwright.sync_api import expect

from memoryui import proposing
from memoryui.store import Actor, Kind
from tests.browser.conftest import htmx_idle, new_context, sign_in
from tests.browser.test_layout import PHONE, violations, watch
from tests.web.test_proposals import proposal

INBOX = "/review/proposals/"
LEAD = Actor.user("lead")


def memory(store, scope: str, text: str) -> str:
    path = store.path_for(Kind.MEMORY, scope)
    store.write(path, text, actor=LEAD, tool="edit")
    return path


def test_approve_edit_then_approve_and_reject(live_workspace, page_for):
    base, store = live_workspace
    ops = memory(store, "ops-bot", "# Memory\n\n- one\n")
    qa = memory(store, "qa-bot", "# Memory\n\n- one\n")
    dev = memory(store, "dev-bot", "# Memory\n\n- one\n")
    a = proposal(store, "ops-bot", "# Memory\n\n- one\n- two\u200b\n")
    b = proposal(store, "qa-bot", "# Memory\n\n- one\n- tow\n")
    c = proposal(store, "dev-bot", "# Memory\n\n- one\n- wrong\n")
    page = page_for("curator", "lead")
    errors = watch(page)
    page.goto(base + INBOX)
    expect(page.locator(".topbar [data-proposals-count]")).to_have_text("3")

    # The invisible character is drawn as a marked token.
    card = page.locator(f"#proposal-{a}")
    expect(card.locator("abbr.invisible-char")).to_have_text("U+200B")
    expect(card.locator("abbr.invisible-char")).to_be_visible()
    card.get_by_role("button", name="Approve").click()
    expect(card.locator(".proposal-outcome")).to_contain_text("Approved by lead")
    expect(page.locator("#messages")).to_contain_text("Approved the proposal for " + ops)
    assert store.read(ops) == "# Memory\n\n- one\n- two\u200b\n"

    # Reject with a reason, in place.
    card = page.locator(f"#proposal-{c}")
    card.locator(".reject-menu summary").click()
    card.get_by_label("Why").fill("not true")
    card.get_by_role("button", name="Reject", exact=True).click()
    expect(card.locator(".proposal-outcome")).to_contain_text("Rejected by lead")
    expect(card.locator(".proposal-outcome")).to_contain_text("not true")
    assert store.read(dev) == "# Memory\n\n- one\n"

    # Edit then approve: the editor's live preview follows the text.
    page.locator(f"#proposal-{b}").get_by_role("link", name="Edit then approve").click()
    htmx_idle(page)
    text = page.locator("#editor-text")
    expect(text).to_have_value("# Memory\n\n- one\n- tow\n")
    text.fill("# Memory\n\n- one\n- two, fixed by the lead\n")
    expect(page.locator("#preview")).to_contain_text("two, fixed by the lead")
    page.get_by_role("button", name="Approve this text").click()
    page.wait_for_url(base + INBOX)
    expect(page.locator("#messages")).to_contain_text("Approved the proposal for " + qa)
    assert store.read(qa) == "# Memory\n\n- one\n- two, fixed by the lead\n"
    expect(page.locator(".proposal-card")).to_have_count(0)
    expect(page.locator(".topbar [data-proposals-count]")).to_have_count(0)
    assert violations(page) == [] and errors == []


def test_bulk_reject_and_approve_with_filters_without_javascript(live_workspace, browser,
                                                                 make_user):
    base, store = live_workspace
    ids = {}
    for scope in ("ops-bot", "qa-bot", "dev-bot"):
        memory(store, scope, "# Memory\n")
        ids[scope] = proposal(store, scope, f"# Memory\n\n- from {scope}\n")
    user = make_user("curator", "nojs")
    ctx = new_context(browser, java_script_enabled=False)
    try:
        page = ctx.new_page()
        sign_in(page, base, user.username)
        page.goto(base + INBOX)
        page.get_by_label("Proposer").select_option("qa-bot")
        page.get_by_role("button", name="Filter").click()
        expect(page.locator(".proposal-card")).to_have_count(1)
        page.locator(f"#proposal-{ids['qa-bot']} .proposal-select").check()
        page.get_by_label("Reason for rejecting").fill("duplicate")
        page.get_by_role("button", name="Reject selected").click()
        expect(page.locator("#messages")).to_contain_text("Rejected 1 proposal.")
        assert "proposer=qa-bot" in page.url  # back to the same filters
        page.goto(base + INBOX)
        expect(page.locator(".proposal-card")).to_have_count(2)
        for box in page.locator(".proposal-select").all():
            box.check()
        page.get_by_role("button", name="Approve selected").click()
        expect(page.locator("#messages")).to_contain_text("Approved 2 proposals.")
        assert [proposing.get(ids[s]).status for s in ("ops-bot", "qa-bot", "dev-bot")] == \
            ["approved", "rejected", "approved"]
        assert store.read(store.path_for(Kind.MEMORY, "dev-bot")) == "# Memory\n\n- from dev-bot\n"
    finally:
        ctx.close()


def test_stale_proposal_merges_and_a_conflict_is_resolved_at_phone_width(live_workspace,
                                                                        browser, make_user):
    base, store = live_workspace
    ops = memory(store, "ops-bot", "# Memory\n\n- one\n- two\n- three\n")
    qa = memory(store, "qa-bot", "# Memory\n\n- one\n- two\n- three\n")
    stale = proposal(store, "ops-bot", "# Memory\n\n- one\n- two\n- three\n- four\n")
    clash = proposal(store, "qa-bot", "# Memory\n\n- one\n- TWO by the agent\n- three\n")
    store.write(ops, "# Memory\n\n- ONE\n- two\n- three\n", actor=LEAD, tool="edit")
    store.write(qa, "# Memory\n\n- one\n- two by the lead\n- three\n", actor=LEAD, tool="edit")
    user = make_user("curator", "phone")
    ctx = new_context(browser, viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        errors = watch(page)
        sign_in(page, base, user.username)
        page.goto(base + INBOX)
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        card = page.locator(f"#proposal-{stale}")
        expect(card).to_contain_text("file changed since")
        card.get_by_role("button", name="Merge and approve").click()
        expect(card.locator(".proposal-outcome")).to_contain_text("Approved by phone")
        assert store.read(ops) == "# Memory\n\n- ONE\n- two\n- three\n- four\n"

        # The conflicting one opens the conflict view; the newer file is untouched.
        page.locator(f"#proposal-{clash}").get_by_role("button", name="Merge and approve").click()
        page.wait_for_url(lambda url: f"/review/proposals/{clash}/edit/" in url)
        expect(page.locator("[data-proposal-conflict] h2")).to_contain_text("Conflict")
        text = page.locator("#editor-text")
        assert "<<<<<<< the proposal" in text.input_value()
        assert store.read(qa) == "# Memory\n\n- one\n- two by the lead\n- three\n"
        assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        page.get_by_role("button", name="Approve this text").click()  # markers left: refused
        expect(page.locator(".editor-error")).to_contain_text("conflict markers")
        page.locator("#editor-text").fill("# Memory\n\n- one\n- two by the lead and agent\n"
                                          "- three\n")
        page.get_by_role("button", name="Approve this text").click()
        page.wait_for_url(base + INBOX)
        assert store.read(qa) == "# Memory\n\n- one\n- two by the lead and agent\n- three\n"
        assert violations(page) == []
        assert [e for e in errors if "status of 400" not in e] == []  # (the refusal above)
    finally:
        ctx.close()
