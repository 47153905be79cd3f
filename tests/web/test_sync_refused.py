"""The Sync page lists what memoryui refused from the remote, with the commit it came in."""

from __future__ import annotations

from django.urls import reverse

from tests.sync.evil import GITMODULES, blob, push_commit
from tests.web.test_sync import synced  # noqa: F401 - the fixture


def test_refused_entries_are_listed_with_their_commit(client_as, synced):  # noqa: F811
    s = synced()
    host = s.native.path
    evil = push_commit(host, {".gitmodules": ("100644", blob(host, GITMODULES)),
                              "agents/ops/memory/daily": ("120000", blob(host, "/etc"))},
                       "hostile")
    c = client_as("viewer")
    assert 'id="sync-refused"' not in c.get("/sync/").content.decode()
    assert s.syncer.round(blocking=True).error is None
    page = c.get("/sync/").content.decode()
    assert 'id="sync-refused"' in page
    section = page.split('id="sync-refused"', 1)[1].split("</section>", 1)[0]
    assert ".gitmodules" in section and "submodule configuration" in section
    assert "agents/ops/memory/daily" in section and "symbolic link" in section
    assert f'href="{reverse("commit", args=[evil])}"' in section
    assert c.get(reverse("commit", args=[evil])).status_code == 200


def test_manual_mode_page_works_with_a_dotdot_entry_refused(client_as, synced):  # noqa: F811
    s = synced(push="manual")
    host = s.native.path
    push_commit(host, {"../escape.md": ("100644", blob(host, "outside\n"))}, "escape")
    c = client_as("curator")
    assert c.post("/sync/now").status_code == 302
    r = c.get("/sync/")
    page = r.content.decode()
    assert r.status_code == 200
    section = page.split('id="sync-refused"', 1)[1].split("</section>", 1)[0]
    assert '<td class="mono">..</td>' in section and "outside its folder" in section
    assert "escape.md" not in page.split('id="sync-files"', 1)[1]
