"""Every history/activity/pending view, fragments included, for each role.

anonymous -> sent to sign in; viewer -> reads everything, acts on nothing (403, no change);
curator and admin -> read and act.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from memoryui.store import version_of
from tests.web.test_history import MEM, V1, V3, Seeded, seed

HX = {"HTTP_HX_REQUEST": "true"}


@dataclass
class Case:
    name: str
    method: str
    url: Callable[[Seeded], str]
    data: Callable[[Seeded], dict] = lambda s: {}
    headers: dict = field(default_factory=dict)
    acted: Callable[[Seeded], bool] | None = None  # for actions: did it take effect?


def _native(s: Seeded) -> str:
    return (s.store.root / MEM).read_text()


CASES = [
    Case("file_history", "get", lambda s: f"/history/{MEM}"),
    Case("scope_history", "get", lambda s: "/s/ops-bot/history/"),
    Case("commit", "get", lambda s: f"/commit/{s.shas['mem3']}/"),
    Case("commit_split", "get", lambda s: f"/commit/{s.shas['mem3']}/?view=split"),
    Case("commit_fragment", "get", lambda s: f"/commit/{s.shas['mem3']}/?path={MEM}",
         headers=HX),
    Case("file_at", "get", lambda s: f"/at/{s.shas['mem1']}/{MEM}"),
    Case("blame", "get", lambda s: f"/blame/{MEM}"),
    Case("activity", "get", lambda s: "/activity/?actor=agent:ops-bot"),
    Case("activity_fragment", "get", lambda s: "/activity/?kind=memory", headers=HX),
    Case("activity_atom", "get", lambda s: "/activity.atom"),
    Case("pending", "get", lambda s: "/pending/"),
    Case("pending_diff", "get", lambda s: f"/pending/diff/{MEM}"),
    Case("pending_diff_fragment", "get", lambda s: f"/pending/diff/{MEM}", headers=HX),
    Case("restore", "post", lambda s: f"/restore/{MEM}",
         data=lambda s: {"rev": s.shas["mem1"], "base": version_of(_native(s))},
         acted=lambda s: _native(s) == V1),
    Case("pending_commit", "post", lambda s: "/pending/commit",
         data=lambda s: {"paths": [MEM]}, acted=lambda s: s.store.pending() == []),
    Case("pending_discard", "post", lambda s: "/pending/discard",
         data=lambda s: {"paths": [MEM], "confirm": "yes"}, acted=lambda s: _native(s) == V3),
    Case("pending_discard_htmx", "post", lambda s: "/pending/discard",
         data=lambda s: {"paths": [MEM], "confirm": "yes"}, headers=HX,
         acted=lambda s: _native(s) == V3),
]


@pytest.fixture
def state(workspace) -> Seeded:
    s = seed(workspace)
    (workspace.root / MEM).write_text(V3 + "- native write\n")  # something pending
    return s


def _request(client, case: Case, s: Seeded):
    call = client.get if case.method == "get" else client.post
    if case.method == "get":
        return call(case.url(s), **case.headers)
    return call(case.url(s), case.data(s), **case.headers)


# The Atom feed answers feed readers 401 instead (tests/web/test_activity.py).
PAGES = [c for c in CASES if c.name != "activity_atom"]


@pytest.mark.parametrize("case", PAGES, ids=[c.name for c in PAGES])
def test_anonymous_is_sent_to_sign_in(client, state, case):
    before = (state.store.head(), _native(state))
    r = _request(client, case, state)
    if case.headers:  # htmx fragments send the whole page to sign-in
        assert r["HX-Redirect"].startswith("/accounts/login/?next=")
    else:
        assert r.status_code == 302
        assert r["Location"].startswith("/accounts/login/?next=")
    assert (state.store.head(), _native(state)) == before


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_viewer_reads_but_cannot_act(client_as, state, case):
    c = client_as("viewer")
    before = (state.store.head(), _native(state))
    r = _request(c, case, state)
    if case.acted is None:
        assert r.status_code == 200
        assert r.content
    else:
        assert r.status_code == 403
        assert (state.store.head(), _native(state)) == before


@pytest.mark.parametrize("role", ["curator", "admin"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_curator_and_admin_read_and_act(client_as, state, case, role):
    c = client_as(role)
    r = _request(c, case, state)
    if case.acted is None:
        assert r.status_code == 200
        if case.headers:
            assert b"<html" not in r.content  # the fragment, not a page
    else:
        assert r.status_code == 302 or r.has_header("HX-Redirect")
        assert case.acted(state)


def test_restore_form_and_pending_controls_follow_the_role(client_as, state):
    for role, can in (("viewer", False), ("curator", True), ("admin", True)):
        c = client_as(role)
        history = c.get(f"/history/{MEM}").content.decode()
        pending = c.get("/pending/").content.decode()
        at = c.get(f"/at/{state.shas['mem1']}/{MEM}").content.decode()
        assert ('action="/restore/' in history) is can
        assert ('action="/restore/' in at) is can
        assert ("Discard selected" in pending) is can
