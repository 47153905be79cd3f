"""The review queue through the real Django client on a real git workspace: the list, its
filters and neighbours, who may act, and answers fit for htmx and the strict CSP."""

from __future__ import annotations

import datetime as dt
import re
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from memoryui.models import Promotion, ReviewState
from memoryui.store import Actor, Kind, Store
from tests.web.reviewer import (
    editor_fields,
    entry_ids,
    promote_end_to_end,
    promote_url,
    queue_url,
    save,
)
from tests.web.reviewing import D0, D1, D2, log, seed

pytestmark = pytest.mark.django_db


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    return seed(workspace)


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
