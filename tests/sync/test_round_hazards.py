"""Sync rounds lose nothing to races, outages or outside edits, and keep unsafe trees out."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from memoryui.store.entries import parse_daily
from tests.sync.helpers import DAY, at, remember
from tests.sync.remote import rivals_push_first, show
from tests.sync_fixtures import fsck_clean, git, is_ancestor, tip


def test_push_race_restarts_the_round_and_loses_nothing(instance, native, daemon, bare) -> None:
    url = daemon.url("memory.git")
    a = instance("a", url)
    host = native(url)
    daily = remember(a.store, "ops", "local entry", at(11, 0))
    raced = rivals_push_first(a, host, 1)  # another clone pushes between fetch and push
    r = a.round(blocking=True)
    assert (r.pushed, r.attempts, r.error) == (True, 2, None)
    final = tip(bare)
    assert is_ancestor(bare, raced[0], final)
    assert show(bare, daily) == a.store.read(daily)
    assert "pushed in between" in show(bare, host.daily_path(DAY))
    fsck_clean(bare)


def test_unreachable_remote_fails_the_round_writes_go_on_and_push_later(
        instance, daemon, bare) -> None:
    url = daemon.url("memory.git")
    a = instance("a", url)
    remember(a.store, "ops", "before the outage", at(8, 0))
    assert a.round(blocking=True).pushed
    daemon.stop()

    daily = remember(a.store, "ops", "written while the remote is down", at(8, 5))
    assert "written while the remote is down" in a.store.read(daily)
    r = a.round(blocking=True)
    assert r.error and "git fetch" in r.error and not r.pushed
    st = a.status()
    assert (st.state, st.last_error, st.ahead) == ("failing", r.error, 1)
    assert "written while" not in show(bare, daily)

    daemon.start()
    r = a.round(blocking=True)
    assert (r.error, r.pushed) == (None, True)
    st = a.status()
    assert (st.state, st.last_error, st.ahead) == ("synced", None, 0)
    assert "written while the remote is down" in show(bare, daily)
    fsck_clean(bare)


def test_one_round_at_a_time_across_processes(instance, file_url) -> None:
    a = instance("a", file_url)
    lock = a.store.git.state_dir / "sync.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys; f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX); "
         "print('held', flush=True); sys.stdin.read()", str(lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = a.round()
        assert not r.ran and "another round" in r.summary()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert a.round().ran


def test_agent_writes_during_rounds_are_never_lost(instance, native, file_url, bare) -> None:
    a = instance("a", file_url)
    host = native(file_url)
    written: list[str] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def agent() -> None:
        try:
            for i in range(40):
                remember(a.store, "ops", f"entry number {i}", at(12, i))
                written.append(f"entry number {i}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            done.set()

    t = threading.Thread(target=agent)
    t.start()
    n = 0
    while not done.is_set():  # rounds race the writer; the host keeps the remote moving
        n += 1
        host.remember(f"host entry {n}", at(13, n % 60))
        host.commit()
        host.push()
        assert a.round(blocking=True).error is None
    t.join()
    assert not errors
    r = a.round(blocking=True)
    assert r.error is None
    path = a.store.path_for("daily", "ops", DAY.isoformat())
    bodies = [e.body for e in parse_daily(a.store.read(path))]
    assert bodies == written  # every write, once, in order
    remote = [e.body for e in parse_daily(show(bare, path))]
    assert remote == written
    host.pull()
    host_bodies = [e.body for e in parse_daily(host.read(host.daily_path(DAY)))]
    assert host_bodies == [f"host entry {i}" for i in range(1, n + 1)]
    assert a.store.pending() == []
    fsck_clean(bare)
    fsck_clean(a.store.root)


def test_outside_changes_in_the_clone_survive_integration(instance, native, file_url) -> None:
    host = native(file_url)
    mem = host.reflect("# Memory\n\n- a\n- b\n- c\n- d\n- e\n")
    host.commit()
    host.push()
    a = instance("a", file_url)
    # Someone edits the clone's file directly (not through memoryui): a pending change.
    (a.store.root / mem).write_text("# Memory\n\n- a\n- b\n- c\n- d\n- e (edited here)\n")
    host.reflect("# Memory\n\n- a (host)\n- b\n- c\n- d\n- e\n")
    host.commit()
    host.push()
    assert a.round(blocking=True).error is None
    assert a.store.read(mem) == "# Memory\n\n- a (host)\n- b\n- c\n- d\n- e (edited here)\n"
    assert [(p.path, p.status) for p in a.store.pending()] == [(mem, "modified")]
    assert a.store.file_at(mem, "HEAD") == "# Memory\n\n- a (host)\n- b\n- c\n- d\n- e\n"
    fsck_clean(a.store.root)


def test_links_and_unsafe_paths_from_the_remote_never_reach_outside(instance, native, file_url,
                                                                    tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    a = instance("a", file_url)
    host = native(file_url)
    mem = host.path / "agents" / "native-bot" / "memory"
    (mem / "notes").mkdir(parents=True)
    os.symlink(outside, mem / "linked")
    os.symlink("/etc/passwd", mem / "notes" / "passwd.md")
    ok = host.reflect("# Memory\n\n- fine\n")
    host.commit()
    host.push()
    assert a.round(blocking=True).error is None
    root = a.store.root / "agents" / "native-bot" / "memory"
    # Links are left out of the checkout (refuse.py), recorded for the Sync page.
    assert not os.path.lexists(root / "linked")
    assert not os.path.lexists(root / "notes" / "passwd.md")
    assert a.store.read(ok) == "# Memory\n\n- fine\n"
    assert a.store.read("agents/native-bot/memory/notes/passwd.md") is None

    # The remote turns the link into a real folder: the link goes, the folder is made here.
    (mem / "linked").unlink()
    host.write("agents/native-bot/memory/linked/note.md", "in a real folder\n")
    host.commit()
    host.push()
    assert a.round(blocking=True).error is None
    assert not (root / "linked").is_symlink()
    assert (root / "linked" / "note.md").read_text() == "in a real folder\n"
    assert list(outside.iterdir()) == []

    # A hand-made tree naming `.git` (git itself refuses to create one) is never written.
    blob = git(host.path, "hash-object", "-w", "--stdin", input="#!/bin/sh\necho pwned\n")
    hooks = _raw_tree(host.path, [("100755", "post-checkout", blob.strip())])
    dotgit = _raw_tree(host.path, [("40000", "hooks", hooks)])
    entries = []
    for line in git(host.path, "ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _kind, sha = meta.split()
        entries.append((mode.lstrip("0"), name, sha))
    tree = _raw_tree(host.path, [*entries, ("40000", ".git", dotgit)])
    evil = git(host.path, "commit-tree", tree, "-p", "HEAD", "-m", "evil").strip()
    git(host.path, "push", "--quiet", "origin", f"{evil}:refs/heads/main")
    r = a.round(blocking=True)
    assert r.error is None and is_ancestor(a.store.root, evil, a.store.head())
    assert not (a.store.root / ".git" / "hooks" / "post-checkout").exists()


def _raw_tree(cwd: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object written byte for byte, bypassing git's own checks on names."""
    data = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                    for mode, name, sha in sorted(entries, key=lambda e: e[1]))
    proc = subprocess.run(["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
                          cwd=cwd, input=data, capture_output=True, check=True)
    return proc.stdout.decode().strip()
