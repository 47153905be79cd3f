"""Starting with a remote: clone, refuse unrelated history, push into an empty remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryui.store import Actor, Store
from memoryui.store.sync import RemoteConfig, Syncer, SyncError, bootstrap
from tests.catalogued import catalogued
from tests.sync.helpers import at, reflect, remember
from tests.sync_fixtures import fsck_clean, git, is_ancestor, make_bare, tip


def seeded(tmp_path: Path, native, url: str):
    host = native(url)
    host.reflect("# Memory\n\n- from the remote\n")
    host.remember("remote entry", at(9, 0))
    host.commit()
    host.push()
    return host


def test_an_empty_or_missing_workspace_becomes_a_clone(tmp_path, native, daemon, bare) -> None:
    url = daemon.url("memory.git")
    host = seeded(tmp_path, native, url)
    config = RemoteConfig(url)
    missing = tmp_path / "new" / "ws"
    assert bootstrap(missing, config) == "cloned"
    (tmp_path / "empty").mkdir()
    Store(tmp_path / "empty").close()  # git init-ed by memoryui, still no commit, no file
    assert bootstrap(tmp_path / "empty", config) == "cloned"
    for root in (missing, tmp_path / "empty"):
        store = Store(root)
        assert store.head() == host.head()
        assert sorted(catalogued(store)) == sorted(git(host.path, "ls-files").split())
        assert store.pending() == []
        assert Syncer(store, config).arrived_from_remote([host.head()]) == {host.head()}
        assert "url =" not in (root / ".git" / "config").read_text()  # no remote stored
        store.close()
        fsck_clean(root)

    daemon.stop()  # once bootstrapped, starting again needs no network
    assert bootstrap(missing, config) == "ready"


def test_unrelated_history_is_refused_with_the_two_ways_out(tmp_path, native, file_url) -> None:
    seeded(tmp_path, native, file_url)
    mine = Store(tmp_path / "mine")
    reflect(mine, "ops", "# Memory\n\n- a separate life\n")
    mine.close()
    with pytest.raises(SyncError) as err:
        bootstrap(tmp_path / "mine", RemoteConfig(file_url))
    text = str(err.value)
    assert "no commit in common" in text
    assert "MEMORYUI_WORKSPACE at an empty folder" in text
    assert "push this workspace to an empty remote" in text
    assert "unset MEMORYUI_REMOTE" in text

    loose = tmp_path / "loose"
    (loose / "agents" / "x" / "memory").mkdir(parents=True)
    (loose / "agents" / "x" / "memory" / "MEMORY.md").write_text("untracked\n")
    with pytest.raises(SyncError, match="files but no commits"):
        bootstrap(loose, RemoteConfig(file_url))
    assert (loose / "agents" / "x" / "memory" / "MEMORY.md").read_text() == "untracked\n"


def test_an_empty_remote_receives_the_workspace(tmp_path, file_url, bare) -> None:
    mine = Store(tmp_path / "mine")
    reflect(mine, "ops", "# Memory\n\n- the workspace's own history\n")
    head = mine.head()
    mine.close()
    assert bootstrap(tmp_path / "mine", RemoteConfig(file_url)) == "pushed"
    assert tip(bare) == head
    fsck_clean(bare)


def test_instances_that_all_start_from_an_empty_remote_converge(tmp_path, daemon) -> None:
    make_bare(tmp_path / "srv" / "fresh.git")
    with type(daemon)(tmp_path / "srv") as d:
        url = d.url("fresh.git")
        stores, syncers = [], []
        for name in ("a", "b"):  # both bootstrap before anything exists anywhere
            assert bootstrap(tmp_path / name, RemoteConfig(url)) == "ready"
            s = Store(tmp_path / name)
            stores.append(s)
            syncers.append(Syncer(s, RemoteConfig(url)))
        # Both write (two root commits), then sync: no refusal, both histories kept.
        pa = remember(stores[0], "ops", "from a", at(9, 0))
        pb = remember(stores[1], "ops", "from b", at(9, 1))
        roots = [s.head() for s in stores]
        assert syncers[0].round(blocking=True).pushed
        r = syncers[1].round(blocking=True)
        assert (r.error, r.pushed) == (None, True)
        assert syncers[0].round(blocking=True).error is None
        assert stores[0].read(pa) == stores[1].read(pb)
        assert [e for e in stores[0].read(pa).split("\n") if e.startswith("from")] == \
            ["from a", "from b"]
        final = tip(tmp_path / "srv" / "fresh.git")
        assert all(is_ancestor(tmp_path / "srv" / "fresh.git", r, final) for r in roots)
        for s in stores:
            s.close()
            fsck_clean(s.root)
        fsck_clean(tmp_path / "srv" / "fresh.git")


def test_a_round_vets_a_workspace_that_started_while_the_remote_was_down(
        tmp_path, native, file_url) -> None:
    seeded(tmp_path, native, file_url)
    mine = Store(tmp_path / "mine")
    mine.write("x.md", "unrelated\n", actor=Actor.user("bob"), tool="edit")
    r = Syncer(mine, RemoteConfig(file_url)).round(blocking=True)
    assert r.error and "no commit in common" in r.error and not r.pushed
    mine.close()
