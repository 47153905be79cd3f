"""The Sync page, the header badge, "Sync now", publishing, discarding and the merge view.

Real git remotes (a bare repository over file://, smart HTTP with a password), a native
agent host clone pushing the framework's files, and the Django test client.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap
from tests.sync_fixtures import HttpGit, NativeHost, git, make_bare, tip

MEM = "agents/native-bot/memory/MEMORY.md"
NOTE = "agents/ops-bot/memory/notes/runbook.md"
BASE = "# Native bot\n\n- deploys on Fridays\n- the staging host is blue\n"
OURS = "# Native bot\n\n- deploys on Tuesdays\n- the staging host is blue\n"
THEIRS = "# Native bot\n\n- deploys on Mondays\n- the staging host is blue\n"
ALICE = Actor.user("alice")


@dataclass
class Synced:
    """A workspace cloned from a remote, the remote, and a native host pushing to it."""

    store: Store
    syncer: Syncer
    bare: Path
    native: NativeHost

    def remote_text(self, path: str) -> str | None:
        out = git(self.bare, "show", f"main:{path}", check=False)
        return out if tip(self.bare) and path in git(self.bare, "ls-tree", "-r", "--name-only",
                                                     "main") else None


def _configure(settings, tmp_path: Path, url: str, **extra: str) -> None:
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    settings.MEMORYUI_REMOTE = url
    settings.MEMORYUI_REMOTE_BRANCH = ""
    settings.MEMORYUI_SYNC_INTERVAL = 0
    settings.MEMORYUI_SYNC_PUSH = extra.get("push", "auto")


@pytest.fixture
def synced(tmp_path: Path, settings) -> Iterator[Callable[..., Synced]]:
    """synced(push="auto"|"manual") -> a bootstrapped instance of a seeded remote."""
    from memoryui.workspace import get_store, get_syncer, reset_store

    def make(push: str = "auto", url: str | None = None) -> Synced:
        bare = make_bare(tmp_path / "remotes" / "memory.git")
        url = url or f"file://{bare}"
        native = NativeHost(f"file://{bare}", tmp_path / "native")
        native.reflect(BASE)
        native.commit("native: first memory")
        native.push()
        _configure(settings, tmp_path, url, push=push)
        bootstrap(tmp_path / "ws", RemoteConfig(url, push=push, interval=0))
        reset_store()
        store = get_store()
        syncer = get_syncer()
        assert syncer is not None
        return Synced(store, syncer, bare, native)

    yield make
    reset_store()


def _html(resp) -> str:
    return resp.content.decode()


# -- sync off ------------------------------------------------------------------------------


def test_without_a_remote_the_page_says_how_and_no_badge_shows(client_as, workspace, settings):
    settings.MEMORYUI_REMOTE = ""
    c = client_as("curator")
    page = _html(c.get("/sync/"))
    assert "Sync is off" in page and "MEMORYUI_REMOTE" in page
    assert 'id="sync-now"' not in page
    assert 'class="sync-badge' not in _html(c.get("/"))
    r = c.post("/sync/now")
    assert r.status_code == 404 and "no remote is configured" in _html(r)


# -- the page, the badge, Sync now -----------------------------------------------------------


def test_page_shows_the_remote_and_sync_now_pushes(client_as, synced):
    s = synced()
    from memoryui.store import Kind
    path = s.store.path_for(Kind.MEMORY, "ops-bot")
    s.store.write(path, "# Ops\n\n- local fact\n", actor=Actor.agent("ops-bot"), tool="reflect")
    c = client_as("curator")
    page = _html(c.get("/sync/"))
    assert f"file://{s.bare}" in page
    assert re.search(r'id="sync-counts"><span[^>]*>1 ahead</span>', page)
    assert 'class="sync-badge sync-ahead"' in page and "ahead 1" in page
    assert f'name="paths" value="{path}"' in page  # the file waits for the next round
    r = c.post("/sync/now")
    assert r.status_code == 302 and r["Location"] == "/sync/"
    page = _html(c.get("/sync/"))
    assert "sync: pushed" in page  # the round's summary as a flash
    assert 'class="sync-badge sync-synced"' in page
    assert "Every file here matches the remote" in page
    assert s.remote_text(path) == "# Ops\n\n- local fact\n"
    # every page carries the badge, linking to the Sync page
    overview = _html(c.get("/"))
    assert re.search(r'<a class="sync-badge sync-synced" id="sync-badge" href="/sync/"', overview)
    badge = c.get("/sync/badge", HTTP_HX_REQUEST="true")
    assert badge.status_code == 200 and "synced" in _html(badge)
    assert "HX-Request" in badge["Vary"]


def test_viewers_read_but_cannot_act(client_as, synced):
    s = synced()
    c = client_as("viewer")
    page = _html(c.get("/sync/"))
    assert "Remote" in page and 'id="sync-now"' not in page
    before = tip(s.bare)
    for url in ("/sync/now", "/sync/publish", "/sync/discard", f"/sync/conflict/{MEM}"):
        assert c.post(url, {"paths": [MEM], "message": "x"}).status_code == 403
    assert tip(s.bare) == before
    anonymous = c.__class__()
    r = anonymous.get("/sync/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_remote_moves_round_takes_it_in_and_the_page_says_so(client_as, synced):
    s = synced()
    s.native.remember("native saw the deploy")
    s.native.commit("native: remember")
    s.native.push()
    c = client_as("curator")
    c.post("/sync/now")
    page = _html(c.get("/sync/"))
    assert "integrated 1 remote commit" in page
    day = s.native.daily_path()
    assert "native saw the deploy" in (s.store.read(day) or "")


# -- passwords and failures ----------------------------------------------------------------


def test_password_is_never_shown_and_failure_shows_on_the_badge(client_as, synced, tmp_path):
    with HttpGit(tmp_path / "remotes") as http:
        url = http.url("memory.git")
        s = synced(url=url)
        assert s.syncer.round(blocking=True).error is None
        c = client_as("curator")
        page = _html(c.get("/sync/"))
        assert http.password not in page
        assert f"alice:***@127.0.0.1:{http.port}/memory.git" in page
    # the remote is gone: the round fails, the page and badge say so, masked
    from memoryui.store import Kind
    s.store.write(s.store.path_for(Kind.MEMORY, "ops-bot"), "# still writing\n",
                  actor=Actor.agent("ops-bot"), tool="reflect")
    r = c.post("/sync/now")
    assert r.status_code == 302
    page = _html(c.get("/sync/"))
    overview = _html(c.get("/"))
    for html in (page, overview):
        assert http.password not in html
    assert 'id="sync-error"' in page and "The last round failed" in page
    assert 'class="sync-badge sync-failing"' in overview and "sync failing" in overview
    assert re.search(r'<small class="sync-error">[^<]+</small>', overview)
    assert "FAILED" in page  # the flash with the round's summary


# -- the merge view ------------------------------------------------------------------------


def _conflict(s: Synced) -> None:
    """Both sides change the same line of MEM; the round keeps ours and records it."""
    s.store.write(MEM, OURS, actor=Actor.agent("native-bot"), tool="reflect")
    s.native.reflect(THEIRS)
    s.native.commit("native: Mondays")
    s.native.push()
    result = s.syncer.round(blocking=True)
    assert result.conflicts == [MEM], result


def test_conflict_listed_and_merged_in_the_browser_view(client_as, synced):
    s = synced()
    _conflict(s)
    c = client_as("curator")
    page = _html(c.get("/sync/"))
    assert f'href="/sync/conflict/{MEM}"' in page and "Publishing is paused" in page
    assert 'class="sync-badge sync-conflict"' in page
    view = c.get(f"/sync/conflict/{MEM}")
    assert view.status_code == 200
    html = _html(view)
    # base, ours and theirs, and a merge with markers to start from
    assert "deploys on Fridays" in html and "deploys on Tuesdays" in html
    assert "deploys on Mondays" in html
    assert "&lt;&lt;&lt;&lt;&lt;&lt;&lt; this instance" in html
    assert "&gt;&gt;&gt;&gt;&gt;&gt;&gt; the remote" in html
    theirs = re.search(r'name="theirs" value="([0-9a-f]{40})"', html).group(1)
    expect = re.search(r'name="expect" value="([0-9a-f]{64})"', html).group(1)
    # markers are refused unless confirmed; nothing is saved
    marked = re.search(r'<textarea id="editor-text"[^>]*>\n(.*?)</textarea>', html, re.S).group(1)
    r = c.post(f"/sync/conflict/{MEM}", {"text": marked.replace("&lt;", "<").replace(
        "&gt;", ">"), "theirs": theirs, "expect": expect, "message": ""})
    assert r.status_code == 400 and "still contains conflict markers" in _html(r)
    assert s.syncer.conflict(MEM) is not None
    merged = "# Native bot\n\n- deploys on Mondays and Tuesdays\n- the staging host is blue\n"
    r = c.post(f"/sync/conflict/{MEM}", {"text": merged.replace("\n", "\r\n"),
                                          "theirs": theirs, "expect": expect,
                                          "message": "merge the deploy days"})
    assert r.status_code == 302 and r["Location"] == "/sync/"
    assert s.syncer.conflict(MEM) is None and s.store.read(MEM) == merged
    info = s.store.log(MEM, limit=1)[0]
    assert info.subject == "merge the deploy days" and info.actor == "user:curator"
    assert info.trailers["Resolves-Sync-Conflict"] == [theirs]
    assert "Resolved" in _html(c.get("/sync/"))
    c.post("/sync/now")
    assert s.remote_text(MEM) == merged
    s.native.pull()
    assert s.native.read(MEM) == merged
    # the conflict is gone: its view says so with a 404
    r = c.get(f"/sync/conflict/{MEM}")
    assert r.status_code == 404 and "no open sync conflict" in _html(r)


def test_resolving_against_a_stale_local_text_saves_nothing(client_as, synced):
    s = synced()
    _conflict(s)
    c = client_as("curator")
    html = _html(c.get(f"/sync/conflict/{MEM}"))
    theirs = re.search(r'name="theirs" value="([0-9a-f]{40})"', html).group(1)
    expect = re.search(r'name="expect" value="([0-9a-f]{64})"', html).group(1)
    # an agent rewrites the file meanwhile (agent writes go on during a conflict)
    agent_text = OURS + "- written during the conflict\n"
    s.store.write(MEM, agent_text, actor=Actor.agent("native-bot"), tool="reflect")
    mine = "# Native bot\n\n- deploys on Mondays\n"
    r = c.post(f"/sync/conflict/{MEM}", {"text": mine, "theirs": theirs, "expect": expect})
    assert r.status_code == 409
    html = _html(r)
    assert "changed here while you were merging" in html
    assert "written during the conflict" in html  # the current version is shown
    assert s.store.read(MEM) == agent_text and s.syncer.conflict(MEM) is not None
    # the re-shown form carries the new version: saving again works
    expect2 = re.search(r'name="expect" value="([0-9a-f]{64})"', html).group(1)
    assert expect2 != expect
    r = c.post(f"/sync/conflict/{MEM}", {"text": mine, "theirs": theirs, "expect": expect2})
    assert r.status_code == 302 and s.store.read(MEM) == mine


def test_use_the_remotes_version_from_the_merge_view(client_as, synced):
    s = synced()
    _conflict(s)
    c = client_as("curator")
    assert 'id="merge-take-theirs"' in _html(c.get(f"/sync/conflict/{MEM}"))
    r = c.post("/sync/discard", {"paths": [MEM]})
    assert r.status_code == 302
    assert s.store.read(MEM) == THEIRS and s.syncer.conflict(MEM) is None


# -- manual publishing ---------------------------------------------------------------------


def test_manual_mode_lists_states_with_diffs_publishes_and_discards(client_as, synced):
    s = synced(push="manual")
    agent = Actor.agent("ops-bot")
    s.store.write(NOTE, "# Runbook\n\nrestart the worker\n", actor=agent, tool="memory_write")
    s.store.write(MEM, BASE + "- a local line\n", actor=agent, tool="reflect")
    s.syncer.round(blocking=True)
    assert s.remote_text(NOTE) is None  # manual: the round pushed nothing
    c = client_as("curator")
    page = _html(c.get("/sync/"))
    assert "wait for a curator" in page
    assert re.search(r'sync-file-untracked">untracked</span>\s*<a class="mono" '
                     rf'href="/f/{re.escape(NOTE)}"', page)
    assert re.search(r'sync-file-modified">modified</span>', page)
    assert '<td class="code">- a local line</td>' in page  # the diff, remote -> local
    # the message is required: the page comes back with the error, nothing published
    r = c.post("/sync/publish", {"paths": [NOTE], "message": ""})
    assert r.status_code == 400 and "commit message is required" in _html(r)
    assert s.remote_text(NOTE) is None
    r = c.post("/sync/publish", {"paths": [NOTE], "message": "publish the runbook"})
    assert r.status_code == 302
    assert s.remote_text(NOTE) == "# Runbook\n\nrestart the worker\n"
    assert s.remote_text(MEM) == BASE  # not chosen: not published
    log = git(s.bare, "log", "-1", "--format=%s%n%an", "main")
    assert log.startswith("publish the runbook\ncurator")
    assert "published 1 file" in _html(c.get("/sync/"))
    # discard the other one back to the remote's version
    r = c.post("/sync/discard", {"paths": [MEM]})
    assert r.status_code == 302
    assert s.store.read(MEM) == BASE
    assert "Every file here matches the remote" in _html(c.get("/sync/"))


def test_diff_fragment_and_page(client_as, synced):
    s = synced(push="manual")
    s.store.write(MEM, BASE + "- fragment line\n", actor=Actor.agent("native-bot"),
                  tool="reflect")
    c = client_as("viewer")
    frag = c.get(f"/sync/diff/{MEM}", HTTP_HX_REQUEST="true")
    assert frag.status_code == 200 and "<html" not in _html(frag)
    assert '<td class="code">- fragment line</td>' in _html(frag)
    assert "HX-Request" in frag["Vary"]
    page = c.get(f"/sync/diff/{MEM}")
    assert "<html" in _html(page) and "- fragment line" in _html(page)


@pytest.mark.parametrize("url", ["/sync/diff/../etc/passwd", "/sync/diff/.git/config",
                                 "/sync/conflict/.git/HEAD", "/sync/diff/a//b.md"])
def test_bad_paths_are_a_clear_4xx(client_as, synced, url):
    synced()
    r = client_as("curator").get(url)
    assert 400 <= r.status_code < 500
    assert "root:" not in _html(r) and "[core]" not in _html(r)


def test_bad_forms_are_a_clear_400(client_as, synced):
    s = synced(push="manual")
    c = client_as("curator")
    before = tip(s.bare)
    r = c.post("/sync/publish", {"paths": ["../outside.md"], "message": "x"})
    assert r.status_code == 400
    r = c.post("/sync/publish", {"message": "nothing chosen"})
    assert r.status_code == 400 and "Choose the files to publish" in _html(r)
    r = c.post("/sync/discard", {})
    assert r.status_code == 400 and "Choose the files to discard" in _html(r)
    r = c.post(f"/sync/conflict/{MEM}", {"text": "x"})
    assert r.status_code == 404  # no open conflict on that file
    assert tip(s.bare) == before


# -- attribution ---------------------------------------------------------------------------


def test_activity_history_and_commit_mark_commits_from_the_remote(client_as, synced):
    s = synced()
    local = s.store.write(NOTE, "# Runbook\n", actor=Actor.agent("ops-bot"), tool="memory_write")
    s.native.reflect(THEIRS)
    native_sha = s.native.commit("native: deploys on Mondays")
    s.native.push()
    assert s.syncer.round(blocking=True).error is None
    c = client_as("viewer")
    via = re.compile(r'<li class="commit-item" id="c-([0-9a-f]{40})">.*?</li>\s*(?=<li class="'
                     r'commit-item"|</ul>)', re.S)
    feed = {m.group(1): "via remote" in m.group(0) for m in via.finditer(_html(c.get(
        "/activity/")))}
    assert feed[native_sha] is True  # kept its author and message, marked as arrived
    assert feed[local.commit or s.store.log(NOTE, limit=1)[0].sha] is False
    info = s.store.log(MEM, limit=1)[0]
    assert info.sha == native_sha and info.author == "native-bot"
    history = _html(c.get(f"/history/{MEM}"))
    assert "via remote" in history
    commit = _html(c.get(f"/commit/{native_sha}/"))
    assert 'class="badge badge-remote"' in commit
    assert 'class="badge badge-remote"' not in _html(c.get(f"/history/{NOTE}"))
