"""The tree model's caches stay exact: after writes, edits made outside memoryui (seen by the
watcher or by `git status`), commits made by hand with git, restarts, and on repositories
memoryui did not create. Each test compares with what is really on disk (the walker)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryui.store import Actor, Store, lastmap, listing, tree, walk

MEM = "agents/ops-bot/memory/MEMORY.md"
DAY = "agents/ops-bot/memory/daily/2026-11-20.md"
BOT = Actor.agent("ops-bot")


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Hand", "GIT_AUTHOR_EMAIL": "hand@example.org",
           "GIT_COMMITTER_NAME": "Hand", "GIT_COMMITTER_EMAIL": "hand@example.org"}
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True, env=env).stdout


def on_disk(root: Path) -> dict[str, int]:
    return {e.path: e.size for e in walk.walk(root)}


def shown(store: Store) -> dict[str, int]:
    return {p: i.size for p, i in store.tree().items()}


def until(store: Store, cond: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait for a condition, asked again at each change the tree model takes in or each
    background pass it ends (a watcher's report, a status check): never a fixed sleep."""
    if not store.tree_model.wait_for(cond, timeout):
        raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def seeded(store: Store) -> Store:
    store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
    store.write(DAY, "- 09:00 deployed\n", actor=BOT, tool="remember")
    store.write("memory/world/deploys.md", "# Deploys\n", actor=Actor.user("alice"), tool="ui")
    return store


def test_listing_from_the_index_equals_the_walk_on_a_tricky_tree(seeded: Store,
                                                                tmp_path: Path) -> None:
    root = seeded.root
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("never listed\n")
    (root / "agents/ops-bot/memory/notes").mkdir(parents=True)
    (root / "agents/ops-bot/memory/notes/native.md").write_text("untracked\n")  # untracked
    (root / MEM).write_text("# Memory\n\nchanged natively, longer\n")  # modified
    (root / "memory/world/deploys.md").unlink()  # deleted
    os.symlink(outside / "secret.md", root / "agents/ops-bot/memory/notes/link.md")
    os.symlink(outside, root / "agents/linked")  # a linked folder
    (root / ".hidden.md").write_text("hidden\n")
    # A tracked file whose folder becomes a link: the walker never goes through it.
    seeded.write("agents/x-bot/memory/MEMORY.md", "# X\n", actor=Actor.agent("x-bot"),
                 tool="reflect")
    shutil.rmtree(root / "agents/x-bot")
    os.symlink(outside, root / "agents/x-bot")

    listed = {p: e[0] for p, e in listing.listing(root, root / ".git").items()}
    assert listed == on_disk(root)
    assert "agents/ops-bot/memory/notes/native.md" in listed
    assert "memory/world/deploys.md" not in listed
    assert not any("link" in p or "linked" in p or "x-bot" in p for p in listed)

    git(root, "update-index", "--index-version", "4")  # what feature.manyFiles writes
    assert {p: e[0] for p, e in listing.listing(root, root / ".git").items()} == listed


def test_a_write_shows_at_once_without_a_walk(seeded: Store) -> None:
    before = seeded.tree()
    version = seeded.tree_model.version
    seeded.write("agents/new-bot/memory/daily/2026-11-21.md", "- hi\n",
                 actor=Actor.agent("new-bot"), tool="remember")
    seeded.delete(DAY, actor=BOT, tool="ui")
    after = seeded.tree()
    assert after is not before
    assert shown(seeded) == on_disk(seeded.root)
    new = after["agents/new-bot/memory/daily/2026-11-21.md"]
    assert new.last is not None and new.last["actor"] == "agent:new-bot"
    # What a consumer (the overview) patches: exactly the two paths, not the whole tree.
    assert seeded.tree_model.changed_since(version) == {
        "agents/new-bot/memory/daily/2026-11-21.md", DAY}
    assert seeded.tree_model.changed_since(0) is None  # older than the listing: rebuild


