"""What a search looks at before it answers: the journaled writes and the files of the
branch's latest moves (its reflog; its latest commits where it keeps none), newest first
and bounded, and of those the ones the index is behind on."""

from __future__ import annotations

import json
import shutil
import urllib.parse
import uuid
from pathlib import Path

import pytest

from memoryui.search import SearchIndex, recent
from memoryui.search.documents import stamp
from memoryui.store import Store
from memoryui.store.sync import RemoteConfig, Syncer, bootstrap
from tests.api.realserver import RealServer
from tests.search.helpers import BOT, git_as, note, paths
from tests.sync_fixtures import NativeHost, make_bare

SEARCHES = 20


@pytest.mark.parametrize("reflog", [True, False], ids=["reflog", "commits"])
def test_the_journal_and_the_latest_commits_are_looked_at_not_older_ones(
        tmp_path: Path, reflog: bool) -> None:
    store = Store(tmp_path / "ws", commit_delay=30)
    try:
        old = note(store, "ops-bot", "old", "from last week\n")
        store.flush()
        git_as(store.root, "commit", "--allow-empty", "-qm", "a week ago",
               when=1_700_000_000)  # HEAD moved a week ago (git dates the move as the commit)
        if not reflog:  # a repository that keeps none: its commits are walked
            git_as(store.root, "config", "core.logAllRefUpdates", "false")
            shutil.rmtree(store.git.git_dir / "logs")
        fresh = note(store, "ops-bot", "fresh", "just now\n")
        assert recent.RecentWrites().written(store, 30.0) == {fresh}  # journaled
        store.flush()
        assert recent.RecentWrites().written(store, 30.0) == {fresh}  # committed a moment ago
        assert recent.RecentWrites().written(store, -1.0) == set()  # the window has passed
        assert old not in recent.RecentWrites().written(store, 30.0)
    finally:
        store.close()


def test_moves_are_read_from_the_reflog_s_end_newest_first(tmp_path: Path, monkeypatch
                                                          ) -> None:
    monkeypatch.setattr(recent, "REFLOG_TAIL", 300)  # two lines and a half
    log = tmp_path / "main"
    now = 1_800_000_000
    log.write_text("".join(f"{i:040x} {i + 1:040x} memoryui <m@example.org> {now + i} +0000\t"
                           f"memoryui commit\n" for i in range(100)))
    newest = [(now + i, f"{i:040x}", f"{i + 1:040x}") for i in (99, 98)]
    assert recent.last_moves(log) == newest  # cut to the tail: the line cut in two dropped
    monkeypatch.setattr(recent, "MAX_MOVES", 1)
    assert recent.last_moves(log) == newest[:1]
    assert recent.last_moves(tmp_path / "none") is None


def test_a_commit_of_many_files_is_left_to_the_catch_up(store: Store, monkeypatch) -> None:
    monkeypatch.setattr(recent, "MAX_FILES", 5)
    for i in range(8):
        (store.root / "world").mkdir(exist_ok=True)
        (store.root / "world" / f"topic-{i}.md").write_text(f"topic {i}\n")
    git_as(store.root, "add", "-A")
    git_as(store.root, "commit", "-qm", "a sync brought eight topics")
    assert len(recent.RecentWrites().written(store, 30.0)) == 5


def test_only_files_whose_index_row_is_not_the_disk_are_behind(store: Store) -> None:
    same = note(store, "ops-bot", "same", "indexed as it is\n")
    changed = note(store, "ops-bot", "changed", "indexed, then appended to\n")
    gone = "agents/ops-bot/memory/notes/gone.md"
    st = (store.root / same).stat()
    held = {same: (st.st_size, stamp(st.st_mtime)), changed: (1, 1), gone: (5, 5)}
    store.write(changed, "indexed, then appended to\nmore\n", actor=BOT, tool="test")
    never = "agents/ops-bot/memory/notes/never.md"
    assert recent.behind(store.root, [same, changed, gone, never], held) == [changed, gone]


def test_an_agent_finds_what_it_just_remembered_whichever_worker_answers(tmp_path: Path
                                                                          ) -> None:
    """Through the real server, two workers beside the committer, each call on a fresh
    connection (so either worker may answer): the search right after each `remember`, and a
    busy log's too, finds the entry, whether or not the committer has indexed it yet."""
    server = RealServer(tmp_path, workers=2)
    server.migrate()
    token = server.token("alpha")
    with server:
        server.start()
        for i in range(SEARCHES):
            word = f"zq{uuid.uuid4().hex[:12]}"
            status, body = server.call_tool(token, "alpha", "remember",
                                            {"content": f"{'background ' * 40}{i} {word}"})
            assert status == 200, body
            found = server.request("GET", f"/api/v1/search?{urllib.parse.urlencode({'q': word})}",
                                   headers={"Authorization": f"Bearer {token}"})
            assert found[0] == 200, found
            assert [r["kind"] for r in json.loads(found[1])["results"]] == ["daily"], (i, word)


def test_a_search_finds_what_a_sync_brought_before_anyone_indexed_it(tmp_path: Path) -> None:
    """A sync round (the committer's) fast-forwards the branch to a host's commits made long
    ago, or merges them: the search in a worker finds their files at once, though no
    process has indexed them and their commits are older than the window."""
    url = f"file://{make_bare(tmp_path / 'memory.git')}"
    host = NativeHost(url, tmp_path / "host", "native-bot")
    bootstrap(tmp_path / "ws", RemoteConfig(url))
    committer = Store(tmp_path / "ws")
    syncer = Syncer(committer, RemoteConfig(url))
    worker = Store(tmp_path / "ws")
    index = SearchIndex(tmp_path / "search.sqlite3", catch_up_interval=0, background=False)
    index.attach(worker)
    try:
        assert syncer.round(blocking=True).error is None
        index.rebuild()  # the index is current before the arrivals

        first = host.remember("the kestrel cache holds five minutes")
        git_as(host.path, "add", "-A")
        git_as(host.path, "commit", "-qm", "remembered last week", when=1_700_000_000)
        host.push()
        assert syncer.round(blocking=True).integrated == 1
        assert committer.head() == host.head()  # a fast-forward to a week-old commit
        assert paths(index.search("kestrel", catch_up=False)) == [first]

        note(committer, "ops-bot", "local", "written here meanwhile\n")
        committer.flush()
        reflected = host.reflect("# Memory\n\n- the heron queue drains at night\n")
        git_as(host.path, "add", "-A")
        git_as(host.path, "commit", "-qm", "reflected last week", when=1_700_000_100)
        host.push()
        assert syncer.round(blocking=True).integrated == 1
        assert len(committer.git.repo[committer.head()].parent_ids) == 2  # a merge
        assert paths(index.search("heron", catch_up=False)) == [reflected]
    finally:
        index.close()
        worker.close()
        committer.close()
