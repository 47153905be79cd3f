"""Revert one commit from its page: curators only, POST with CSRF, against the HEAD the page
showed; a file that cannot merge shows the conflict view and the resolved texts commit."""

from __future__ import annotations

import html
import re

import pytest

from memoryui.store import Actor, Store

BOT = Actor.agent("ops-bot")
MEM = "agents/ops-bot/memory/MEMORY.md"
TOPIC = "memory/world/deploys.md"


@pytest.fixture
def bad(workspace: Store) -> str:
    workspace.write(MEM, "# Ops\n\n- one\n- two\n- three\n", actor=BOT, tool="reflect")
    sha = workspace.write(MEM, "# Ops\n\n- one WRONG\n- two\n- three\n", actor=BOT,
                          tool="reflect").commit
    workspace.write(MEM, "# Ops\n\n- one WRONG\n- two\n- three (later)\n", actor=BOT,
                    tool="reflect")
    return sha


def _head_on_page(html: str) -> str:
    return re.search(r'name="head" value="([0-9a-f]{40})"', html).group(1)


def test_curator_reverts_from_the_commit_page(client_as, workspace, bad):
    c = client_as("curator")
    page = c.get(f"/commit/{bad}/").content.decode()
    assert "Revert this commit" in page
    r = c.post(f"/commit/{bad}/revert", {"head": _head_on_page(page)}, follow=True)
    assert r.status_code == 200
    assert workspace.read(MEM) == "# Ops\n\n- one\n- two\n- three (later)\n"
    new = workspace.commit(workspace.head())
    assert new.trailers["Reverts"] == [bad] and new.actor.startswith("user:")
    body = r.content.decode()
    assert f"Reverted {bad[:8]}" in body and "Reverts" in body
    assert f'href="/commit/{bad}/"' in body  # the trailer links to the reverted commit


def test_viewer_cannot_revert_nor_see_the_button(client_as, workspace, bad):
    c = client_as("viewer")
    page = c.get(f"/commit/{bad}/").content.decode()
    assert "Revert this commit" not in page
    head = workspace.head()
    assert c.post(f"/commit/{bad}/revert", {"head": head}).status_code == 403
    assert workspace.head() == head


def test_stale_page_get_bad_ids_and_csrf(client_as, workspace, bad, make_user):
    from django.test import Client

    c = client_as("curator")
    stale = workspace.head()
    workspace.write(TOPIC, "# Deploys\n", actor=BOT, tool="reflect")
    head = workspace.head()
    r = c.post(f"/commit/{bad}/revert", {"head": stale})
    assert r.status_code == 409 and b"changed since you loaded the page" in r.content
    assert c.get(f"/commit/{bad}/revert").status_code == 405
    assert c.post(f"/commit/{bad}/revert", {}).status_code == 400
    assert c.post(f"/commit/{'0' * 40}/revert", {"head": head}).status_code == 404
    assert c.post("/commit/zzzzzzz/revert", {"head": head}).status_code == 404
    assert c.post(f"/commit/{bad}/revert", {"head": head, "path": "../x",
                                              "text": "x"}).status_code == 400
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(make_user("curator"))
    assert strict.post(f"/commit/{bad}/revert", {"head": head}).status_code == 403
    assert workspace.head() == head


def test_conflict_view_then_save_the_resolution(client_as, workspace):
    workspace.write(MEM, "# Ops\n\n- one\n", actor=BOT, tool="reflect")
    sha = workspace.write(MEM, "# Ops\n\n- one changed\n", actor=BOT, tool="reflect").commit
    workspace.write(MEM, "# Ops\n\n- one changed again\n", actor=BOT, tool="reflect")
    head = workspace.head()
    c = client_as("curator")
    r = c.post(f"/commit/{sha}/revert", {"head": head})
    assert r.status_code == 409
    body = r.content.decode()
    assert "cannot merge" in body and MEM in body and "&lt;&lt;&lt;&lt;&lt;&lt;&lt;" in body
    assert workspace.head() == head
    # Saving with markers left is refused; a resolved text becomes the revert commit.
    marked = re.search(r"<textarea id=\"revert-text-1\"[^>]*>(.*?)</textarea>", body, re.S).group(1)
    # (a browser drops the one newline after <textarea>, as the test does here)
    text = html.unescape(marked).removeprefix("\n")
    assert text.startswith("# Ops\n")
    r = c.post(f"/commit/{sha}/revert", {"head": head, "path": MEM, "text": text})
    assert r.status_code == 400 and workspace.head() == head
    r = c.post(f"/commit/{sha}/revert", {"head": head, "path": MEM,
                                          "text": "# Ops\n\n- one (resolved)\n"})
    assert r.status_code == 302
    assert workspace.read(MEM) == "# Ops\n\n- one (resolved)\n"
    assert workspace.commit(workspace.head()).trailers["Reverts"] == [sha]


def test_merge_commit_is_refused(client_as, workspace):
    import subprocess

    workspace.write(MEM, "a\n", actor=BOT, tool="reflect")
    git = ["git", "-C", str(workspace.root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "checkout", "-q", "-b", "side"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "side"], check=True)
    subprocess.run([*git, "checkout", "-q", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "main"], check=True)
    subprocess.run([*git, "merge", "-q", "--no-ff", "-m", "merge side", "side"], check=True)
    head = workspace.resolve("HEAD")
    c = client_as("curator")
    assert "Revert this commit" not in c.get(f"/commit/{head}/").content.decode()
    r = c.post(f"/commit/{head}/revert", {"head": head})
    assert r.status_code == 400 and b"choose a parent" in r.content
