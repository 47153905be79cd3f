"""A save in the UI links to the commit that holds it: the sha when the write was committed
at once, else /write/<record>/, which redirects to the commit the committer makes (no request
flushes other agents' writes or searches history for it)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest

from memoryui.store import Actor, Store, version_of

MEM = "agents/ops-bot/memory/MEMORY.md"
OPS = Actor.agent("ops-bot")
BASE = "# ops-bot\n\n## Facts\n- deploys on Tuesday\n"


def save(client, text: str, base: str):
    return client.post("/edit/" + MEM, {"text": text, "base": base, "message": ""},
                       follow=True)


def holds(store: Store, sha: str, text: str) -> bool:
    shown = subprocess.run(["git", "show", f"{sha}:{MEM}"], cwd=store.root,
                           capture_output=True, text=True).stdout
    return text in shown


@pytest.fixture
def deferred(settings, tmp_path) -> Iterator[Store]:
    """The Django-side store grouping writes for 0.2 s, as in production, with no
    committer process: the worker's own thread commits."""
    from memoryui.workspace import get_store, reset_store

    settings.MEMORYUI_COMMIT_DELAY = 0.2
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    reset_store()
    store = get_store()
    store.write(MEM, BASE, actor=OPS, tool="reflect")
    store.flush()
    yield store
    reset_store()


def test_a_save_committed_at_once_links_its_commit(workspace: Store, client_as) -> None:
    workspace.write(MEM, BASE, actor=OPS, tool="reflect")
    page = save(client_as("curator"), BASE + "- at once\n", version_of(BASE) or "")
    sha = workspace.log(MEM, limit=1)[0].sha
    assert f'<a href="/commit/{sha}/">in commit {sha[:8]}</a>' in page.content.decode()


def test_a_deferred_save_links_to_the_commit_the_committer_makes(deferred: Store,
                                                                 client_as) -> None:
    curator = client_as("curator")
    page = save(curator, BASE + "- grouped\n", version_of(BASE) or "").content.decode()
    m = re.search(r'<a href="(/write/([0-9a-f]{32})/)">Its commit</a>', page)
    assert m, page
    r = curator.get(m.group(1))
    assert r.status_code == 302
    sha = r["Location"].removeprefix("/commit/").rstrip("/")
    assert holds(deferred, sha, "- grouped")
    assert deferred.commit_for(m.group(2)) == sha


def test_a_write_handle_no_commit_holds_is_a_404(workspace: Store, client_as,
                                                 monkeypatch) -> None:
    from memoryui.web.history import written

    monkeypatch.setattr(written, "WAIT", 0.1)
    viewer = client_as("viewer")
    assert viewer.get("/write/" + "0" * 32 + "/").status_code == 404
    assert viewer.get("/write/nothex/").status_code == 404
