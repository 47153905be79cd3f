"""Near-duplicate group cards, "already known" links and counts that follow every action,
through the real Django client on a real git workspace."""

from __future__ import annotations

import html as html_mod
import re
from urllib.parse import urlencode

import pytest

from memoryui.demo import SUBJECTS
from memoryui.models import Promotion, ReviewState
from memoryui.review import dom_id
from memoryui.store import Actor, Kind, Store

from .test_review import D0, D1, D2, editor_fields, log, queue_url

pytestmark = pytest.mark.django_db

CANARY = SUBJECTS["deploy"]


@pytest.fixture
def seeded(workspace: Store) -> dict[str, str]:
    s = workspace
    s.write(s.path_for(Kind.MEMORY, "support-bot"),
            "# support-bot memory\n\n## Customers\n\n- Globex prefers email over chat; "
            "contact is Dana.\n", actor=Actor.agent("support-bot"), tool="reflect")
    return {
        "c1": log(s, "ops-bot", D0, "09:00", CANARY.format(n=1)),
        "c2": log(s, "ops-bot", D1, "09:00", CANARY.format(n=2)),
        "c3": log(s, "deploy-bot", D2, "09:30", CANARY.format(n=3)),
        "other": log(s, "ops-bot", D2, "11:00", "Paged Bob at night for disk pressure."),
        "known": log(s, "support-bot", D2, "12:00", "Globex prefers email over chat."),
    }


def post(client, url: str, pairs: list[tuple[str, str]], **headers: str):
    return client.post(url, urlencode(pairs), content_type="application/x-www-form-urlencoded",
                       **headers)


