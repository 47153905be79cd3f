"""The workspace activity feed: filters, paging, htmx fragment, Atom."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from memoryui.store import Actor
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
    ("since=2026-13-01", "2026-13-01&#x27; is not a date"),
    ("until=yesterday", "yesterday&#x27; is not a date"),
    ("since=0001-01-01", "since: 0001-01-01 is out of range"),
    ("until=9999-12-31", "until: 9999-12-31 is out of range"),
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


def _choices(html: str) -> tuple[list[str], list[str], list[str]]:
    """The scope filter's options, the selected one(s), and the actor suggestions."""
    select = html.split('<select id="f-scope" name="scope">', 1)[1].split("</select>", 1)[0]
    datalist = html.split('<datalist id="actor-choices">', 1)[1].split("</datalist>", 1)[0]
    return (re.findall(r'<option value="([^"]*)"', select),
            re.findall(r'<option value="([^"]*)" selected>', select),
            re.findall(r'<option value="([^"]*)"></option>', datalist))


def test_the_filters_offer_every_scope_and_person_as_they_are_now(client_as, seeded,
                                                                    make_user):
    """The choices' markup is kept between pages: a new scope, an outside one, a new
    person and the filter in use all show on the next page."""
    client = client_as("viewer")
    scopes, selected, actors = _choices(client.get("/activity/").content.decode())
    assert scopes == ["", "billing-agent", "ops-bot"] and selected == []
    assert actors[:2] == ["agent:billing-agent", "agent:ops-bot"]
    assert [a for a in actors if a.startswith("user:")]  # the signed-in viewer at least

    seeded.store.append("agents/new-bot/memory/daily/2026-01-09.md", "\n## 09:00\n\nhi\n",
                        header="# 2026-01-09\n", actor=Actor.agent("new-bot"),
                        tool="remember")
    outside = seeded.store.root / "agents" / "zz-outside" / "memory"
    outside.mkdir(parents=True)
    (outside / "MEMORY.md").write_text("# made by hand\n")
    seeded.store.notify(["agents/zz-outside/memory/MEMORY.md"])  # as a sync or a scan says
    make_user("curator", "zed")
    scopes, selected, actors = _choices(
        client.get("/activity/?scope=ops-bot").content.decode())
    assert scopes == ["", "billing-agent", "new-bot", "ops-bot", "zz-outside"]
    assert selected == ["ops-bot"]
    assert "agent:new-bot" in actors and "agent:zz-outside" in actors and "user:zed" in actors

    # a scope with no folder stays shown as the filter in use, escaped like any value
    scopes, selected, _ = _choices(client.get("/activity/?scope=gone-bot").content.decode())
    assert scopes[-1] == "gone-bot" and selected == ["gone-bot"]
    html = client.get("/activity/?actor=%3Cb%3E").content.decode()
    assert "<b>" not in html.split('<datalist id="actor-choices">', 1)[1].split("</datalist>")[0]


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


def _commit_dated(root, path: str, text: str, date: str) -> str:
    """A native commit (as an import or a skewed clock makes them) with both dates set."""
    import os
    import subprocess

    f = root / path
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{date}T12:00:00Z",
           "GIT_COMMITTER_DATE": f"{date}T12:00:00Z"}
    git = ["git", "-c", "user.name=importer", "-c", "user.email=importer@example.com"]
    subprocess.run([*git, "add", path], cwd=root, check=True, env=env)
    subprocess.run([*git, "commit", "-qm", f"import {date}"], cwd=root, check=True, env=env)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def skewed(workspace) -> dict[str, str]:
    """History (oldest first) dated 01-01, 01-10, 01-03, 01-09: out of order."""
    root = workspace.root
    shas = {}
    for i, date in enumerate(["2026-01-01", "2026-01-10", "2026-01-03", "2026-01-09"]):
        shas[date] = _commit_dated(root, f"agents/ops-bot/notes/n{i}.md", f"# {i}\n", date)
    return shas


@pytest.mark.parametrize(("query", "expected"), [
    ("since=2026-01-05", ["2026-01-09", "2026-01-10"]),  # git's --since stops at 01-03
    ("until=2026-01-05", ["2026-01-03", "2026-01-01"]),
    ("since=2026-01-02&until=2026-01-09", ["2026-01-09", "2026-01-03"]),
    ("since=2026-01-10&scope=ops-bot", ["2026-01-10"]),
    ("since=2026-01-11", []),
])
def test_dated_filters_are_right_when_commit_dates_are_out_of_order(client_as, skewed, query,
                                                                     expected):
    html = client_as("viewer").get(f"/activity/?{query}").content.decode()
    assert ids_in(html) == [skewed[d] for d in expected]


def test_dated_filters_page_through_out_of_order_history(client_as, skewed, monkeypatch):
    monkeypatch.setattr(activity, "ACTIVITY_PAGE", 1)
    c = client_as("viewer")
    first = ids_in(c.get("/activity/?since=2026-01-02").content.decode())
    second = ids_in(c.get("/activity/?since=2026-01-02&offset=1").content.decode())
    third = ids_in(c.get("/activity/?since=2026-01-02&offset=2").content.decode())
    assert [first, second, third] == [[skewed["2026-01-09"]], [skewed["2026-01-03"]],
                                      [skewed["2026-01-10"]]]


def _feed_commits(body: bytes) -> list[str]:
    feed = parse_feed(body)
    return [e.find(f"{ATOM}link").get("href").rstrip("/").rsplit("/", 1)[-1]
            for e in feed.findall(f"{ATOM}entry")]


