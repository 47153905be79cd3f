"""The commit page: unified and split diffs, one file or many, escaped text, trailers as links."""

from __future__ import annotations

import re

import pytest

from tests.web.seeded_history import ALICE, MEM, OPS, Seeded, git, seed


@pytest.fixture
def seeded(workspace) -> Seeded:
    return seed(workspace)


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
