"""File and scope history, file at a commit, blame, restore.

A real workspace written by several actors with backdated commits, read through the Django
test client.
"""

from __future__ import annotations

import re

import pytest

from memoryui.store import version_of
from tests.web.seeded_history import (
    ALICE,
    MEM,
    OPS,
    T0,
    V1,
    V2,
    V3,
    WORLD,
    Seeded,
    git,
    ids_in,
    seed,
)
from tests.web.seeded_history import DAILY as DAILY  # other history tests import it from here


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


# --------------------------------------------------------------------------- file history


def test_file_history_lists_the_files_commits_newest_first(client_as, seeded):
    c = client_as("viewer")
    r = c.get(f"/history/{MEM}")
    assert r.status_code == 200
    html = r.content.decode()
    assert ids_in(html) == [seeded.shas["mem3"], seeded.shas["mem2"], seeded.shas["mem1"]]
    assert "Fix the deploy day" in html and "It moved in January." in html
    # who: a person badge for alice, agent badges for ops-bot; the tool of each commit
    assert 'class="badge badge-person actor"' in html and ">alice</a>" in html
    assert 'class="badge badge-agent actor"' in html and ">ops-bot</a>" in html
    assert ">reflect</span>" in html and ">edit</span>" in html
    # absolute time on hover, relative as text, grouped by day
    assert 'datetime="2026-01-07T09:00:00+00:00"' in html
    assert "Commits on Jan 7, 2026" in html and "Commits on Jan 5, 2026" in html
    # links to the commit, to the file at each commit, and a no-JS compare link
    sha = seeded.shas["mem2"]
    assert f'href="/commit/{sha}/"' in html
    assert f'href="/at/{sha}/{MEM}"' in html
    assert f'href="/commit/{sha}/?path={MEM}"' in html
    assert f'hx-get="/commit/{sha}/?path={MEM}"' in html


def test_restore_buttons_for_curators_only_and_not_on_the_current_version(client_as, seeded):
    viewer_html = client_as("viewer").get(f"/history/{MEM}").content.decode()
    assert 'action="/restore/' not in viewer_html
    curator_html = client_as("curator").get(f"/history/{MEM}").content.decode()
    base = version_of(V3)
    assert curator_html.count(f'action="/restore/{MEM}"') == 2  # mem2, mem1; not mem3
    assert f'name="rev" value="{seeded.shas["mem1"]}"' in curator_html
    assert f'name="base" value="{base}"' in curator_html
    assert "current version" in curator_html


def test_file_history_pages(client_as, workspace):
    for i in range(33):
        workspace.write(MEM, f"v{i}\n", actor=OPS, tool="reflect", when=T0 + i * 60)
    c = client_as("viewer")
    first = c.get(f"/history/{MEM}").content.decode()
    assert len(ids_in(first)) == 30
    assert 'href="?page=2"' in first
    second = c.get(f"/history/{MEM}?page=2").content.decode()
    assert len(ids_in(second)) == 3
    assert set(ids_in(first)).isdisjoint(ids_in(second))
    assert 'href="?page=1"' in second
    assert c.get(f"/history/{MEM}?page=0").status_code == 400
    assert c.get(f"/history/{MEM}?page=two").status_code == 400


def test_file_history_of_unknown_and_malformed_paths(client_as, seeded):
    c = client_as("viewer")
    assert c.get("/history/agents/ops-bot/memory/NOPE.md").status_code == 404
    r = c.get("/history/agents/../etc/passwd")
    assert r.status_code == 400
    assert b"component" in r.content
    assert c.get("/history/.git/config").status_code == 400


def test_history_of_a_deleted_file_offers_the_version_before_deletion(client_as, seeded):
    store = seeded.store
    gone = store.delete(WORLD, actor=ALICE, tool="delete").commit
    html = client_as("curator").get(f"/history/{WORLD}").content.decode()
    assert ids_in(html) == [gone, seeded.shas["world"]]
    assert "does not exist any more" in html
    assert "View before deletion" in html
    assert f'href="/at/{seeded.shas["world"]}/{WORLD}"' in html
    assert 'name="base" value="absent"' in html


def test_scope_history(client_as, seeded):
    c = client_as("viewer")
    html = c.get("/s/ops-bot/history/").content.decode()
    assert ids_in(html) == [seeded.shas["mem3"], seeded.shas["mem2"], seeded.shas["mem1"]]
    assert f'href="/f/{MEM}"' in html  # each row lists its files
    html = c.get("/s/billing-agent/history/").content.decode()
    assert ids_in(html) == [seeded.shas["daily"]]
    assert c.get("/s/no-such-agent/history/").status_code == 404
    assert c.get("/s/bad%20name/history/").status_code == 400


# --------------------------------------------------------------------------- file at a commit


def test_file_at_a_commit_renders_the_old_version(client_as, seeded):
    sha = seeded.shas["mem1"]
    c = client_as("curator")
    html = c.get(f"/at/{sha}/{MEM}").content.decode()
    assert "This is an old version" in html
    assert "<li>the deploy window is Tuesday</li>" in html  # rendered markdown
    assert "pager rotation" not in html
    assert "Restore this version" in html and f'name="rev" value="{sha}"' in html
    raw = c.get(f"/at/{sha}/{MEM}?view=raw").content.decode()
    assert '<pre class="raw"># Ops\n\n- the deploy window is Tuesday\n</pre>' in raw
    # the current version needs no restore button
    now = c.get(f"/at/{seeded.shas['mem3']}/{MEM}").content.decode()
    assert "same as the current file" in now and "Restore this version" not in now
    # short shas work as well
    assert c.get(f"/at/{sha[:10]}/{MEM}").status_code == 200


