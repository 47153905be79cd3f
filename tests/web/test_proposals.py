"""The inbox of proposed changes through the Django test client: who may see and decide,
approve, edit then approve, reject with a reason, bulk with filters, stale proposals (a
three-way merge, or the conflict view), decisions made first by someone else (409), bad
input (400 with a sentence), and the plain forms that work without JavaScript."""

from __future__ import annotations

import re
from html import unescape

import pytest

from memoryui import proposing
from memoryui.store import Actor, Kind, Store
from memoryui.store.proposals import propose

INBOX = "/review/proposals/"


def proposal(store: Store, scope: str, text: str, *, kind: Kind = Kind.MEMORY,
             name: str | None = None) -> str:
    """An agent of `scope` proposes `text` for a file (as its tools do under `propose`):
    the branch in git and the shared record; its id."""
    path = store.path_for(kind, scope, name) if name else store.path_for(kind, scope)
    p, created = propose(store, scope=scope, path=path, text=text, actor=Actor.agent(scope),
                         tool="memory_write")
    assert p is not None
    proposing.recorded(p, created, None, store)
    return p.id


@pytest.fixture
def mem(workspace: Store) -> str:
    path = workspace.path_for(Kind.MEMORY, "ops-bot")
    workspace.write(path, "# Memory\n\n- one\n- two\n- three\n", actor=Actor.user("lead"),
                    tool="edit")
    return path


def html(resp) -> str:
    return resp.content.decode()


# -- reading --------------------------------------------------------------------------------

def test_anonymous_is_sent_to_sign_in(client, db, workspace):
    resp = client.get(INBOX)
    assert resp.status_code == 302 and resp["Location"].startswith("/accounts/login/")


