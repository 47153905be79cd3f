"""Who may do what in the browse area: every view and fragment x {anonymous, viewer,
curator, admin}, plus signing in and out.

Anonymous people are sent to the sign-in page; signed-in people without the role get a 403
page naming the role; denied writes leave the files as they were.
"""

from __future__ import annotations

import pytest

from memoryui.store import Actor, Store, version_of
from tests.conftest import PASSWORD

MEM = "agents/ops-bot/memory/MEMORY.md"
NOTE = "agents/ops-bot/memory/notes/runbook.md"
TEXT = "# ops-bot\n"
NOTE_TEXT = "# Runbook\n"

ROLES = ["anonymous", "viewer", "curator", "admin"]
RANK = {"anonymous": 0, "viewer": 1, "curator": 2, "admin": 3}

# (name, method, url, data, htmx, role needed, status when allowed)
VIEWS = [
    ("overview", "get", "/", None, False, "viewer", 200),
    ("scope", "get", "/s/ops-bot/", None, False, "viewer", 200),
    ("file", "get", "/f/" + MEM, None, False, "viewer", 200),
    ("file raw view", "get", "/f/" + MEM + "?view=raw", None, False, "viewer", 200),
    ("raw", "get", "/raw/" + MEM, None, False, "viewer", 200),
    ("pending count fragment", "get", "/_browse/pending-count/", None, True, "viewer", 200),
    ("editor", "get", "/edit/" + MEM, None, False, "curator", 200),
    ("save", "post", "/edit/" + MEM, {"text": TEXT + "- new\n", "base": version_of(TEXT)},
     False, "curator", 302),
    ("preview fragment", "post", "/preview/", {"text": "# x", "path": MEM}, True, "curator", 200),
    ("preview page", "post", "/preview/", {"text": "# x"}, False, "curator", 200),
    ("new file form", "get", "/new/", None, False, "curator", 200),
    ("create", "post", "/new/", {"kind": "note", "scope": "ops-bot", "name": "fresh",
                                 "text": "x"}, False, "curator", 302),
    ("delete confirm", "get", "/delete/" + NOTE, None, False, "admin", 200),
    ("delete", "post", "/delete/" + NOTE, {"base": version_of(NOTE_TEXT)}, False, "admin", 302),
]


@pytest.fixture
def ws(workspace: Store) -> Store:
    workspace.write(MEM, TEXT, actor=Actor.agent("ops-bot"), tool="reflect")
    workspace.write(NOTE, NOTE_TEXT, actor=Actor.agent("ops-bot"), tool="memory_write")
    return workspace


def snapshot(store: Store) -> dict[str, bytes]:
    return {p: (store.root / p).read_bytes() for p in store.list_files()}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("view", VIEWS, ids=[v[0] for v in VIEWS])
def test_every_view_checks_the_role(ws, client, make_user, view, role):
    _name, method, url, data, htmx, needed, ok_status = view
    if role != "anonymous":
        client.force_login(make_user(role))
    before = snapshot(ws)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    r = getattr(client, method)(url, data or {}, **headers)
    if role == "anonymous" and htmx:
        # htmx fragments send the whole page to sign-in instead of swapping it in.
        assert r.status_code == 200 and r.content == b""
        assert r["HX-Redirect"].startswith("/accounts/login/?next=")
    elif role == "anonymous":
        assert r.status_code == 302
        assert r["Location"].startswith("/accounts/login/?next=")
    elif RANK[role] < RANK[needed]:
        assert r.status_code == 403
        assert f"needs the {needed} role" in r.content.decode()
    else:
        assert r.status_code == ok_status, r.content[:500]
    if RANK[role] < RANK[needed]:
        assert snapshot(ws) == before  # a denied request changes nothing


def test_sign_in_and_out(ws, client, make_user):
    make_user("viewer", "vera")
    page = client.get("/accounts/login/?next=/s/ops-bot/")
    assert page.status_code == 200 and 'name="csrfmiddlewaretoken"' in page.content.decode()
    bad = client.post("/accounts/login/", {"username": "vera", "password": "wrong"})
    assert bad.status_code == 200 and 'role="alert"' in bad.content.decode()
    r = client.post("/accounts/login/", {"username": "vera", "password": PASSWORD,
                                         "next": "/s/ops-bot/"})
    assert r.status_code == 302 and r["Location"] == "/s/ops-bot/"
    assert client.get("/").status_code == 200
    assert client.get("/accounts/logout/").status_code == 405  # sign-out is POST only
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_sign_in_refuses_foreign_redirects(ws, client, make_user):
    make_user("viewer", "vera")
    r = client.post("/accounts/login/", {"username": "vera", "password": PASSWORD,
                                         "next": "https://evil.example/"})
    assert r.status_code == 302 and r["Location"] == "/"


def test_403_page_says_who_you_are(ws, client_as):
    r = client_as("viewer").get("/edit/" + MEM)
    assert r.status_code == 403
    body = r.content.decode()
    assert "needs the curator role" in body and "signed in as" in body and "viewer" in body