def hx(current: str) -> dict[str, str]:
    """What htmx sends from the queue page."""
    return {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver" + current}


def test_a_group_card_lists_its_dates_and_scopes_and_known_facts_link_to_the_line(
        client_as, seeded, workspace) -> None:
    page = client_as("curator").get(queue_url())
    html = page.content.decode()
    assert page.status_code == 200
    cards = re.findall(r'<li class="queue-item is-\w+" id="(entry-[0-9a-f]{12})"', html)
    assert cards == [dom_id(seeded[k]) for k in ("known", "other", "c3")]
    assert "5 entries to review" in html and "2 near-duplicates grouped" in html
    assert "×3 similar" in html and "also written 2 more times" in html
    group = html[html.index('class="entry-group"'):]
    group = group[:group.index("</div>")]
    for key, day, scope in (("c2", D1, "ops-bot"), ("c1", D0, "ops-bot")):
        assert f'<li id="{dom_id(seeded[key])}">' in group
        assert f'datetime="{day}"' in group and scope in group
    assert "Dismiss all 3" in html and "Promote once" in html
    # Day counts count every entry of the day (grouped ones too), not only the cards; the
    # older days' entries are all in the group, so only D2 has cards.
    days = dict(re.findall(r'data-day-count="([\d-]+)">(\d+)<', html))
    assert days == {D2: "3"}
    memory = workspace.path_for(Kind.MEMORY, "support-bot")
    assert f"already known: {memory}:5" in html
    assert re.search(rf'href="[^"]*{re.escape(memory.split("/")[-1])}#L5"', html)


def test_grouping_can_be_turned_off(client_as, seeded, monkeypatch) -> None:
    monkeypatch.setenv("MEMORYUI_SIMILAR", "0")
    html = client_as("viewer").get(queue_url()).content.decode()
    assert 'class="entry-group"' not in html and "similar</span>" not in html
    assert len(re.findall(r'<li class="queue-item is-todo"', html)) == 5
    assert "already known" not in html


def test_dismiss_all_in_a_group_updates_the_counts_out_of_band(client_as, seeded) -> None:
    client = client_as("curator")
    current = queue_url()
    group = [seeded[k] for k in ("c3", "c2", "c1")]
    r = post(client, "/review/dismiss/", [("entry", k) for k in group] + [("next", current)],
             **hx(current))
    html = r.content.decode()
    assert r.status_code == 200 and "Dismissed 3 entries." in html
    assert ReviewState.objects.filter(status="dismissed").count() == 3
    # The card and its group's rows are swapped; the members' rows come first.
    ids = re.findall(r'id="(entry-[0-9a-f]{12})" hx-swap-oob="true"', html)
    assert ids == [dom_id(seeded[k]) for k in ("c1", "c2", "c3")]
    assert re.search(r'id="review-total" hx-swap-oob="true">2 entries to review', html)
    chips = html[html.index('id="review-counts"'):]
    assert dict(re.findall(r'>([\w-]+) <span class="count">(\d+)</span></a>', chips)) == {
        "All": "2", "ops-bot": "1", "support-bot": "1"}
    days = re.search(r'id="review-day-counts" hidden data-days="([^"]*)"', html).group(1)
    assert html_mod.unescape(days) == f'{{"{D2}": 2}}'
    # The queue agrees after a reload.
    assert "2 entries to review" in client.get(current).content.decode()


def test_counts_follow_the_filters_of_the_page_and_only_on_the_queue(client_as,
                                                                     seeded) -> None:
    client = client_as("curator")
    current = queue_url(scope="ops-bot")
    r = post(client, "/review/dismiss/", [("entry", seeded["other"])], **hx(current))
    html = r.content.decode()
    assert re.search(r'id="review-total" hx-swap-oob="true">2 entries to review', html)
    # From an entry's own page there is no queue to update: no out-of-band counts.
    r = post(client, "/review/reopen/", [("entry", seeded["other"])],
             **hx("/review/entry/?" + urlencode({"entry": seeded["other"]})))
    assert r.status_code == 200 and "review-total" not in r.content.decode()


def test_promote_once_writes_the_newest_text_once_and_records_every_entry(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    group = [seeded[k] for k in ("c3", "c2", "c1")]
    url = "/review/promote/?" + urlencode([("entry", k) for k in group] + [
        ("once", "1"), ("kind", "memory"), ("scope", "ops-bot")])
    page = client.get(url)
    assert page.status_code == 200
    fields = editor_fields(page.content.decode())
    newest, older = CANARY.format(n=3), CANARY.format(n=2)
    assert fields["text"].count("Deployed api") == 1 and "v2.3" in fields["text"]
    assert 'name="once" value="1"' in page.content.decode()
    current = queue_url()
    r = post(client, "/review/promote/", [("entry", k) for k in group] + [
        ("once", "1"), ("kind", "memory"), ("scope", "ops-bot"), ("text", fields["text"]),
        ("base", fields["base"]), ("slot", f"{dom_id(group[0])}"), ("next", current)],
        **hx(current))
    html = r.content.decode()
    assert r.status_code == 200, html[:2000]
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    text = workspace.read(path)
    assert text.count("Deployed api") == 1 and newest.split(";")[0] in text
    assert older.split(";")[0] not in text
    commit = workspace.log(path, limit=1)[0]
    assert sorted(commit.trailers["Promoted-From"]) == sorted(group)
    promo = Promotion.objects.get()
    assert sorted(f"{s.path}#{s.entry_id}" for s in ReviewState.objects.filter(
        status="promoted", promotion=promo)) == sorted(group)
    assert re.search(r'id="review-total" hx-swap-oob="true">2 entries to review', html)
    # The queue has no card for any of them any more.
    after = client.get(current).content.decode()
    assert "Deployed api" not in after and "2 entries to review" in after


def test_the_editor_says_when_the_chosen_target_already_states_the_fact(
        client_as, seeded, workspace) -> None:
    client = client_as("curator")
    memory = workspace.path_for(Kind.MEMORY, "support-bot")
    url = "/review/promote/?" + urlencode({"entry": seeded["known"], "kind": "memory",
                                          "scope": "support-bot"})
    html = client.get(url).content.decode()
    assert f"Already known: {memory} states this fact at" in html
    assert re.search(r'href="[^"]*MEMORY\.md#L5">line 5</a>', html)
    # Into another scope's MEMORY.md (which does not state it): no such note.
    other = url.replace("scope=support-bot", "scope=ops-bot")
    assert "Already known" not in client.get(other).content.decode()