def test_a_viewer_sees_the_diff_who_and_when_but_no_actions(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- one\n- two\n- three\n- four\n")
    page = html(client_as("viewer").get(INBOX))
    assert f'id="proposal-{pid}"' in page
    assert "ops-bot" in page and mem in page and "four" in page
    assert 'class="add"' in page  # the drawn diff
    assert f"/review/proposals/{pid}/approve/" not in page  # viewers do not act
    assert 'name="id"' not in page


def test_the_review_page_links_to_the_inbox_with_its_count(client_as, workspace, mem):
    proposal(workspace, "ops-bot", "# Memory\n\n- changed\n")
    page = html(client_as("viewer").get("/review/"))
    assert f'href="{INBOX}"' in page
    assert 'data-proposals-count="1"' in page  # header and tab


def test_invisible_characters_are_marked_in_source_and_rendered_views(client_as, workspace,
                                                                      mem):
    pid = proposal(workspace, "ops-bot",
                   "# Memory\n\n- one\n- two\n- three\n- pay\u200b to acct \u202eevil\n")
    c = client_as("viewer")
    page = html(c.get(f"/review/proposals/{pid}/"))
    assert "invisible character U+200B ZERO WIDTH SPACE" in page
    assert "invisible character U+202E RIGHT-TO-LEFT OVERRIDE" in page
    assert "2 invisible characters" in page
    c.cookies["memoryui_diffview"] = "rendered"
    rendered = html(c.get(f"/review/proposals/{pid}/"))
    assert 'class="prose-diff markdown proposal-prose"' in rendered
    assert '<abbr title="invisible character U+200B ZERO WIDTH SPACE">U+200B</abbr>' in rendered


def test_secrets_are_marked_without_showing_the_value(client_as, workspace, mem, settings):
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_SECRETS = "flag"  # (the default, block, refuses such a write at once)
    reset_store()
    key = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    pid = proposal(get_store(), "ops-bot", f"# Memory\n\n- one\n- two\n- three\n- {key}\n")
    page = html(client_as("viewer").get(f"/review/proposals/{pid}/"))
    badge = page.split('class="secret-badge"')[1].split("</li>")[0]
    assert "Secret: GitHub Token (line 6)" in badge and key not in badge


def test_duplicates_and_already_known_are_marked(client_as, workspace, mem):
    fact = "The staging deploy times out after 30 seconds unless the cache is warmed first."
    workspace.write(workspace.path_for(Kind.WORLD, None, "deploys"), f"# Deploys\n\n{fact}\n",
                    actor=Actor.user("lead"), tool="edit")
    a = proposal(workspace, "ops-bot", f"# Memory\n\n- one\n- two\n- three\n- {fact}\n")
    b = proposal(workspace, "qa-bot", f"# Memory\n\n{fact}\n")
    page = html(client_as("viewer").get(INBOX))
    assert "already known: world/deploys.md" in page or "already known:" in page
    assert f'href="#proposal-{b}"' in page and f'href="#proposal-{a}"' in page
    assert "×2 similar" in page


def test_filters_narrow_the_inbox_and_bad_ones_are_400(client_as, workspace, mem):
    a = proposal(workspace, "ops-bot", "# Memory\n\n- a\n")
    b = proposal(workspace, "qa-bot", "# Memory\n\n- b\n")
    c = client_as("viewer")
    page = html(c.get(INBOX, {"scope": "qa-bot"}))
    assert f"proposal-{b}" in page and f"proposal-{a}" not in page
    page = html(c.get(INBOX, {"proposer": "ops-bot"}))
    assert f"proposal-{a}" in page and f"proposal-{b}" not in page
    assert f"proposal-{a}" not in html(c.get(INBOX, {"kind": "world"}))
    for bad in ({"kind": "daily"}, {"scope": "../x"}, {"page": "x"}):
        resp = c.get(INBOX, bad)
        assert resp.status_code == 400, bad
        assert "Bad request" in html(resp)


def test_an_unknown_proposal_is_404(client_as, workspace):
    c = client_as("curator")
    assert c.get("/review/proposals/0123456789ab/").status_code == 404
    assert c.post("/review/proposals/0123456789ab/approve/").status_code == 404
    assert c.get("/review/proposals/nothex/").status_code == 404


# -- deciding ---------------------------------------------------------------------------------

def test_a_viewer_may_not_decide(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- x\n")
    c = client_as("viewer")
    assert c.post(f"/review/proposals/{pid}/approve/").status_code == 403
    assert c.post(f"/review/proposals/{pid}/reject/", {"reason": "no"}).status_code == 403
    assert c.post("/review/proposals/bulk/", {"id": pid, "action": "approve"}).status_code == 403
    assert proposing.get(pid).status == "open"


def test_approve_lands_the_text_as_a_merge_commit_by_the_curator(client_as, workspace, mem):
    text = "# Memory\n\n- one\n- two\n- three\n- four\n"
    pid = proposal(workspace, "ops-bot", text)
    resp = client_as("curator").post(f"/review/proposals/{pid}/approve/", {"next": INBOX})
    assert resp.status_code == 302 and resp["Location"] == INBOX
    assert workspace.read(mem) == text
    p = proposing.get(pid)
    assert (p.status, p.decided_by) == ("approved", "curator")
    info = workspace.log(limit=1)[0]
    assert info.sha == p.merge_sha
    page = html(client_as("curator").get(INBOX, follow=True))
    assert "Approved the proposal for" in page and p.merge_sha[:8] in page


def test_approve_with_htmx_swaps_the_decided_card(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- htmx\n")
    resp = client_as("curator").post(f"/review/proposals/{pid}/approve/", HTTP_HX_REQUEST="true")
    assert resp.status_code == 200 and "HX-Request" in resp["Vary"]
    body = html(resp)
    assert f'id="proposal-{pid}"' in body and "Approved by" in body
    assert 'hx-swap-oob="true"' in body  # the flash


def test_edit_then_approve_lands_the_edited_text(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- one\n- two\n- three\n- for\n")
    c = client_as("curator")
    editor = c.get(f"/review/proposals/{pid}/edit/")
    assert editor.status_code == 200
    page = html(editor)
    assert "- for" in page and 'hx-post="/preview/"' in page
    updated = re.search(r'name="updated" value="([^"]+)"', page).group(1)
    resp = c.post(f"/review/proposals/{pid}/edit/", {
        "text": "# Memory\r\n\r\n- one\r\n- two\r\n- three\r\n- four\r\n", "updated": updated})
    assert resp.status_code == 302
    assert workspace.read(mem) == "# Memory\n\n- one\n- two\n- three\n- four\n"
    assert proposing.get(pid).status == "approved"


def test_edit_refuses_text_with_conflict_markers_and_keeps_it(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- x\n")
    text = "<<<<<<< a\n- x\n=======\n- y\n>>>>>>> b\n"
    resp = client_as("curator").post(f"/review/proposals/{pid}/edit/", {"text": text})
    assert resp.status_code == 400
    assert "conflict markers" in html(resp) and "<<<<<<< a" in unescape(html(resp))
    assert proposing.get(pid).status == "open"


def test_reject_needs_a_reason_and_keeps_it(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- wrong\n")
    c = client_as("curator")
    resp = c.post(f"/review/proposals/{pid}/reject/", {"reason": "  "})
    assert resp.status_code == 400 and "give a reason" in html(resp)
    form = c.get(f"/review/proposals/{pid}/reject/")  # the page without JavaScript
    assert form.status_code == 200 and 'name="reason"' in html(form)
    resp = c.post(f"/review/proposals/{pid}/reject/", {"reason": "not a fact"})
    assert resp.status_code == 302
    p = proposing.get(pid)
    assert (p.status, p.reason, p.decided_by) == ("rejected", "not a fact", "curator")
    assert workspace.read(mem) == "# Memory\n\n- one\n- two\n- three\n"
    page = html(c.get(f"/review/proposals/{pid}/"))
    assert "Rejected by" in page and "not a fact" in page


def test_deciding_twice_is_409_naming_who_decided(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- once\n")
    proposing.reject(pid, "alice", "dup")
    c = client_as("curator")
    resp = c.post(f"/review/proposals/{pid}/approve/")
    assert resp.status_code == 409
    assert "rejected already by alice" in html(resp)
    resp = c.post(f"/review/proposals/{pid}/reject/", {"reason": "x"}, HTTP_HX_REQUEST="true")
    assert resp.status_code == 409 and resp["HX-Reswap"] == "none"
    assert "by alice" in html(resp)


def test_a_proposal_changed_since_it_was_opened_is_409(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- v1\n")
    resp = client_as("curator").post(f"/review/proposals/{pid}/approve/",
                                     {"updated": "2000-01-01T00:00:00+00:00"})
    assert resp.status_code == 409 and "changed this proposal" in html(resp)
    assert proposing.get(pid).status == "open"


def test_a_stale_proposal_is_merged_three_ways(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- one\n- two\n- three\n- four\n")
    workspace.write(mem, "# Memory\n\n- ONE\n- two\n- three\n", actor=Actor.user("lead"),
                    tool="edit")
    c = client_as("curator")
    assert "file changed since" in html(c.get(INBOX))
    resp = c.post(f"/review/proposals/{pid}/approve/")
    assert resp.status_code == 302
    assert workspace.read(mem) == "# Memory\n\n- ONE\n- two\n- three\n- four\n"


def test_a_conflict_opens_the_conflict_view_and_the_resolution_lands(client_as, workspace,
                                                                    mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- one\n- TWO (agent)\n- three\n")
    workspace.write(mem, "# Memory\n\n- one\n- two (lead)\n- three\n", actor=Actor.user("lead"),
                    tool="edit")
    c = client_as("curator")
    resp = c.post(f"/review/proposals/{pid}/approve/")
    assert resp.status_code == 409
    page = unescape(html(resp))
    assert "Conflict: the file changed since" in page and "<<<<<<< the proposal" in page
    assert "proposal-base" in page and "proposal-theirs" in page  # the three texts
    assert workspace.read(mem) == "# Memory\n\n- one\n- two (lead)\n- three\n"
    htmx = c.post(f"/review/proposals/{pid}/approve/", HTTP_HX_REQUEST="true")
    assert htmx["HX-Redirect"].startswith(f"/review/proposals/{pid}/edit/")
    resolved = "# Memory\n\n- one\n- two (lead), TWO (agent)\n- three\n"
    resp = c.post(f"/review/proposals/{pid}/edit/", {"text": resolved})
    assert resp.status_code == 302
    assert workspace.read(mem) == resolved


def test_a_file_deleted_since_asks_before_bringing_it_back(client_as, workspace, mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- kept\n")
    workspace.delete(mem, actor=Actor.user("lead"), tool="delete")
    c = client_as("curator")
    resp = c.post(f"/review/proposals/{pid}/approve/")
    assert resp.status_code == 409 and "deleted since" in html(resp)
    assert workspace.read(mem) is None
    resp = c.post(f"/review/proposals/{pid}/approve/", {"recreate": "1"})
    assert resp.status_code == 302 and workspace.read(mem) == "# Memory\n\n- kept\n"


def test_bulk_approve_and_reject_with_a_selection(client_as, workspace, mem):
    a = proposal(workspace, "ops-bot", "# Memory\n\n- a\n")
    b = proposal(workspace, "qa-bot", "# Memory\n\n- b\n")
    d = proposal(workspace, "dev-bot", "# Memory\n\n- d\n")
    c = client_as("curator")
    resp = c.post("/review/proposals/bulk/", {"id": [a, b], "action": "reject"})
    assert resp.status_code == 400 and "give a reason" in html(resp)
    resp = c.post("/review/proposals/bulk/", {"id": [a, b], "action": "reject",
                                               "reason": "noise", "next": INBOX + "?scope=x"})
    assert resp.status_code == 302 and resp["Location"] == INBOX + "?scope=x"
    assert [proposing.get(i).status for i in (a, b, d)] == ["rejected", "rejected", "open"]
    resp = c.post("/review/proposals/bulk/", {"id": [a, d], "action": "approve"}, follow=True)
    page = html(resp)
    assert "Approved 1 proposal." in page and "Left open" in page and "rejected already" in page
    assert proposing.get(d).status == "approved"


@pytest.mark.parametrize("data", [{"action": "approve"}, {"id": "zz", "action": "approve"},
                                  {"id": "0123456789ab", "action": "merge"}])
def test_bulk_bad_input_is_400_with_a_sentence(client_as, workspace, data):
    resp = client_as("curator").post("/review/proposals/bulk/", data)
    assert resp.status_code == 400
    assert re.search(r"select at least one|not a proposal id|choose approve or reject",
                     html(resp))


def test_csrf_is_enforced(workspace, make_user, mem):
    from django.test import Client

    pid = proposal(workspace, "ops-bot", "# Memory\n\n- csrf\n")
    c = Client(enforce_csrf_checks=True)
    c.force_login(make_user("curator"))
    assert c.post(f"/review/proposals/{pid}/approve/").status_code == 403
    assert proposing.get(pid).status == "open"


def test_a_file_changed_while_editing_reopens_the_editor_with_the_text(client_as, workspace,
                                                                       mem):
    pid = proposal(workspace, "ops-bot", "# Memory\n\n- one\n- two\n- three\n- four\n")
    c = client_as("curator")
    page = html(c.get(f"/review/proposals/{pid}/edit/"))
    seen = re.search(r'name="seen" value="([^"]+)"', page).group(1)
    workspace.write(mem, "# Memory\n\n- one\n- two\n- three (lead)\n", actor=Actor.user("lead"),
                    tool="edit")
    mine = "# Memory\n\n- one\n- two\n- three\n- four, edited\n"
    resp = c.post(f"/review/proposals/{pid}/edit/", {"text": mine, "seen": seen})
    assert resp.status_code == 409
    page = unescape(html(resp))
    assert "The file changed while you edited" in page and "- four, edited" in page
    assert workspace.read(mem) == "# Memory\n\n- one\n- two\n- three (lead)\n"
    assert proposing.get(pid).status == "open"
