"""In real Chromium: review a queue of entries from three agents with the keyboard and mouse.

Promote one entry into an agent's MEMORY.md with an edit, promote two (multi-select) into a new
skill, dismiss one, undo a promotion; after each step check the files on disk, the commits and
the queue.
"""

from __future__ import annotations

from urllib.parse import quote

from playwright.sync_api import expect

from memoryui.models import Promotion, ReviewState
from memoryui.review import dom_id
from memoryui.store import Actor, Kind, parse_daily, skills
from tests.browser.conftest import htmx_idle, new_context, screenshot, sign_in, watch_console

D1, D2 = "2026-02-11", "2026-02-12"
MEM = "agents/ops-bot/memory/MEMORY.md"
MEMORY = "# ops-bot memory\n\n## Facts\n- I work for Initech.\n\n## Lessons\n- Check canaries.\n"
SKILL = "skills/canary-deploys/SKILL.md"


def _log(store, scope: str, date: str, time: str, text: str) -> str:
    path = store.path_for(Kind.DAILY, scope, date)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {date}\n",
                 actor=Actor.agent(scope), tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time)
    return f"{path}#{entry.id}"


def _mark(key: str, rel: str) -> str:
    """The provenance marker a draft gives an entry (its date, scope and a link back)."""
    path, entry_id = key.split("#")
    scope, date = path.split("/")[1], path.rsplit("/", 1)[1][:-3]
    return f"([{date}, {scope}]({rel}#e-{entry_id}))"


def _queue_ids(page) -> list[str]:
    return page.locator("#review-queue li.queue-item.is-todo").evaluate_all(
        "els => els.map(e => e.id)")