def test_outside_edits_are_seen_by_the_watcher(tmp_path: Path) -> None:
    store = Store(tmp_path / "ws", watch=True)
    try:
        store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
        assert MEM in store.tree()
        until(store, lambda: store.tree_model.watcher is not None
              and store.tree_model.watcher.alive,
              "the watcher")
        root = store.root
        (root / "agents/ops-bot/memory/notes").mkdir(parents=True)
        (root / "agents/ops-bot/memory/notes/a.md").write_text("native\n")
        until(store, lambda: "agents/ops-bot/memory/notes/a.md" in store.tree(), "a new file")
        (root / MEM).write_text("# Memory\n\nedited in vim\n")
        until(store, lambda: store.tree()[MEM].size == len("# Memory\n\nedited in vim\n"),
              "an edit")
        # A folder moved in at once (one event for the folder) and one removed whole.
        staging = tmp_path / "staging"
        (staging / "memory/daily").mkdir(parents=True)
        (staging / "memory/daily/2026-11-01.md").write_text("- moved in\n")
        os.rename(staging, root / "agents/new-bot")
        until(store, lambda: "agents/new-bot/memory/daily/2026-11-01.md" in store.tree(),
              "a moved-in folder")
        shutil.rmtree(root / "agents/ops-bot/memory/notes")
        until(store, lambda: "agents/ops-bot/memory/notes/a.md" not in store.tree(),
              "a removed folder")
        assert shown(store) == on_disk(root)
    finally:
        store.close()
    assert not store.tree_model.watcher.alive


def test_a_large_tree_does_not_wait_for_its_watches_and_misses_nothing_meanwhile(
        tmp_path: Path, monkeypatch) -> None:
    """At 200k files the watches take most of a second: the first page answers without
    them, and what changed before they were set up is found by one `git status` after."""
    from memoryui.store import watch

    monkeypatch.setattr(tree, "SYNC_HISTORY_BELOW", 0)  # listed from the index: "large"
    release = threading.Event()
    real_run = watch.Watcher._run

    def slow_run(self) -> None:
        release.wait(60)  # the watches are still being set up
        real_run(self)

    monkeypatch.setattr(watch.Watcher, "_run", slow_run)
    store = Store(tmp_path / "ws", watch=True)
    try:
        store.write(MEM, "# Memory\n", actor=BOT, tool="reflect")
        assert MEM in store.tree()  # answered while the watcher is not ready
        assert not store.tree_model.watcher._ready.is_set()
        until(store, lambda: not store.tree_model.checking, "the first status check")
        (store.root / "memory/world/early.md").parent.mkdir(parents=True, exist_ok=True)
        (store.root / "memory/world/early.md").write_text("# Early\n")  # unseen so far
        release.set()
        until(store, lambda: "memory/world/early.md" in store.tree(),
              "the edit made meanwhile")
        (store.root / "memory/world/later.md").write_text("# Later\n")
        until(store, lambda: "memory/world/later.md" in store.tree(),
              "an edit seen by the watcher")
        assert shown(store) == on_disk(store.root)
    finally:
        release.set()
        store.close()


def test_without_a_watcher_git_status_finds_outside_edits(seeded: Store,
                                                         monkeypatch) -> None:
    seeded.tree()
    until(seeded, lambda: not seeded.tree_model.checking, "the first status check")
    (seeded.root / "memory/world/native.md").write_text("# Native\n")
    seeded.tree_model.check_now()
    assert "memory/world/native.md" in seeded.tree()
    # And on its own once TREE_TTL has passed since the last check, when a page asks.
    (seeded.root / "memory/world/later.md").write_text("# Later\n")
    monkeypatch.setattr(tree, "TREE_TTL", 0.0)
    seeded.tree()
    until(seeded, lambda: "memory/world/later.md" in seeded.tree(), "the periodic status check")
    assert shown(seeded) == on_disk(seeded.root)


def test_commits_made_by_hand_update_files_and_last_changes(seeded: Store) -> None:
    seeded.tree()
    (seeded.root / "memory/world/hand.md").write_text("# By hand\n")
    git(seeded.root, "add", "memory/world/hand.md")
    git(seeded.root, "commit", "-q", "-m", "hand-made topic")
    git(seeded.root, "rm", "-q", DAY)
    git(seeded.root, "commit", "-q", "-m", "hand removes a day")
    t = seeded.tree()
    assert "memory/world/hand.md" in t and DAY not in t
    assert t["memory/world/hand.md"].last["actor"] == "git:Hand"
    assert t["memory/world/hand.md"].last["subject"] == "hand-made topic"


