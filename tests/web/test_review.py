"""Review queue and promotion through the real Django client on a real git workspace."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Kind, Store, parse_daily, promote, skills
from memoryui.store.workspace import version_of

pytestmark = pytest.mark.django_db

D0, D1, D2 = "2026-02-10", "2026-02-11", "2026-02-12"
RANGE = {"from": D0, "to": D2}
MEMORY = "# ops-bot memory\n\n## Facts\n- I work for Initech.\n\n## Lessons\n- Check canaries.\n"
HEADINGS_AND_CODE = ("Rollback worked.\n\n## Root cause\n\nA migration held a lock.\n\n"
                     "```sh\n## not a heading\n$ deployctl rollback api\n```")


def log(store: Store, scope: str, date: str, time: str, text: str) -> str:
    """Append one Duragent entry the way `remember` writes it; returns its key."""
    path = store.path_for(Kind.DAILY, scope, date)
    store.append(path, f"\n## {time}\n\n{text}\n", header=f"# {date}\n",
                 actor=Actor.agent(scope), tool="remember")
    entry = next(e for e in parse_daily(store.read(path)) if e.time == time and
                 e.body == text.strip())
    return f"{path}#{entry.id}"


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    s = workspace
    s.write(s.path_for(Kind.MEMORY, "ops-bot"), MEMORY, actor=Actor.agent("ops-bot"),
            tool="reflect")
    return {
        "ops1": log(s, "ops-bot", D1, "09:15", "Canary at 5% caught the bad build."),
        "ops2": log(s, "ops-bot", D2, "10:02", HEADINGS_AND_CODE),
        "ops3": log(s, "ops-bot", D2, "16:40", "Paged Bob at night for disk pressure."),
        "res1": log(s, "research-agent", D2, "11:30", "BM25 plus rerank beats dense-only."),
        "sup1": log(s, "support-bot", D0, "08:05", "Globex prefers email over chat."),
    }


def queue_url(**params: str) -> str:
    return "/review/?" + urlencode({**RANGE, **params})


def promote_url(keys: list[str], **params: str) -> str:
    return "/review/promote/?" + urlencode([("entry", k) for k in keys] + list(params.items()))


def editor_fields(html: str) -> dict[str, str]:
    """The hidden base and the textarea of the save form, as a browser would post them."""
    base = re.search(r'name="base" value="([^"]*)"', html).group(1)
    text = re.search(r'<textarea[^>]*name="text"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    import html as html_mod
    return {"base": base, "text": html_mod.unescape(text)}


def save(client, keys: list[str], *, text: str, base: str, **fields: str):
    data = [("entry", k) for k in keys] + [("text", text), ("base", base)]
    data += list(fields.items())
    return client.post("/review/promote/", urlencode(data),
                       content_type="application/x-www-form-urlencoded")


def promote_end_to_end(client, keys: list[str], **params: str):
    """Open the editor, keep its draft, save it; returns (response, draft text)."""
    page = client.get(promote_url(keys, **params))
    assert page.status_code == 200, page.content.decode()[:2000]
    fields = editor_fields(page.content.decode())
    form = {k: v for k, v in params.items() if k != "slot"}
    return save(client, keys, text=fields["text"], base=fields["base"], **form), fields["text"]


def entry_ids(html: str) -> list[str]:
    return re.findall(r'<li class="queue-item is-\w+" id="(entry-[0-9a-f]{12})"', html)


# -- the queue ---------------------------------------------------------------------------------

def test_queue_lists_unreviewed_entries_newest_first_grouped_by_day(client_as, seeded) -> None:
    from memoryui.review import dom_id

    client = client_as("viewer")
    r = client.get(queue_url())
    html = r.content.decode()
    assert r.status_code == 200
    order = [seeded[k] for k in ("ops3", "res1", "ops2", "ops1", "sup1")]
    assert entry_ids(html) == [dom_id(k) for k in order]
    days = re.findall(r'<h2 class="queue-day-title" id="day-([\d-]+)"', html)
    assert days == [D2, D1, D0]
    assert "5 entries to review" in html
    # Rendered markdown with scope badge, date and time.
    assert "Root cause</h2>" in html and '<code class="language-sh">' in html
    assert 'href="/s/ops-bot/"' in html and ">10:02<" in html
    # Counts per scope link to the filtered queue.
    counts = dict(re.findall(r'>([\w-]+) <span class="count">(\d+)</span></a>', html))
    assert counts == {"All": "5", "ops-bot": "3", "research-agent": "1", "support-bot": "1"}


def test_viewer_sees_the_queue_but_no_actions_and_cannot_act(client_as, seeded) -> None:
    client = client_as("viewer")
    html = client.get(queue_url()).content.decode()
    assert not re.search(r'class="[^"]*\bjs-(promote|dismiss|undo|select)\b', html)
    assert 'id="bulk-form"' not in html and 'method="post"' not in html.split("</header>")[1]
    assert client.get(promote_url([seeded["ops1"]])).status_code == 403
    key = seeded["ops1"]
    for url, data in [("/review/promote/", {"entry": key, "text": "x", "base": "absent"}),
                      ("/review/dismiss/", {"entry": key}), ("/review/reopen/", {"entry": key}),
                      ("/review/undo/1/", {})]:
        assert client.post(url, data).status_code == 403, url
        assert client.post(url, data, HTTP_HX_REQUEST="true").status_code == 403, url
    assert client.get(f"/review/dismiss/confirm/?entry={key}").status_code == 403
    assert ReviewState.objects.count() == 0
    # The neighbours fragment is reading, so viewers get it.
    assert client.get("/review/entry/?" + urlencode({"entry": key}),
                      HTTP_HX_REQUEST="true").status_code == 200


def test_every_action_of_a_card_opens_for_that_entry(client_as, seeded) -> None:
    """A card's neighbours link (tags.neighbours_link), a plain link back to this queue and
    an htmx request into the card's own slot; and its promote form, the entry's key once
    and a button per target, each opening the editor for that entry and target."""
    import html as html_mod
    from urllib.parse import parse_qs, urlsplit

    from memoryui.review import dom_id

    client = client_as("curator")
    url = queue_url()
    page = client.get(url).content.decode()
    key, slot = seeded["ops3"], dom_id(seeded["ops3"])
    card = page.split(f'id="{slot}"', 1)[1].split("</li>", 1)[0]
    links = [(html_mod.unescape(h), html_mod.unescape(x)) for h, x in
             re.findall(r'<a [^>]*href="(/review/[^"]+)" hx-get="([^"]+)"', card)]
    assert len(links) == 1  # neighbours; promotion is a form, not links
    plain, htmx = (parse_qs(urlsplit(u).query) for u in links[0])
    assert plain["entry"] == htmx["entry"] == [key]
    assert plain["next"] == [url] and "next" not in htmx
    form = card[card.index('<form class="inline-form promote-form"'):]
    form = form[:form.index("</form>")]
    assert card.count(key) == 3  # the checkbox, the promote form, the dismiss form
    assert f'hx-vals=\'{{"slot": "{slot}"}}\'' in form
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    assert hidden == {"entry": key, "next": html_mod.escape(url)}
    kinds = re.findall(r'<button type="submit"[^>]* name="kind" value="(\w+)"', form)
    assert kinds == ["memory", "memory", "global", "world", "skill"]
    for kind in kinds:  # what the browser sends for each button, without and with htmx
        query = {"entry": key, "next": url, "kind": kind}
        assert client.get(promote_url([key], next=url, kind=kind)).status_code == 200
        r = client.get("/review/promote/?" + urlencode({**query, "slot": slot}),
                       HTTP_HX_REQUEST="true")
        assert r.status_code == 200 and f'id="editor-{slot}"' in r.content.decode()


def test_anonymous_is_sent_to_sign_in(client, seeded) -> None:
    r = client.get("/review/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
    assert client.post("/review/dismiss/", {"entry": seeded["ops1"]}).status_code == 302
    assert ReviewState.objects.count() == 0


def test_curator_gets_keyboard_and_action_markup(client_as, seeded) -> None:
    html = client_as("curator").get(queue_url()).content.decode()
    assert 'data-keynav' in html and 'data-key-p=".js-promote"' in html
    assert 'data-key-d=".js-dismiss"' in html
    assert html.count("data-keynav-item") == 5
    assert html.count('class="btn btn-sm btn-primary js-promote"') == 5
    assert html.count('class="btn btn-sm js-dismiss"') == 5
    # Skip jumps to the next entry on the page.
    from memoryui.review import dom_id
    assert f'href="#{dom_id(seeded["res1"])}"' in html
    # No inline script or style (the CSP forbids them).
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert ' style="' not in html and "<style" not in html


def test_filters_scope_text_dates_and_status(client_as, seeded) -> None:
    client = client_as("viewer")
    html = client.get(queue_url(scope="ops-bot")).content.decode()
    assert len(entry_ids(html)) == 3
    html = client.get(queue_url(q="email GLOBEX")).content.decode()
    assert len(entry_ids(html)) == 1 and "Globex prefers email" in html
    html = client.get(queue_url(**{"from": D2})).content.decode()
    assert len(entry_ids(html)) == 3
    html = client.get(queue_url(status="promoted")).content.decode()
    assert entry_ids(html) == []
    html = client.get(queue_url(page="9")).content.decode()  # past the end: the last page
    assert len(entry_ids(html)) == 5 and "Page 1 of 1" in html
    for bad in ({"from": "yesterday"}, {"from": D2, "to": D0}, {"scope": "../etc"},
                {"status": "weird"}, {"page": "x"}):
        r = client.get("/review/?" + urlencode(bad))
        assert r.status_code == 400, bad
        assert 'role="alert"' in r.content.decode()


def test_default_range_is_the_last_seven_days(client_as, workspace) -> None:
    today = timezone.localdate()
    recent = log(workspace, "ops-bot", today.isoformat(), "09:00", "Fresh lesson.")
    log(workspace, "ops-bot", (today - dt.timedelta(days=7)).isoformat(), "09:00", "Old one.")
    html = client_as("viewer").get("/review/").content.decode()
    assert "Fresh lesson." in html and "Old one." not in html
    assert recent.split("#")[0] in html


def test_neighbours_fragment_and_page_without_javascript(client_as, seeded) -> None:
    client = client_as("viewer")
    key = seeded["ops3"]
    frag = client.get("/review/entry/?" + urlencode({"entry": key}), HTTP_HX_REQUEST="true")
    html = frag.content.decode()
    assert frag.status_code == 200 and "<html" not in html
    assert "Root cause" in html  # the entry before it that day
    assert "No later entry that day." in html
    page = client.get("/review/entry/?" + urlencode({"entry": key})).content.decode()
    assert "<html" in page and "Paged Bob" in page and "Root cause" in page
    assert client.get("/review/entry/?entry=memory/MEMORY.md%23x").status_code == 400
    assert client.get("/review/entry/?entry=../../etc/passwd%23x").status_code == 400
    missing = seeded["ops3"].split("#")[0] + "#1640-00000000"
    assert client.get("/review/entry/?" + urlencode({"entry": missing})).status_code == 404


# -- promotion ---------------------------------------------------------------------------------

def test_editor_is_prefilled_with_the_target_and_the_entry_in_place(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    r = client.get(promote_url([key], kind="memory", scope="ops-bot"))
    html = r.content.decode()
    assert r.status_code == 200 and "<html" in html  # a full page without htmx
    text = editor_fields(html)["text"]
    # A list item after the list, dated and linked back to the entry (MEMORYUI_PROVENANCE).
    mark = f"([{D1}, ops-bot](daily/{D1}.md#e-{key.split('#')[1]}))"
    assert text == MEMORY + f"- Canary at 5% caught the bad build. {mark}\n"
    assert version_of(MEMORY) in html
    # The heading chooser lists the target's headings; choosing one re-renders the draft.
    assert ">under ## Facts<" in html and ">under ## Lessons<" in html
    r = client.get(promote_url([key], kind="memory", scope="ops-bot", place="1",
                               slot="entry-abc"), HTTP_HX_REQUEST="true")
    frag = r.content.decode()
    assert "<html" not in frag and 'id="editor-entry-abc"' in frag
    assert editor_fields(frag)["text"] == (
        "# ops-bot memory\n\n## Facts\n- I work for Initech.\n- Canary at 5% caught the bad "
        f"build. {mark}\n\n## Lessons\n- Check canaries.\n")
    # Live preview reuses the editor's /preview/ endpoint with the target path.
    assert 'hx-post="/preview/"' in frag
    assert 'name="path" value="agents/ops-bot/memory/MEMORY.md"' in frag


def test_promote_writes_one_commit_with_provenance_and_records_it(client_as, seeded,
                                                                  workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    head = workspace.head()
    page = client.get(promote_url([key], kind="memory", scope="ops-bot", place="2"))
    fields = editor_fields(page.content.decode())
    edited = fields["text"].replace("Canary at 5% caught", "A 5% canary catches")
    r = save(client, [key], text=edited, base=fields["base"], kind="memory", scope="ops-bot",
             next=queue_url())
    assert r.status_code == 302 and r["Location"] == queue_url()
    assert workspace.read(path) == edited
    commits = workspace.log(limit=5)
    assert commits[1].sha == head
    c = commits[0]
    assert [f.path for f in c.files] == [path]
    assert c.trailers["Promoted-From"] == [key]
    assert c.actor == "user:curator" and c.tools == ["promote"]
    assert c.subject == f"Promote 1 entry from ops-bot into {path}"
    promo = Promotion.objects.get()
    assert (promo.target_path, promo.target_kind, promo.commit_sha, promo.created_by) == (
        path, "memory", c.sha, "curator")
    state = ReviewState.objects.get()
    assert (state.status, state.promotion, state.scope, state.date) == (
        "promoted", promo, "ops-bot", D1)
    # The entry left the queue; the promoted view shows where it went.
    todo = client.get(queue_url()).content.decode()
    assert "Canary at 5% caught" not in todo
    done = client.get(queue_url(status="promoted")).content.decode()
    assert f'href="/commit/{c.sha}/"' in done and f"/f/{path}" in done.replace("%2F", "/")
    assert "by curator" in done and "Undo promotion" in done


def test_promoting_headings_and_code_keeps_the_target_structure(client_as, seeded,
                                                               workspace) -> None:
    client = client_as("curator")
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    r, draft = promote_end_to_end(client, [seeded["ops2"]], kind="memory", scope="ops-bot",
                                  place="1")
    assert r.status_code == 302
    text = workspace.read(path)
    assert text == draft
    outline = [(h.level, h.text) for h in promote.headings(text)]
    assert outline == [(1, "ops-bot memory"), (2, "Facts"), (3, "Root cause"), (2, "Lessons")]
    assert "```sh\n## not a heading\n$ deployctl rollback api\n```" in text


def test_htmx_save_swaps_the_entry_out_of_band_with_where_it_went(client_as, seeded,
                                                                 workspace) -> None:
    from memoryui.review import dom_id

    client = client_as("curator")
    key = seeded["res1"]
    page = client.get(promote_url([key], kind="global", slot=dom_id(key)),
                      HTTP_HX_REQUEST="true")
    fields = editor_fields(page.content.decode())
    r = client.post("/review/promote/", {"entry": key, "kind": "global", "slot": dom_id(key),
                                         **fields}, HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 200 and r["HX-Reswap"] == "none"
    assert f'id="{dom_id(key)}"' in html and 'hx-swap-oob="true"' in html
    assert "Promoted to" in html and "memory/MEMORY.md" in html
    sha = Promotion.objects.get().commit_sha
    assert f"/commit/{sha}/" in html and 'id="recent-promotions"' in html
    assert "Promoted 1 entry into memory/MEMORY.md" in html  # the flash, out of band
    assert workspace.read("memory/MEMORY.md") == (
        f"BM25 plus rerank beats dense-only. ([{D2}, research-agent](../agents/research-agent/"
        f"memory/daily/{D2}.md#e-{key.split('#')[1]}))\n")


def test_double_promotion_is_refused_with_a_clear_message(client_as, seeded,
                                                         workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    r, _ = promote_end_to_end(client, [key], kind="memory", scope="ops-bot")
    assert r.status_code == 302
    head = workspace.head()
    again = client.get(promote_url([key], kind="global"))
    assert again.status_code == 409
    assert "already promoted to agents/ops-bot/memory/MEMORY.md" in again.content.decode()
    r = save(client, [key, seeded["ops3"]], text="# Shared\n\nx\n", base="absent",
             kind="global")
    assert r.status_code == 409
    assert "already promoted" in r.content.decode()
    assert workspace.head() == head and workspace.read("memory/MEMORY.md") is None
    assert ReviewState.objects.count() == 1  # the other entry was not half-promoted


def test_multi_select_into_a_new_skill_is_one_commit_with_a_trailer_per_entry(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    keys = [seeded["ops1"], seeded["res1"]]
    desc = "Ship behind a canary. Use when deploying the api."
    r = client.get(promote_url(keys, kind="skill", name="canary-deploys", description=desc))
    html = r.content.decode()
    assert r.status_code == 200 and "new file" in html
    fields = editor_fields(html)
    assert fields["base"] == "absent"
    skill = skills.parse(fields["text"], "canary-deploys")
    assert skill.description == desc
    assert skill.body.index("Canary at 5%") < skill.body.index("BM25 plus")  # oldest first
    head = workspace.head()
    r = save(client, keys, text=fields["text"], base="absent", kind="skill",
             name="canary-deploys")
    assert r.status_code == 302
    new = workspace.log(limit=3)
    assert new[1].sha == head  # exactly one commit
    assert new[0].trailers["Promoted-From"] == [seeded["ops1"], seeded["res1"]]
    assert workspace.read("skills/canary-deploys/SKILL.md") == fields["text"]
    promo = Promotion.objects.get()
    assert promo.target_kind == "skill"
    assert sorted(s.entry_id for s in promo.entries.all()) == sorted(
        k.split("#")[1] for k in keys)


def test_skill_front_matter_errors_name_the_rule_and_write_nothing(client_as, seeded,
                                                                  workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    head = workspace.head()
    text = "---\nname: other-name\ndescription: Does <things>\nmodel: opus\n---\n\n# X\n"
    r = save(client, [key], text=text, base="absent", kind="skill", name="my-skill")
    html = r.content.decode()
    assert r.status_code == 400
    assert "must equal the skill&#x27;s folder name" in html
    assert "must not contain &#x27;&lt;&#x27; or &#x27;&gt;&#x27;" in html
    assert "&#x27;model&#x27; not allowed" in html
    # The lead's text is kept in the editor to fix.
    assert "Does &lt;things&gt;" in html
    # An empty description (the new-skill draft without one) is refused by its rule too.
    page = client.get(promote_url([key], kind="skill", name="my-skill"))
    r = save(client, [key], text=editor_fields(page.content.decode())["text"], base="absent",
             kind="skill", name="my-skill")
    assert r.status_code == 400 and "description: required" in r.content.decode()
    # A bad skill name is refused in the editor itself, naming the rule.
    r = client.get(promote_url([key], kind="skill", name="Bad_Name"))
    assert r.status_code == 400
    assert "lowercase letters, digits and single hyphens" in r.content.decode()
    assert workspace.head() == head and not workspace.exists("skills/my-skill/SKILL.md")
    assert ReviewState.objects.count() == 0


def test_world_topic_new_name_is_sanitized_and_a_missing_name_is_asked_for(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    key = seeded["sup1"]
    r = client.get(promote_url([key], kind="world", slot="bulk"), HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and 'name="name"' in r.content.decode()
    assert "promote-save" not in r.content.decode()  # no editor until the topic is named
    r, text = promote_end_to_end(client, [key], kind="world", name="Customer Prefs")
    assert r.status_code == 302
    assert workspace.read("memory/world/customer-prefs.md") == text
    assert text.startswith("# Customer prefs\n\nGlobex prefers email")


def test_stale_target_gets_the_conflict_view_and_a_merge(client_as, seeded,
                                                         workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    page = client.get(promote_url([key], kind="memory", scope="ops-bot", place="2"))
    fields = editor_fields(page.content.decode())
    # Meanwhile the agent reflects: a new fact at the top.
    workspace.write(path, MEMORY.replace("- I work for Initech.", "- I work for Initech.\n"
                                         "- Deploys are on Tuesdays."),
                    actor=Actor.agent("ops-bot"), tool="reflect")
    before = workspace.read(path)
    r = save(client, [key], text=fields["text"], base=fields["base"], kind="memory",
             scope="ops-bot", place="2")
    html = r.content.decode()
    assert r.status_code == 409
    assert "changed since you opened the editor" in html and "Nothing was saved" in html
    assert "merged with their change automatically" in html
    # the shared conflict component: both changes from the base, and the three texts
    assert "<summary>The version you started from → the current file</summary>" in html
    assert all(f'id="conflict-{role}"' in html for role in ("base", "ours", "theirs"))
    assert workspace.read(path) == before and ReviewState.objects.count() == 0
    merged = editor_fields(html)
    assert "Deploys are on Tuesdays" in merged["text"] and "Canary at 5%" in merged["text"]
    assert merged["base"] == version_of(before)
    r = save(client, [key], text=merged["text"], base=merged["base"], kind="memory",
             scope="ops-bot")
    assert r.status_code == 302 and workspace.read(path) == merged["text"]


def test_budget_warning_before_saving_a_promotion_that_crosses_it(client_as, seeded,
                                                                  workspace) -> None:
    client = client_as("curator")
    key = seeded["ops2"]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    big = MEMORY + "".join(f"- fact {i:04d} " + "x" * 80 + "\n" for i in range(106))
    assert len(big.encode()) < 10_000 < len(big.encode()) + 150
    workspace.write(path, big, actor=Actor.agent("ops-bot"), tool="reflect")
    page = client.get(promote_url([key], kind="memory", scope="ops-bot"))
    html = page.content.decode()
    assert "This promotion crosses the budget" in html and 'name="over_budget_ok"' in html
    fields = editor_fields(html)
    r = save(client, [key], text=fields["text"], base=fields["base"], kind="memory",
             scope="ops-bot")
    assert r.status_code == 400 and "over its budget" in r.content.decode()
    assert workspace.read(path) == big
    r = save(client, [key], text=fields["text"], base=fields["base"], kind="memory",
             scope="ops-bot", over_budget_ok="1")
    assert r.status_code == 302 and workspace.read(path) == fields["text"]


def test_bad_promote_input_is_a_clear_4xx(client_as, seeded, workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    assert client.get("/review/promote/").status_code == 400
    assert client.get(promote_url([key], kind="directive")).status_code == 400
    assert client.get(promote_url([key], kind="nope")).status_code == 400
    assert client.get(promote_url([key], kind="memory", scope="../x")).status_code == 400
    assert client.get(promote_url([key], place="x")).status_code == 400
    assert client.get(promote_url(["memory/MEMORY.md#abc"])).status_code == 400
    assert client.get(promote_url(["/etc/passwd#abc"])).status_code == 400
    r = save(client, [key], text="", base="absent", kind="global")
    assert r.status_code == 400 and "empty" in r.content.decode()
    r = save(client, [key], text="x\n", base="", kind="global")
    assert r.status_code == 400 and "base version is missing" in r.content.decode()
    r = save(client, [key], text="x\n", base="absent", kind="global",
             next="https://evil.example/")
    assert r.status_code == 302 and r["Location"] == "/review/"
    assert ReviewState.objects.count() == 1


def test_zerostack_layout_promotes_to_global_not_to_a_scope_memory(client_as, settings,
                                                                   tmp_path) -> None:
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_WORKSPACE = tmp_path / "zs"
    settings.MEMORYUI_LAYOUT = "zerostack"
    reset_store()
    try:
        store = get_store()
        path = store.path_for(Kind.DAILY, "proj-1a2b3c4d", D2)
        store.append(path, "\n### 14:05 — compaction summary\nGoal: ship.\n",
                     actor=Actor.agent("proj-1a2b3c4d"), tool="memory_write")
        client = client_as("curator")
        html = client.get(queue_url()).content.decode()
        assert "Promote to global memory" in html and "compaction summary" in html
        key = f"{path}#{parse_daily(store.read(path))[0].id}"
        assert client.get(promote_url([key], kind="memory", scope="proj-1a2b3c4d")
                          ).status_code == 400
        r, text = promote_end_to_end(client, [key], kind="global")
        assert r.status_code == 302
        assert store.read("MEMORY.md") == (
            f"compaction summary ([{D2}, proj-1a2b3c4d](projects/proj-1a2b3c4d/daily/{D2}.md"
            f"#e-{key.split('#')[1]}))\n\nGoal: ship.\n") == text
    finally:
        reset_store()


# -- dismiss, reopen, undo ---------------------------------------------------------------------

def test_dismiss_and_put_back(client_as, seeded, workspace) -> None:
    from memoryui.review import dom_id

    client = client_as("curator")
    key = seeded["sup1"]
    head = workspace.head()
    r = client.post("/review/dismiss/", {"entry": key, "next": queue_url()})
    assert r.status_code == 302 and r["Location"] == queue_url()
    state = ReviewState.objects.get()
    assert (state.status, state.reviewed_by, state.promotion) == ("dismissed", "curator", None)
    # Recorded in history too: an empty commit (no file changes) by the person.
    c = workspace.log(limit=1)[0]
    assert c.parents == [head] and c.files == [] and c.trailers["Dismissed"] == [key]
    assert c.actor == "user:curator" and c.tools == ["review-dismiss"]
    assert "Globex prefers email" not in client.get(queue_url()).content.decode()
    html = client.get(queue_url(status="dismissed")).content.decode()
    assert "Dismissed by curator" in html and "Put back in the queue" in html
    r = client.post("/review/reopen/", {"entry": key}, HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and f'id="{dom_id(key)}"' in r.content.decode()
    assert ReviewState.objects.count() == 0
    assert workspace.log(limit=1)[0].trailers["Reopened"] == [key]
    assert "Globex prefers email" in client.get(queue_url()).content.decode()


def test_htmx_dismiss_of_several_entries_updates_each_out_of_band(client_as, seeded) -> None:
    from memoryui.review import dom_id

    client = client_as("curator")
    keys = [seeded["ops1"], seeded["ops3"]]
    r = client.post("/review/dismiss/", urlencode([("entry", k) for k in keys]),
                    content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 200 and r["HX-Reswap"] == "none"
    for k in keys:
        assert f'id="{dom_id(k)}" hx-swap-oob="true"' in html
    assert "Dismissed 2 entries." in html
    assert ReviewState.objects.filter(status="dismissed").count() == 2
    # Without JavaScript, "dismiss selected" asks on a page of its own first.
    page = client.get("/review/dismiss/confirm/?" + urlencode({"entry": seeded["res1"]}))
    assert page.status_code == 200 and 'action="/review/dismiss/"' in page.content.decode()


def test_a_promoted_entry_cannot_be_dismissed_or_put_back(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    promote_end_to_end(client, [key], kind="memory", scope="ops-bot")
    r = client.post("/review/dismiss/", {"entry": key})
    assert r.status_code == 409 and "undo the promotion first" in r.content.decode()
    r = client.post("/review/reopen/", {"entry": key}, HTTP_HX_REQUEST="true")
    assert r.status_code == 409 and r["HX-Reswap"] == "none"
    assert "undo the promotion instead" in r.content.decode()
    assert ReviewState.objects.get().status == "promoted"


def test_a_dismissed_entry_can_still_be_promoted(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    client.post("/review/dismiss/", {"entry": key})
    r, _ = promote_end_to_end(client, [key], kind="memory", scope="ops-bot")
    assert r.status_code == 302
    assert ReviewState.objects.get().status == "promoted"


def test_undo_reverts_with_a_new_commit_and_reopens_the_entries(client_as, seeded,
                                                                workspace) -> None:
    client = client_as("curator")
    keys = [seeded["ops1"], seeded["ops3"]]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    r, _ = promote_end_to_end(client, keys, kind="memory", scope="ops-bot")
    promo = Promotion.objects.get()
    r = client.post(f"/review/undo/{promo.pk}/", {"next": queue_url()})
    assert r.status_code == 302
    assert workspace.read(path) == MEMORY
    undo_commit = workspace.log(limit=1)[0]
    assert undo_commit.trailers["Reverts"] == [promo.commit_sha]
    assert undo_commit.actor == "user:curator" and undo_commit.tools == ["promote-undo"]
    promo.refresh_from_db()
    assert promo.undo_commit_sha == undo_commit.sha and promo.undone_by == "curator"
    assert ReviewState.objects.count() == 0
    html = client.get(queue_url()).content.decode()
    assert "Canary at 5%" in html and "Paged Bob" in html
    assert "undone by curator" in html
    r = client.post(f"/review/undo/{promo.pk}/")
    assert r.status_code == 409 and "already undone" in r.content.decode()
    assert client.post("/review/undo/999/").status_code == 404


def test_undo_after_other_edits_is_a_three_way_revert_or_refused(client_as, seeded,
                                                                 workspace) -> None:
    client = client_as("curator")
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    promote_end_to_end(client, [seeded["ops1"]], kind="memory", scope="ops-bot")
    promo = Promotion.objects.get()
    promoted = workspace.read(path)
    # An unrelated edit elsewhere in the file survives the undo.
    edited = promoted.replace("## Facts\n", "## Facts\n- Office is in Oslo.\n")
    workspace.write(path, edited, actor=Actor.user("alice"), tool="edit")
    assert client.post(f"/review/undo/{promo.pk}/").status_code == 302
    assert workspace.read(path) == MEMORY.replace("## Facts\n", "## Facts\n- Office is in Oslo.\n")
    # An edit of the promoted lines themselves makes the undo refuse, writing nothing.
    promote_end_to_end(client, [seeded["ops1"]], kind="memory", scope="ops-bot")
    promo2 = Promotion.objects.exclude(pk=promo.pk).get()
    text = workspace.read(path).replace("Canary at 5% caught the bad build.", "Canaries work.")
    workspace.write(path, text, actor=Actor.user("alice"), tool="edit")
    head = workspace.head()
    r = client.post(f"/review/undo/{promo2.pk}/")
    assert r.status_code == 409 and "edit it by hand" in r.content.decode()
    assert workspace.head() == head and workspace.read(path) == text
    assert ReviewState.objects.get().status == "promoted"


def test_undo_of_a_promotion_that_created_a_file_deletes_it(client_as, seeded,
                                                            workspace) -> None:
    client = client_as("curator")
    promote_end_to_end(client, [seeded["res1"]], kind="skill", name="rerank",
                       description="Rerank search results. Use when BM25 is not enough.")
    assert workspace.exists("skills/rerank/SKILL.md")
    promo = Promotion.objects.get()
    r = client.post(f"/review/undo/{promo.pk}/", HTTP_HX_REQUEST="true")
    assert r.status_code == 200 and r["HX-Refresh"] == "true"  # the entries come back
    page = client.get(queue_url()).content.decode()
    assert "Undid the promotion into skills/rerank/SKILL.md" in page
    assert "BM25 plus rerank" in page
    assert not workspace.exists("skills/rerank/SKILL.md")
    assert workspace.log(limit=1)[0].trailers["Reverts"] == [promo.commit_sha]


# -- forms, fragments and the strict CSP ------------------------------------------------------

def test_bad_filters_are_shown_next_to_their_fields_and_the_queue_uses_defaults(
        client_as, seeded) -> None:
    r = client_as("viewer").get("/review/?" + urlencode({"from": "yesterday", "page": "x",
                                                          "scope": "../etc"}))
    html = r.content.decode()
    assert r.status_code == 400 and 'role="alert"' in html
    after_from = html.split('id="f-from"', 1)[1].split("</div>", 1)[0]
    assert 'aria-invalid="true"' in after_from
    assert '<ul class="errorlist"' in after_from and "is not a date: use YYYY-MM-DD, like 2026-02-12" in after_from
    after_scope = html.split('id="f-scope"', 1)[1].split("</div>", 1)[0]
    assert "invalid scope name" in after_scope
    assert "the page is a number" in html
    r = client_as("viewer").get(queue_url(**{"from": D2, "to": D0}))
    assert r.status_code == 400 and "must not be after" in r.content.decode()


def test_every_answer_that_may_be_a_fragment_varies_on_hx_request(client_as, seeded) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    answers = [
        client.get(queue_url()),
        client.get("/review/entry/?" + urlencode({"entry": key})),
        client.get("/review/entry/?" + urlencode({"entry": key}), HTTP_HX_REQUEST="true"),
        client.get(promote_url([key], kind="global")),
        client.get(promote_url([key], kind="global", slot="bulk"), HTTP_HX_REQUEST="true"),
        client.get(promote_url([key], kind="nope"), HTTP_HX_REQUEST="true"),
        client.post("/review/dismiss/", {"entry": seeded["sup1"]}, HTTP_HX_REQUEST="true"),
        client.post("/review/reopen/", {"entry": seeded["sup1"]}),
    ]
    for r in answers:
        assert "HX-Request" in r.get("Vary", ""), (r.status_code, r.request["PATH_INFO"])


def test_full_page_editor_with_htmx_swaps_only_the_editor_and_goes_back_after_saving(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    key = seeded["ops1"]
    frag = client.get(promote_url([key], kind="memory", scope="ops-bot", place="1",
                                  slot="page"), HTTP_HX_REQUEST="true")
    html = frag.content.decode()
    assert frag.status_code == 200 and "<html" not in html and 'id="editor-page"' in html
    fields = editor_fields(html)
    r = client.post("/review/promote/", {"entry": key, "kind": "memory", "scope": "ops-bot",
                                         "slot": "page", "next": queue_url(), **fields},
                    HTTP_HX_REQUEST="true")
    # Not entries swapped out of band into a page that has none: back to the queue.
    assert r.status_code == 200 and r["HX-Redirect"] == queue_url()
    assert "hx-swap-oob" not in r.content.decode()
    assert workspace.read(workspace.path_for(Kind.MEMORY, "ops-bot")) == fields["text"]


def test_a_bad_topic_name_is_shown_next_to_the_name_field(client_as, seeded) -> None:
    r = client_as("curator").get(promote_url([seeded["sup1"]], kind="skill", name="Bad_Name",
                                             slot="bulk"), HTTP_HX_REQUEST="true")
    html = r.content.decode()
    assert r.status_code == 400
    field = html.split('name="name"', 1)[1].split("</div>", 1)[0]
    assert 'role="alert"' in field and "lowercase letters, digits and single hyphens" in field


INLINE = re.compile(r"""<script(?![^>]*\bsrc=)|<style|\sstyle=|\shx-on|\son[a-z]+=|javascript:""",
                    re.I)


def test_no_inline_script_style_or_handler_in_any_review_answer(client_as, seeded,
                                                                 workspace) -> None:
    """The CSP forbids them: pages, fragments and out-of-band swaps after promotions."""
    client = client_as("curator")
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    answers = {"promote": promote_end_to_end(client, [seeded["ops1"], seeded["ops3"]],
                                             kind="memory", scope="ops-bot")[0]}
    page = client.get(promote_url([seeded["res1"]], kind="global", slot="entry-x"),
                      HTTP_HX_REQUEST="true")
    answers["oob"] = client.post("/review/promote/", {
        "entry": seeded["res1"], "kind": "global", "slot": "entry-x",
        **editor_fields(page.content.decode())}, HTTP_HX_REQUEST="true")
    stale = client.get(promote_url([seeded["ops2"]], kind="memory", scope="ops-bot"))
    workspace.write(path, "# changed\n", actor=Actor.agent("ops-bot"), tool="reflect")
    answers["conflict"] = save(client, [seeded["ops2"]], kind="memory", scope="ops-bot",
                               **editor_fields(stale.content.decode()))
    assert answers["conflict"].status_code == 409
    client.post("/review/dismiss/", {"entry": seeded["sup1"]})
    for status in ("todo", "promoted", "dismissed", "all"):
        answers[status] = client.get(queue_url(status=status))
    key = seeded["ops2"]
    answers["entry"] = client.get("/review/entry/?" + urlencode({"entry": key}))
    answers["neighbours"] = client.get("/review/entry/?" + urlencode({"entry": key}),
                                       HTTP_HX_REQUEST="true")
    answers["editor"] = client.get(promote_url([key], kind="world", name="x"))
    answers["confirm"] = client.get("/review/dismiss/confirm/?" + urlencode({"entry": key}))
    answers["error"] = client.post("/review/undo/999/")
    answers["undo"] = client.post(f"/review/undo/{Promotion.objects.first().pk}/",
                                  HTTP_HX_REQUEST="true")
    for name, r in answers.items():
        assert r.status_code < 500, name
        found = INLINE.search(r.content.decode())
        assert found is None, (name, found and found.group(0))