def test_review_queue_end_to_end(live_workspace, page_for):
    base, store = live_workspace
    store.write(MEM, MEMORY, actor=Actor.agent("ops-bot"), tool="reflect")
    keys = {
        "ops-canary": _log(store, "ops-bot", D2, "09:15",
                           "Canary at 5% caught the bad build before customers did."),
        "ops-disk": _log(store, "ops-bot", D2, "16:40", "Paged Bob at night for disk pressure."),
        "res-rerank": _log(store, "research-agent", D2, "11:30",
                           "BM25 plus rerank beats dense-only.\n\n```sh\n$ rerank --k 50\n```"),
        "sup-globex": _log(store, "support-bot", D1, "08:05", "Globex prefers email over chat."),
        "sup-rollout": _log(store, "support-bot", D1, "14:20",
                            "Roll out the canary to 25% only after support checks tickets."),
    }
    queue_url = f"{base}/review/?from={D1}&to={D2}"
    page = page_for("curator", "lead")
    errors = watch_console(page)
    page.on("dialog", lambda d: d.accept())
    page.goto(queue_url)

    # The queue: newest first, three agents, counts per scope.
    newest_first = ["ops-disk", "res-rerank", "ops-canary", "sup-rollout", "sup-globex"]
    screenshot(page, "review-queue")
    assert _queue_ids(page) == [dom_id(keys[k]) for k in newest_first]
    counts = " ".join(page.locator(".review-counts").inner_text().split())
    assert "ops-bot 2" in counts and "research-agent 1" in counts and "support-bot 2" in counts
    screenshot(page, "review-queue")

    # -- 1. keyboard: j j j to the canary entry, p opens the editor in place ------------------
    page.locator("body").press("j")
    page.keyboard.press("j")
    page.keyboard.press("j")
    canary = page.locator(f"#{dom_id(keys['ops-canary'])}")
    expect(canary).to_have_class(r"queue-item is-todo is-current")
    expect(canary).to_be_focused()
    page.keyboard.press("p")
    editor = canary.locator(".promote-editor")
    expect(editor).to_be_visible()
    assert page.url == queue_url  # htmx, not a navigation
    textarea = editor.locator("textarea[name=text]")
    expect(textarea).to_be_focused()
    mark = _mark(keys["ops-canary"], f"daily/{D2}.md")
    assert textarea.input_value().endswith("- Check canaries.\n- Canary at 5% caught the bad "
                                           f"build before customers did. {mark}\n")
    # Put it under "## Facts" instead: the draft is rebuilt from the target's text.
    editor.locator("select[name=place]").select_option(label="under ## Facts")
    editor = canary.locator(".promote-editor")
    expect(editor.locator("textarea[name=text]")).to_have_value(
        "# ops-bot memory\n\n## Facts\n- I work for Initech.\n- Canary at 5% caught the bad "
        f"build before customers did. {mark}\n\n## Lessons\n- Check canaries.\n")
    # Rewrite it as a fact; the live preview follows.
    htmx_idle(page)
    textarea = editor.locator("textarea[name=text]")
    edited = textarea.input_value().replace(
        f"- Canary at 5% caught the bad build before customers did. {mark}\n",
        "- Canary deploys at 5% catch bad builds early.\n")
    textarea.fill(edited)
    expect(editor.locator(".editor-preview")).to_contain_text("catch bad builds early")
    screenshot(page, "review-promote-editor")
    textarea.press("Control+Enter")
    expect(canary.locator(".entry-outcome")).to_contain_text("Promoted to " + MEM)
    expect(page.locator("#messages")).to_contain_text("Promoted 1 entry into " + MEM)
    # Files, commits, queue.
    assert (store.root / MEM).read_text() == edited
    c1 = store.log(limit=1)[0]
    assert c1.trailers["Promoted-From"] == [keys["ops-canary"]] and c1.actor == "user:lead"
    assert canary.locator(f"a[href='/commit/{c1.sha}/']").count() == 1
    page.goto(queue_url)
    assert dom_id(keys["ops-canary"]) not in _queue_ids(page)
    assert len(_queue_ids(page)) == 4

    # -- 2. multi-select two entries into a new skill (one commit) ----------------------------
    rerank = page.locator(f"#{dom_id(keys['res-rerank'])}")
    rollout = page.locator(f"#{dom_id(keys['sup-rollout'])}")
    rerank.click(position={"x": 300, "y": 8})
    page.keyboard.press("x")  # select the current entry
    rollout.locator("input.js-select").check()
    expect(rerank.locator("input.js-select")).to_be_checked()
    bulk = page.locator("#bulk-form")
    bulk.locator("select[name=kind]").select_option("skill")
    bulk.locator("input[name=name]").fill("canary-deploys")
    bulk.get_by_role("button", name="Promote selected").click()
    editor = page.locator("#bulk-slot .promote-editor")
    expect(editor).to_be_visible()
    expect(editor.locator("h2").first).to_contain_text("Promote 2 entries into skill "
                                                          "canary-deploys")
    htmx_idle(page)
    editor.locator("input[name=description]").fill(
        "Roll out changes behind a canary. Use when deploying anything customers see.")
    editor.get_by_role("button", name="Update draft").click()
    htmx_idle(page)
    textarea = page.locator("#bulk-slot textarea[name=text]")
    expect(textarea).to_contain_text("description: Roll out changes behind a canary.")
    draft = textarea.input_value()
    head = store.head()
    page.locator("#bulk-slot").get_by_role("button", name="Promote and commit").click()
    expect(page.locator("#bulk-slot")).to_be_empty()
    expect(rerank.locator(".entry-outcome")).to_contain_text("Promoted to " + SKILL)
    expect(rollout.locator(".entry-outcome")).to_contain_text("Promoted to " + SKILL)
    text = (store.root / SKILL).read_text()
    assert text == draft
    assert skills.parse(text, "canary-deploys").body.count("```sh") == 1
    c2, before = store.log(limit=2)
    assert before.sha == head  # one commit for both entries
    assert c2.trailers["Promoted-From"] == [keys["sup-rollout"], keys["res-rerank"]]
    page.goto(queue_url)
    assert _queue_ids(page) == [dom_id(keys[k]) for k in ("ops-disk", "sup-globex")]

    # -- 3. dismiss one with the keyboard ------------------------------------------------------
    head = store.head()
    page.locator("body").press("j")
    disk = page.locator(f"#{dom_id(keys['ops-disk'])}")
    expect(disk).to_have_class(r"queue-item is-todo is-current")
    page.keyboard.press("d")
    expect(disk.locator(".entry-outcome")).to_contain_text("Dismissed by lead")
    # The keyboard moves on to the next entry, still in the queue.
    expect(page.locator(f"#{dom_id(keys['sup-globex'])}")).to_have_class(
        r"queue-item is-todo is-current")
    c_dismiss = store.log(limit=1)[0]  # recorded in history: an empty commit
    assert c_dismiss.parents == [head] and c_dismiss.files == []
    assert c_dismiss.trailers["Dismissed"] == [keys["ops-disk"]]
    assert ReviewState.objects.get(entry_id=keys["ops-disk"].split("#")[1]).status == \
        "dismissed"
    page.goto(queue_url)
    assert _queue_ids(page) == [dom_id(keys["sup-globex"])]

    # -- 4. undo the skill promotion -----------------------------------------------------------
    recent = page.locator("#recent-promotions li", has_text=SKILL)
    recent.get_by_role("button", name="Undo").click()
    expect(page.locator("#messages")).to_contain_text("Undid the promotion into " + SKILL)
    expect(page.locator("#recent-promotions li", has_text=SKILL)).to_contain_text(
        "undone by lead")
    assert not (store.root / SKILL).exists()
    c3 = store.log(limit=1)[0]
    assert c3.trailers["Reverts"] == [c2.sha] and c3.actor == "user:lead"
    assert Promotion.objects.get(commit_sha=c2.sha).undone_by == "lead"
    page.goto(queue_url)
    assert _queue_ids(page) == [dom_id(keys[k]) for k in ("res-rerank", "sup-rollout",
                                                          "sup-globex")]
    # The MEMORY.md promotion is untouched by the undo.
    assert (store.root / MEM).read_text() == edited
    assert errors == []