def test_a_restart_catches_up_from_the_saved_map(seeded: Store) -> None:
    root = seeded.root
    seeded.tree()
    seeded.tree_model._save(force=True)
    seeded.close()
    (root / "memory/world/while-down.md").write_text("# While down\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "while memoryui was stopped")
    (root / "memory/world/uncommitted.md").write_text("# Not committed\n")

    again = Store(root)
    t = again.tree()
    assert t["memory/world/while-down.md"].last["subject"] == "while memoryui was stopped"
    assert t[MEM].last["actor"] == "agent:ops-bot"  # from the saved map
    until(again, lambda: not again.tree_model.checking, "the status check after the start")
    assert "memory/world/uncommitted.md" in again.tree()
    assert shown(again) == on_disk(root)


def test_a_large_repository_reads_its_history_in_the_background(seeded: Store,
                                                                 monkeypatch) -> None:
    root = seeded.root
    (root / ".git/memoryui" / lastmap.FILE).unlink(missing_ok=True)
    monkeypatch.setattr(tree, "SYNC_HISTORY_BELOW", 0)
    again = Store(root)
    t = again.tree()
    assert set(t) == set(on_disk(root))  # the files are there at once
    again.tree_model.wait_for_history(60)
    assert not again.tree_model.history_pending
    assert again.tree()[MEM].last["actor"] == "agent:ops-bot"


def test_the_workers_of_a_server_read_the_whole_history_once(seeded: Store,
                                                             monkeypatch) -> None:
    """Two workers starting on a repository seen for the first time: one reads every
    commit, the other waits for it and loads the map it saved (half the CPU at a start)."""
    root = seeded.root
    (root / ".git/memoryui" / lastmap.FILE).unlink(missing_ok=True)
    monkeypatch.setattr(tree, "SYNC_HISTORY_BELOW", 0)
    full_reads = []
    both_started = threading.Event()
    real = tree.history.last_changes

    def counting(root_, since, head):
        if since is None:
            full_reads.append(head)
            both_started.wait(60)  # the first read lasts until the second worker started
        return real(root_, since, head)

    monkeypatch.setattr(tree.history, "last_changes", counting)
    listings = []
    real_listing = tree.listing.indexed
    monkeypatch.setattr(tree.listing, "indexed",
                        lambda *a: listings.append(a) or real_listing(*a))
    workers = [Store(root), Store(root)]
    for w in workers:
        w.tree()
    assert all(w.tree_model.history_pending for w in workers)
    both_started.set()
    for w in workers:
        w.tree_model.wait_for_history(60)
        assert w.tree()[MEM].last["actor"] == "agent:ops-bot"
        assert shown(w) == on_disk(root)
    assert len(full_reads) == 1
    # The worker that loaded the map keeps its listing (listing 200k files again while
    # the first was still held left it 85-140 MB larger)
    assert len(listings) == 2


def test_a_repository_memoryui_did_not_create_gets_a_commit_graph(tmp_path: Path) -> None:
    root = tmp_path / "imported"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "memory/world").mkdir(parents=True)
    for i in range(3):
        (root / "memory/world" / f"t{i}.md").write_text(f"# Topic {i}\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"topic {i}")
    assert not (root / ".git/objects/info/commit-graph").exists()
    store = Store(root)
    assert git(root, "config", "core.untrackedCache").strip() == "true"
    graph = root / ".git/objects/info"
    assert store.git.maintenance is not None  # started in the background on first open
    assert store.git.maintenance.wait(120) == 0
    assert (graph / "commit-graph").exists() or \
        (graph / "commit-graphs/commit-graph-chain").exists()
    assert len(store.tree()) == 3


def test_a_write_never_waits_for_a_page_reading_the_tree(seeded: Store) -> None:
    """Writers hold the workspace's write lock while they mark their path changed: that
    must not wait for a page listing the tree or reading history in this process (it made
    every writer of every worker wait behind one `git log`)."""
    held, release = threading.Event(), threading.Event()

    def page() -> None:
        with seeded.tree_model._lock:  # as a listing or a catch-up holds it
            held.set()
            release.wait(60)

    reader = threading.Thread(target=page)
    reader.start()
    assert held.wait(60)
    writer = threading.Thread(target=seeded.write, args=(MEM, "# Memory\n\n- new\n"),
                              kwargs={"actor": BOT, "tool": "reflect"})
    writer.start()
    writer.join(60)
    try:
        assert not writer.is_alive()
        assert seeded.read(MEM) == "# Memory\n\n- new\n"
    finally:
        release.set()
        reader.join(60)
    assert seeded.tree()[MEM].size == len("# Memory\n\n- new\n")


def test_a_path_reported_again_unchanged_leaves_the_tree_as_it_is(seeded: Store) -> None:
    """The watcher's echo of a write this process already took in costs no copy of the
    tree (200k entries at huge) and no new version; a real change after it still shows."""
    model = seeded.tree_model
    seeded.append(DAY, "- 10:00 paged\n", actor=BOT, tool="remember")
    before, version = seeded.tree(), model.version
    model.touch(DAY, MEM)  # reported again, nothing different on disk
    assert seeded.tree() is before and model.version == version
    (seeded.root / DAY).write_text("edited outside\n")
    model.touch(DAY)
    after = seeded.tree()
    assert after is not before and after[DAY].size == len("edited outside\n")
    assert shown(seeded) == on_disk(seeded.root)