def test_a_feed_reader_reads_the_feed_with_a_token_in_the_url(client, seeded, make_token):
    s = seeded.shas
    admin, ops = make_token(admin=True), make_token("ops-bot")
    billing = make_token("billing-agent")
    r = client.get(f"/activity.atom?token={admin}")  # no session: a feed reader
    assert r.status_code == 200
    assert r["Content-Type"].startswith("application/atom+xml")
    assert "no-store" in r["Cache-Control"]
    assert _feed_commits(r.content) == [s[k] for k in ("world", "mem3", "mem2", "daily", "mem1")]
    assert admin.encode() not in r.content  # the secret is never echoed into the feed
    # a scope token reads only its scope's commits
    r = client.get(f"/activity.atom?token={ops}")
    assert _feed_commits(r.content) == [s[k] for k in ("mem3", "mem2", "mem1")]
    r = client.get(f"/activity.atom?token={billing}&kind=daily")
    assert _feed_commits(r.content) == [s["daily"]]
    # the same with a header, for readers that can send one
    r = client.get("/activity.atom", HTTP_AUTHORIZATION=f"Bearer {billing}")
    assert _feed_commits(r.content) == [s["daily"]]


def test_a_scope_token_never_reads_another_scopes_entries(client, seeded, make_token):
    ops = make_token("ops-bot")
    r = client.get(f"/activity.atom?token={ops}&scope=billing-agent")
    assert r.status_code == 403
    assert r["Content-Type"].startswith("text/plain")
    assert b"billing" in r.content and seeded.shas["daily"].encode() not in r.content
    # a commit touching two scopes is shown to neither scope's token (nor is it leaked)
    root = seeded.store.root
    (root / MEM).write_text("# Ops\n\nmixed\n")
    (root / DAILY).write_text("# 2026-01-06\n\nmixed\n")
    mixed = _git_commit_all(root, "touch two scopes")
    r = client.get(f"/activity.atom?token={ops}")
    assert r.status_code == 200
    shown = _feed_commits(r.content)
    assert mixed not in shown and seeded.shas["daily"] not in shown
    assert shown[:1] == [seeded.shas["mem3"]]


def _git_commit_all(root, message: str) -> str:
    import subprocess

    git = ["git", "-c", "user.name=importer", "-c", "user.email=importer@example.com"]
    subprocess.run([*git, "commit", "-qam", message], cwd=root, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("auth", [
    {"path": "/activity.atom?token=mui_wrong"},
    {"path": "/activity.atom", "HTTP_AUTHORIZATION": "Bearer mui_wrong"},
    {"path": "/activity.atom?token=" + "x" * 5000},
])
def test_a_wrong_token_is_a_plain_401(client, db, seeded, auth):
    r = client.get(**auth)
    assert r.status_code == 401
    assert r["Content-Type"].startswith("text/plain")
    assert r["WWW-Authenticate"].startswith("Bearer")
    assert b"<entry" not in r.content


def test_a_revoked_token_no_longer_reads_the_feed(client, seeded, make_token, settings):
    from memoryui.models import Token

    settings.MEMORYUI_TOKEN_CACHE = 0
    raw = make_token(admin=True)
    assert client.get(f"/activity.atom?token={raw}").status_code == 200
    from django.utils import timezone

    Token.objects.filter(prefix=raw[:12]).update(revoked_at=timezone.now())
    assert client.get(f"/activity.atom?token={raw}").status_code == 401


def test_the_activity_page_explains_how_to_subscribe(client_as, seeded):
    html = client_as("admin").get("/activity/?kind=memory").content.decode()
    assert 'href="#subscribe"' in html
    assert "http://testserver/activity.atom?kind=memory&amp;token=YOUR-TOKEN" in html
    assert "keep it secret" in html and 'href="/settings/tokens/"' in html
    viewer = client_as("viewer").get("/activity/").content.decode()
    assert "http://testserver/activity.atom?token=YOUR-TOKEN" in viewer
    assert "Ask an admin for a token" in viewer


def test_dated_filters_stay_right_as_the_kept_dates_follow_the_branch(client_as, skewed,
                                                                      workspace):
    """The dates read for one page are kept and extended with new commits; a branch moved
    back by hand (a reset) reads them again, so a commit no longer in history never shows."""
    import subprocess

    c = client_as("viewer")
    assert ids_in(c.get("/activity/?since=2026-01-08").content.decode()) == [
        skewed["2026-01-09"], skewed["2026-01-10"]]
    newer = _commit_dated(workspace.root, "agents/ops-bot/notes/n9.md", "# 9\n", "2026-01-08")
    assert ids_in(c.get("/activity/?since=2026-01-08").content.decode()) == [
        newer, skewed["2026-01-09"], skewed["2026-01-10"]]
    subprocess.run(["git", "reset", "-q", "--hard", skewed["2026-01-03"]], cwd=workspace.root,
                   check=True)
    assert ids_in(c.get("/activity/?since=2026-01-08").content.decode()) == [
        skewed["2026-01-10"]]


def test_a_feed_reader_without_a_token_is_asked_for_one(client, seeded):
    r = client.get("/activity.atom")  # no session, no token: a feed reader
    assert r.status_code == 401
    assert r["WWW-Authenticate"] == 'Bearer realm="memoryui"'
    assert "token" in r.content.decode()
    assert "Location" not in r