def test_review_works_without_javascript(live_workspace, browser, make_user):
    """Promote through the full-page editor and dismiss, with JavaScript off."""
    base, store = live_workspace
    store.write(MEM, MEMORY, actor=Actor.agent("ops-bot"), tool="reflect")
    key = _log(store, "ops-bot", D2, "09:15", "Canary at 5% caught the bad build.")
    other = _log(store, "ops-bot", D2, "10:00", "Disk alert at 85%.")
    user = make_user("curator", "nojs")
    ctx = new_context(browser, java_script_enabled=False)
    try:
        page = ctx.new_page()
        sign_in(page, base, user.username)
        queue_url = f"{base}/review/?from={D2}&to={D2}"
        page.goto(queue_url)
        entry = page.locator(f"#{dom_id(key)}")
        entry.get_by_role("button", name="Promote to ops-bot's MEMORY.md").click()
        page.wait_for_url(f"{base}/review/promote/**")
        assert page.locator(".page-header h1").inner_text() == "Promote 1 entry"
        page.select_option("select[name=place]", label="under ## Lessons")
        page.get_by_role("button", name="Update draft").click()  # a plain GET form
        promoted = MEMORY + f"- Canary at 5% caught the bad build. {_mark(key, f'daily/{D2}.md')}\n"
        expect(page.locator("textarea[name=text]")).to_have_value(promoted)
        screenshot(page, "review-promote-page-nojs")
        page.get_by_role("button", name="Promote and commit").click()
        page.wait_for_url(queue_url)
        expect(page.locator("#messages")).to_contain_text("Promoted 1 entry into " + MEM)
        assert (store.root / MEM).read_text() == promoted
        assert store.log(limit=1)[0].trailers["Promoted-From"] == [key]
        page.locator(f"#{dom_id(other)}").get_by_role("button", name="Dismiss").click()
        page.wait_for_url(queue_url)
        expect(page.locator("#messages")).to_contain_text("Dismissed 1 entry.")
        expect(page.locator(".empty")).to_contain_text("Nothing left to review")
    finally:
        ctx.close()


def test_entry_page_menu_and_full_page_editor_with_javascript(live_workspace, page_for):
    """Promote from an entry's own page, pick a target from the menu, and use the full-page
    editor with JavaScript on: each swap lands where it belongs, no console error."""
    base, store = live_workspace
    store.write(MEM, MEMORY, actor=Actor.agent("ops-bot"), tool="reflect")
    canary = _log(store, "ops-bot", D2, "09:15", "Canary at 5% caught the bad build.")
    disk = _log(store, "ops-bot", D2, "10:00", "Disk alert at 85%.")
    rerank = _log(store, "research-agent", D2, "11:30", "BM25 plus rerank beats dense-only.")
    queue_path = f"/review/?from={D2}&to={D2}"
    page = page_for("curator", "lead")
    errors = watch_console(page)

    # 1. The entry's own page: the inline editor saves, the card and the recent list follow.
    page.goto(f"{base}/review/entry/?entry={quote(canary, safe='')}")
    card = page.locator(f"#{dom_id(canary)}")
    card.locator(".js-promote").click()
    editor = card.locator(".promote-editor")
    expect(editor).to_be_visible()
    htmx_idle(page)
    editor.get_by_role("button", name="Promote and commit").click()
    expect(card.locator(".entry-outcome")).to_contain_text("Promoted to " + MEM)
    expect(page.locator("#recent-promotions li").first).to_contain_text(MEM)
    assert store.log(limit=1)[0].trailers["Promoted-From"] == [canary]

    # 2. The "Promote to" menu closes once a target is chosen (it covered the editor).
    page.goto(base + queue_path)
    item = page.locator(f"#{dom_id(rerank)}")
    item.locator(".promote-menu summary").click()
    item.locator(".promote-menu button", has_text="World topic").click()
    expect(item.locator(".promote-menu-body")).to_be_hidden()
    name = item.locator(".promote-editor input[name=name]")
    expect(name).to_be_visible()
    htmx_idle(page)
    name.fill("search")
    item.get_by_role("button", name="Update draft").click()
    expect(item.locator("textarea[name=text]")).to_have_value(
        "# Search\n\nBM25 plus rerank beats dense-only. "
        f"{_mark(rerank, f'../../agents/research-agent/memory/daily/{D2}.md')}\n")

    # 3. The full-page editor with JavaScript: choosing a place swaps only the editor,
    #    saving goes back to the queue.
    page.goto(f"{base}/review/promote/?entry={quote(disk, safe='')}&kind=memory"
              f"&next={quote(queue_path, safe='')}")
    htmx_idle(page)
    page.select_option("select[name=place]", label="under ## Facts")
    expected = (store.root / MEM).read_text().replace(
        "- I work for Initech.\n",
        f"- I work for Initech.\n- Disk alert at 85%. {_mark(disk, f'daily/{D2}.md')}\n")
    expect(page.locator("textarea[name=text]")).to_have_value(expected)
    assert page.locator("header.topbar").count() == 1  # not a page inside the page
    htmx_idle(page)
    page.get_by_role("button", name="Promote and commit").click()
    page.wait_for_url(base + queue_path)
    expect(page.locator("#messages")).to_contain_text("Promoted 1 entry into " + MEM)
    assert (store.root / MEM).read_text() == expected
    assert errors == []