def test_file_at_errors(client_as, seeded):
    c = client_as("viewer")
    assert c.get(f"/at/{seeded.shas['mem1']}/{WORLD}").status_code == 404  # not there yet
    assert c.get(f"/at/{'0' * 40}/{MEM}").status_code == 404
    assert c.get(f"/at/not-a-sha/{MEM}").status_code == 404
    assert c.get(f"/at/{seeded.shas['mem1']}/../../etc/passwd").status_code == 400


def test_file_at_sanitizes_old_content(client_as, workspace):
    sha = workspace.write(WORLD, "<img src=x onerror=alert(1)>\n", actor=OPS,
                          tool="update_world").commit
    html = client_as("viewer").get(f"/at/{sha}/{WORLD}").content.decode()
    assert "onerror" not in html


# --------------------------------------------------------------------------- blame


def test_blame_groups_lines_by_commit(client_as, seeded):
    r = client_as("viewer").get(f"/blame/{MEM}")
    assert r.status_code == 200
    html = r.content.decode()
    # V3: line 1-2 from mem1 (ops-bot), line 3 from mem3 (alice), line 4 from mem2 (ops-bot)
    starts = re.findall(r'href="/commit/([0-9a-f]{40})/\?path=', html)
    assert starts == [seeded.shas["mem1"], seeded.shas["mem3"], seeded.shas["mem2"]]
    assert re.search(r'rowspan="2"', html) and html.count('rowspan="1"') == 2
    assert '<td class="code">- the deploy window is Thursday</td>' in html
    assert '<a href="#L4">4</a>' in html
    assert ">alice</a>" in html and ">ops-bot</a>" in html
    assert "Fix the deploy day" in html


def test_blame_errors(client_as, seeded):
    c = client_as("viewer")
    assert c.get("/blame/agents/ops-bot/memory/NOPE.md").status_code == 404
    assert c.get("/blame/../x").status_code == 400


# --------------------------------------------------------------------------- restore


def test_restore_makes_a_new_commit_with_the_old_content(client_as, seeded):
    store = seeded.store
    c = client_as("curator")
    old_head = store.head()
    r = c.post(f"/restore/{MEM}", {"rev": seeded.shas["mem1"], "base": version_of(V3)})
    assert r.status_code == 302 and r["Location"] == f"/history/{MEM}"
    assert (store.root / MEM).read_text() == V1
    head = store.head()
    assert head != old_head
    info = store.log(MEM, limit=1)[0]
    assert info.sha == head
    assert info.trailers["Restored-From"] == [seeded.shas["mem1"]]
    assert info.actor == "user:curator" and info.tools == ["restore"]
    assert git(store, "show", f"{head}:{MEM}") == V1
    # history is not rewritten: all earlier commits are still there
    assert git(store, "rev-list", "--count", "HEAD").strip() == "6"
    page = c.get(f"/history/{MEM}").content.decode()
    assert "Restored " in page and ids_in(page)[0] == head


def test_restore_with_a_stale_base_changes_nothing(client_as, seeded):
    store = seeded.store
    c = client_as("curator")
    stale = version_of(V2)  # the page was loaded before alice's edit
    head = store.head()
    r = c.post(f"/restore/{MEM}", {"rev": seeded.shas["mem1"], "base": stale})
    assert r.status_code == 409
    html = r.content.decode()
    assert "nothing was overwritten" in html
    assert (store.root / MEM).read_text() == V3 and store.head() == head
    # the conflict page shows what restoring would now change and offers a fresh form
    assert "<del>Thursday</del>" in html or "Thursday" in html
    assert f'name="base" value="{version_of(V3)}"' in html


def test_restore_a_deleted_file(client_as, seeded):
    store = seeded.store
    store.delete(WORLD, actor=ALICE, tool="delete")
    c = client_as("curator")
    r = c.post(f"/restore/{WORLD}", {"rev": seeded.shas["world"], "base": "absent"})
    assert r.status_code == 302
    assert (store.root / WORLD).read_text() == "# Payments <&> refunds\n"


def test_restore_bad_input(client_as, seeded):
    c = client_as("curator")
    head = seeded.store.head()
    base = version_of(V3)
    assert c.post(f"/restore/{MEM}", {"rev": "zz", "base": base}).status_code == 400
    assert c.post(f"/restore/{MEM}", {"rev": seeded.shas["mem1"]}).status_code == 400
    assert c.post(f"/restore/{MEM}", {"rev": "0" * 40, "base": base}).status_code == 404
    assert c.post("/restore/../x", {"rev": seeded.shas["mem1"], "base": base}).status_code == 400
    assert c.get(f"/restore/{MEM}").status_code == 405
    assert seeded.store.head() == head


def test_restore_needs_csrf(client, make_user, seeded):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_user("curator"))
    r = strict.post(f"/restore/{MEM}", {"rev": seeded.shas["mem1"], "base": version_of(V3)})
    assert r.status_code == 403
    assert (seeded.store.root / MEM).read_text() == V3
