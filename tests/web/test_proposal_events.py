"""Proposals on the activity page and in its Atom feed: made, approved (the merge commit),
rejected (with its reason), under the page's filters and a scope token's limits."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from memoryui import proposing
from memoryui.store import Actor, Kind
from tests.web.test_proposals import proposal

ATOM = "{http://www.w3.org/2005/Atom}"


def seed(workspace) -> tuple[str, str, str]:
    for scope in ("ops-bot", "qa-bot"):
        workspace.write(workspace.path_for(Kind.MEMORY, scope), "# M\n",
                        actor=Actor.user("lead"), tool="edit")
    a = proposal(workspace, "ops-bot", "# M\n\n- approved one\n")
    r = proposal(workspace, "qa-bot", "# M\n\n- rejected one\n")
    o = proposal(workspace, "ops-bot", "# M\n\n- open one\n")  # (extends nothing: its own file)
    return a, r, o


def test_the_activity_page_lists_proposals_and_decisions(client_as, workspace):
    a, r, _o = seed(workspace)
    sha = proposing.approve(a, "alice", "alice@example.org")
    proposing.reject(r, "bob", "not a fact")
    c = client_as("viewer")
    page = c.get("/activity/").content.decode()
    section = page.split("data-proposal-events")[1].split("</section>")[0]
    assert "ops-bot</span> proposed a change to" in section
    assert "<strong>alice</strong> approved" in section and sha[:8] in section
    assert "<strong>bob</strong> rejected" in section and "not a fact" in section
    assert f"/commit/{sha}/" in page  # the merge commit is in the log itself
    scoped = c.get("/activity/", {"scope": "qa-bot"}).content.decode()
    assert "bob</strong> rejected" in scoped and "alice</strong> approved" not in scoped
    people = c.get("/activity/", {"who": "people"}).content.decode()
    assert "proposed a change to" not in people.split("data-proposal-events")[1]


def test_the_atom_feed_has_proposals_and_rejections_once(client_as, workspace, make_token):
    a, r, _o = seed(workspace)
    sha = proposing.approve(a, "alice", "alice@example.org")
    proposing.reject(r, "bob", "not a fact")
    feed = ET.fromstring(client_as("viewer").get("/activity.atom").content)
    entries = feed.findall(f"{ATOM}entry")
    titles = [e.findtext(f"{ATOM}title") for e in entries]
    assert any(t.startswith("qa-bot proposed a change to") for t in titles)
    assert any(t.startswith("bob rejected qa-bot's proposal") and "not a fact" in t
               for t in titles)
    assert not any(t.startswith("alice approved") for t in titles)  # its merge commit instead
    links = [e.find(f"{ATOM}link").get("href") for e in entries]
    assert f"http://testserver/commit/{sha}/" in links
    assert f"http://testserver/review/proposals/{r}/" in links
    ids = [e.findtext(f"{ATOM}id") for e in entries]
    assert len(set(ids)) == len(ids)
    raw = make_token("ops-bot")
    own = ET.fromstring(client_as("viewer").get("/activity.atom", {"token": raw}).content)
    titles = [e.findtext(f"{ATOM}title") for e in own.findall(f"{ATOM}entry")]
    assert not any("qa-bot" in t for t in titles)
    assert any(t.startswith("ops-bot proposed") for t in titles)
