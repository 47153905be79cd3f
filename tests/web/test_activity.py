"""The workspace activity feed: filters, paging, htmx fragment, Atom."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from memoryui.web.history import activity
from tests.web.test_history import ALICE, DAILY, MEM, WORLD, Seeded, ids_in, seed

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


def test_activity_lists_every_commit_newest_first(client_as, seeded):
    r = client_as("viewer").get("/activity/")
    assert r.status_code == 200
    html = r.content.decode()
    s = seeded.shas
    assert ids_in(html) == [s["world"], s["mem3"], s["mem2"], s["daily"], s["mem1"]]
    # each row: actor, tool, the files (linked to their pages) and the commit
    assert f'href="/f/{DAILY}"' in html and f'href="/f/{WORLD}"' in html
    assert ">remember</span>" in html and ">update_world</span>" in html
    assert f'href="/commit/{s["daily"]}/"' in html
    assert ">billing-agent</a>" in html
    assert ('<link rel="alternate" type="application/atom+xml" title="memoryui activity" '
            'href="/activity.atom">') in html


@pytest.mark.parametrize(("query", "expected"), [
    ("actor=agent:ops-bot", ["mem2", "mem1"]),
    ("actor=user:alice", ["world", "mem3"]),
    ("actor=alice", ["world", "mem3"]),  # a git author name
    ("actor=git:alice", ["world", "mem3"]),
    ("actor=agent:nobody", []),
    ("scope=ops-bot", ["mem3", "mem2", "mem1"]),
    ("scope=billing-agent", ["daily"]),
    ("kind=world", ["world"]),
    ("kind=daily", ["daily"]),
    ("kind=memory", ["mem3", "mem2", "mem1"]),
    ("since=2026-01-06&until=2026-01-07", ["mem3", "mem2", "daily"]),
    ("since=2026-01-08", ["world"]),
    ("until=2026-01-05", ["mem1"]),
    ("actor=agent:ops-bot&since=2026-01-06", ["mem2"]),
    ("scope=ops-bot&actor=user:alice", ["mem3"]),
    ("scope=billing-agent&kind=memory", []),
    ("kind=world&scope=ops-bot", []),
])
def test_activity_filters_return_exactly_the_matching_commits(client_as, seeded, query,
                                                              expected):
    r = client_as("viewer").get(f"/activity/?{query}")
    assert r.status_code == 200
    html = r.content.decode()
    assert ids_in(html) == [seeded.shas[k] for k in expected]
    if not expected:
        assert "No commits match these filters" in html


def test_the_feed_link_keeps_the_filters(client_as, seeded):
    html = client_as("viewer").get("/activity/?kind=memory&actor=agent:ops-bot").content.decode()
    assert ('<link rel="alternate" type="application/atom+xml" title="memoryui activity" '
            'href="/activity.atom?actor=agent%3Aops-bot&amp;kind=memory">') in html


@pytest.mark.parametrize(("query", "message"), [
    ("kind=bogus", "invalid kind"),
    ("since=2026-13-01", "since: invalid date"),
    ("until=yesterday", "until: invalid date"),
    ("since=2026-02-01&until=2026-01-01", "is after until"),
    ("actor=agent:../etc", "invalid agent"),
    ("actor=%3Cscript%3E", "invalid actor"),
    ("scope=a%20b", "invalid scope"),
    ("offset=-3", "invalid offset"),
])
def test_invalid_filters_give_a_message_not_a_500(client_as, seeded, query, message):
    r = client_as("viewer").get(f"/activity/?{query}")
    assert r.status_code == 400
    html = r.content.decode()
    assert message in html
    assert ids_in(html) == []
    assert "<script>" not in html
    # the same with htmx: the message lands in the results area (htmx skips 4xx swaps)
    frag = client_as("viewer").get(f"/activity/?{query}", HTTP_HX_REQUEST="true")
    assert frag.status_code == 200 and message in frag.content.decode()
    assert client_as("viewer").get(f"/activity.atom?{query}").status_code == 400


def test_activity_pages_with_offset(client_as, seeded, monkeypatch):
    monkeypatch.setattr(activity, "ACTIVITY_PAGE", 2)
    s = seeded.shas
    c = client_as("viewer")
    first = c.get("/activity/").content.decode()
    assert ids_in(first) == [s["world"], s["mem3"]]
    assert 'href="/activity/?offset=2"' in first and ">Newer</span>" in first
    second = c.get("/activity/?offset=2").content.decode()
    assert ids_in(second) == [s["mem2"], s["daily"]]
    assert 'href="/activity/?offset=4"' in second and 'href="/activity/?"' in second
    last = c.get("/activity/?offset=4").content.decode()
    assert ids_in(last) == [s["mem1"]]
    assert ">Older</span>" in last  # no older link on the last page
    filtered = c.get("/activity/?scope=ops-bot").content.decode()
    assert 'href="/activity/?scope=ops-bot&amp;offset=2"' in filtered


def test_activity_htmx_returns_only_the_rows(client_as, seeded):
    r = client_as("viewer").get("/activity/?actor=user:alice", HTTP_HX_REQUEST="true")
    assert r.status_code == 200
    body = r.content.decode()
    assert "<html" not in body and "<form" not in body
    assert ids_in(body) == [seeded.shas["world"], seeded.shas["mem3"]]
    assert "HX-Request" in r["Vary"]
    # a history-restore request (cache miss on back/forward) gets the whole page
    full = client_as("viewer").get("/activity/", HTTP_HX_REQUEST="true",
                                   HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert "<html" in full.content.decode()


def test_activity_form_works_without_javascript(client_as, seeded):
    html = client_as("viewer").get("/activity/?scope=ops-bot&kind=memory").content.decode()
    assert '<form class="filters activity-filters" method="get" action="/activity/"' in html
    assert '<option value="ops-bot" selected>' in html
    assert '<option value="memory" selected>' in html
    assert '<option value="agent:ops-bot">' in html  # actor suggestions


def parse_feed(body: bytes) -> ET.Element:
    return ET.fromstring(body)


def test_atom_feed_is_valid_and_has_the_entries(client_as, seeded):
    store = seeded.store
    odd = store.write(MEM, "x\n", actor=ALICE, tool="edit",
                      message='Refunds <&> "quotes" \x07bell').commit
    r = client_as("viewer").get("/activity.atom")
    assert r.status_code == 200
    assert r["Content-Type"].startswith("application/atom+xml")
    feed = parse_feed(r.content)
    assert feed.tag == f"{ATOM}feed"
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == 6
    first = entries[0]
    assert first.findtext(f"{ATOM}title") == 'Refunds <&> "quotes" \ufffdbell'
    assert first.find(f"{ATOM}link").get("href") == f"http://testserver/commit/{odd}/"
    assert first.find(f"{ATOM}author").findtext(f"{ATOM}name") == "user:alice"
    assert first.findtext(f"{ATOM}updated").startswith("20")
    assert MEM in first.findtext(f"{ATOM}summary")
    ids = [e.findtext(f"{ATOM}id") for e in entries]
    assert len(set(ids)) == 6 and all(i.startswith("urn:uuid:") for i in ids)
    assert feed.findtext(f"{ATOM}updated") == first.findtext(f"{ATOM}updated")
    links = {ln.get("rel"): ln.get("href") for ln in feed.findall(f"{ATOM}link")}
    assert links["self"] == "http://testserver/activity.atom"
    assert links["alternate"] == "http://testserver/activity/"


def test_atom_feed_applies_the_filters(client_as, seeded):
    r = client_as("viewer").get("/activity.atom?actor=agent:ops-bot&kind=memory")
    feed = parse_feed(r.content)
    links = [e.find(f"{ATOM}link").get("href") for e in feed.findall(f"{ATOM}entry")]
    assert links == [f"http://testserver/commit/{seeded.shas[k]}/" for k in ("mem2", "mem1")]
    self_link = [ln for ln in feed.findall(f"{ATOM}link") if ln.get("rel") == "self"][0]
    assert self_link.get("href") == ("http://testserver/activity.atom?"
                                     "actor=agent%3Aops-bot&kind=memory")


def test_atom_feed_of_an_empty_workspace(client_as, workspace):
    feed = parse_feed(client_as("viewer").get("/activity.atom").content)
    assert feed.findall(f"{ATOM}entry") == []
    assert feed.findtext(f"{ATOM}title") == "memoryui activity"
