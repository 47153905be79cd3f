"""File and scope history, commit pages (unified and split), file at a commit, blame, restore.

A real workspace written by several actors with backdated commits, read through the Django
test client.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass

import pytest

from memoryui.store import Actor, Store, version_of

T0 = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC).timestamp()
DAY = 86_400.0

OPS, BILLING, ALICE = Actor.agent("ops-bot"), Actor.agent("billing-agent"), Actor.user("alice")
MEM = "agents/ops-bot/memory/MEMORY.md"
DAILY = "agents/billing-agent/memory/daily/2026-01-06.md"
WORLD = "memory/world/payments.md"
V1 = "# Ops\n\n- the deploy window is Tuesday\n"
V2 = V1 + "- pager rotation is weekly\n"
V3 = "# Ops\n\n- the deploy window is Thursday\n- pager rotation is weekly\n"


@dataclass
class Seeded:
    """What the seed wrote: commit shas by name, for exact assertions."""

    store: Store
    shas: dict[str, str]


def seed(store: Store) -> Seeded:
    """Five commits over four days by two agents and a person, in three scopes/kinds."""
    shas = {}
    shas["mem1"] = store.write(MEM, V1, actor=OPS, tool="reflect", when=T0).commit
    shas["daily"] = store.append(DAILY, "\n## 10:00\n\ninvoice run ok\n",
                                 header="# 2026-01-06\n", actor=BILLING, tool="remember",
                                 when=T0 + DAY).commit
    shas["mem2"] = store.write(MEM, V2, actor=OPS, tool="reflect", when=T0 + DAY + 60).commit
    shas["mem3"] = store.write(MEM, V3, actor=ALICE, tool="edit",
                               message="Fix the deploy day\n\nIt moved in January.",
                               when=T0 + 2 * DAY).commit
    shas["world"] = store.write(WORLD, "# Payments <&> refunds\n", actor=ALICE,
                                tool="update_world", when=T0 + 3 * DAY).commit
    assert all(shas.values())
    return Seeded(store, shas)


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


def ids_in(html: str) -> list[str]:
    """Commit shas of the rows shown on a history/activity page, in page order."""
    return re.findall(r'id="c-([0-9a-f]{40})"', html)


def git(store: Store, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=store.root, capture_output=True, text=True,
                          check=True).stdout


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


# --------------------------------------------------------------------------- commit page


def test_commit_page_unified(client_as, seeded):
    sha = seeded.shas["mem3"]
    r = client_as("viewer").get(f"/commit/{sha}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert "Fix the deploy day" in html and "It moved in January." in html
    assert sha in html
    assert f'href="/commit/{seeded.shas["mem2"]}/"' in html  # parent
    assert "Memoryui-Actor" in html and "user:alice" in html
    assert 'class="diff diff-unified"' in html
    # one line changed: +1 -1, with line numbers and word-level highlights
    assert '<span class="plus">+1</span> <span class="minus">−1</span>' in html
    assert '<tr class="del"><td class="ln" data-line="3"></td><td class="ln"></td>' in html
    assert "<del>Tuesday</del>" in html and "<ins>Thursday</ins>" in html
    assert 'data-line="4"' in html  # the context line after the change


def test_commit_page_split_view(client_as, seeded):
    sha = seeded.shas["mem3"]
    html = client_as("viewer").get(f"/commit/{sha}/?view=split").content.decode()
    assert 'class="diff diff-split"' in html and "diff-unified" not in html
    # the removed and the added line sit side by side in one row
    row = re.search(r"<tr><td class=\"ln del\" data-line=\"3\"></td>.*?</tr>", html)
    assert row is not None
    assert "<del>Tuesday</del>" in row.group(0) and "<ins>Thursday</ins>" in row.group(0)
    assert 'data-line="3"' in row.group(0)
    assert 'aria-current="page">Split<' in html


def test_commit_page_escapes_memory_text(client_as, workspace):
    sha = workspace.write("memory/world/x.md", "<script>alert(1)</script>\n", actor=OPS,
                          tool="update_world", message="<b>bold</b> subject").commit
    html = client_as("viewer").get(f"/commit/{sha}/").content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html


def test_no_newline_markers_in_both_views(client_as, workspace):
    path = "memory/world/nl.md"
    workspace.write(path, "alpha\nbeta", actor=OPS, tool="update_world")
    sha = workspace.write(path, "alpha\ngamma\n", actor=OPS, tool="update_world").commit
    c = client_as("viewer")
    unified = c.get(f"/commit/{sha}/").content.decode()
    assert unified.count("No newline at end of file") == 1  # only the old side lacked it
    split = c.get(f"/commit/{sha}/?view=split").content.decode()
    assert split.count("No newline at end of file") == 1
    assert "The old file does not end with a newline" in split


def test_commit_page_for_one_file_and_the_htmx_fragment(client_as, workspace):
    a, b = "memory/world/a.md", "memory/world/b.md"
    (workspace.root / "memory/world").mkdir(parents=True)
    (workspace.root / a).write_text("A\n")
    (workspace.root / b).write_text("B\n")
    [sha] = workspace.commit_pending([a, b], actor=ALICE)
    c = client_as("viewer")
    full = c.get(f"/commit/{sha}/").content.decode()
    assert "diff-memory-world-a-md" in full and "diff-memory-world-b-md" in full
    only = c.get(f"/commit/{sha}/?path={a}").content.decode()
    assert "diff-memory-world-a-md" in only and "diff-memory-world-b-md" not in only
    assert "show all 2 changed files" in only
    frag = c.get(f"/commit/{sha}/?path={a}", HTTP_HX_REQUEST="true")
    assert frag.status_code == 200
    body = frag.content.decode()
    assert "<html" not in body and "diff-memory-world-a-md" in body
    assert "HX-Request" in frag["Vary"]
    assert c.get(f"/commit/{sha}/?path=memory/world/zzz.md").status_code == 404
    assert c.get(f"/commit/{sha}/?path=../x").status_code == 400


def test_a_commit_of_many_files_draws_the_first_and_links_the_rest(client_as, workspace,
                                                                   monkeypatch):
    from memoryui.web import diffview

    monkeypatch.setattr(diffview, "MAX_FILES_DRAWN", 2)
    (workspace.root / "memory/world").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (workspace.root / f"memory/world/{name}.md").write_text(f"{name}\n")
    [sha] = workspace.commit_pending()
    html = client_as("viewer").get(f"/commit/{sha}/").content.decode()
    assert "<strong>3</strong> files changed" in html
    assert html.count('<div class="diff-block"') == 2
    assert 'href="#diff-memory-world-a-md"' in html
    assert 'href="?path=memory/world/c.md"' in html
    assert "1 more changed file not drawn here" in html


@pytest.mark.parametrize("sha", ["0" * 40, "deadbeef", "xyz", "abc", "g" * 40, "a" * 41])
def test_unknown_or_malformed_commit_is_404(client_as, seeded, sha):
    assert client_as("viewer").get(f"/commit/{sha}/").status_code == 404


def test_commit_of_a_blob_sha_is_404(client_as, seeded):
    blob = git(seeded.store, "rev-parse", f"HEAD:{MEM}").strip()
    assert client_as("viewer").get(f"/commit/{blob}/").status_code == 404


def test_promoted_from_and_restored_from_trailers_are_links(client_as, workspace):
    src = "agents/ops-bot/memory/daily/2026-01-05.md#0900-abcd1234"
    sha = workspace.write(MEM, "promoted\n", actor=ALICE, tool="promote",
                          trailers=[("Promoted-From", src)]).commit
    html = client_as("viewer").get(f"/commit/{sha}/").content.decode()
    # to the entry's anchor on the daily log's file page
    assert ('<a href="/f/agents/ops-bot/memory/daily/2026-01-05.md#e-0900-abcd1234">'
            in html)
    workspace.write(MEM, "other\n", actor=ALICE, tool="edit")
    restored = workspace.restore(MEM, sha, actor=ALICE).commit
    html = client_as("viewer").get(f"/commit/{restored}/").content.decode()
    assert f'<a href="/commit/{sha}/">{sha}</a>' in html


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


@pytest.mark.parametrize("name", ['say "hi".md', "tab\there.md", "back\\slash.md",
                                  "naïve ✓.md"])
def test_commit_page_of_a_name_git_would_quote(client_as, workspace, name):
    """Files made natively with names git C-quotes, taken in by `manage.py snapshot`."""
    from django.core.management import call_command
    from django.utils.html import escape

    path = f"agents/ops-bot/memory/notes/{name}"
    full = workspace.root / path
    full.parent.mkdir(parents=True)
    full.write_text("# written natively\n")
    call_command("snapshot")
    info = workspace.log(limit=1)[0]
    assert [f.path for f in info.files] == [path]
    c = client_as("viewer")
    r = c.get(f"/commit/{info.sha}/")
    assert r.status_code == 200
    html = r.content.decode()
    assert escape(path) in html and "written natively" in html
    activity = c.get("/activity/")
    assert activity.status_code == 200 and escape(path) in activity.content.decode()
