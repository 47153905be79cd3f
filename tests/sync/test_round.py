"""Sync rounds against a real remote (file:// and git daemon) and a native agent host."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memoryui.store.entries import parse_daily
from memoryui.store.sync import ConflictChanged, via_remote
from tests.catalogued import catalogued
from tests.sync.conftest import ALICE
from tests.sync.helpers import DAY, at, reflect, remember
from tests.sync_fixtures import fsck_clean, git, is_ancestor, tip


def show(bare: Path, path: str) -> str | None:
    out = subprocess.run(["git", "show", f"main:{path}"], cwd=bare, capture_output=True,
                         text=True)
    return out.stdout if out.returncode == 0 else None


def test_fast_forward_takes_remote_commits_with_their_authors(instance, native, file_url,
                                                              bare) -> None:
    a = instance("a", file_url)
    host = native(file_url)
    daily = host.remember("native host learned the cache TTL", at(9, 0))
    mem = host.reflect("# Memory\n\n- the cache TTL is 5 minutes\n")
    native_head = host.commit("native-bot: remember and reflect")
    host.push()
    seen: list[str] = []
    a.store.listeners.append(lambda paths, _when: seen.extend(paths))
    assert daily not in catalogued(a.store)

    r = a.round(blocking=True)
    assert (r.error, r.integrated, r.pushed) == (None, 1, False)
    assert a.store.head() == native_head  # a fast-forward: no merge commit
    assert a.store.read(daily) == host.read(daily)
    assert {daily, mem} <= set(catalogued(a.store))  # the pages' read model has them
    assert {daily, mem} <= set(seen)  # listeners (the search index) were told
    assert catalogued(a.store)[mem].last["author"] == "native-bot"
    assert a.store.pending() == []

    # Arrived-from-remote marks exactly the fetched commits, not what is made here.
    reflect(a.store, "ops", "# Memory\n\n- local fact\n")
    assert a.round(blocking=True).pushed
    local = a.store.head()
    assert a.arrived_from_remote([native_head, local]) == {native_head}
    assert via_remote(a.store, [native_head, local]) == {native_head}
    assert tip(bare) == local
    assert a.round(blocking=True).summary() == "sync: up to date"
    fsck_clean(bare)
    fsck_clean(a.store.root)


def test_the_committer_tells_its_listeners_of_what_a_round_merged_once(instance, native,
                                                                       file_url) -> None:
    """In the committer process a round tells the listeners (its search index) of the paths
    it brought in; the next tick, following the branch for commits others made, does not
    tell them again (each telling re-reads and re-indexes the files)."""
    a = instance("a", file_url)
    assert a.store.host_commits(wait=False)
    a.store.committer.stop.set()  # its ticks are made by hand here
    reflect(a.store, "ops", "# Memory\n\n- local fact\n")
    a.store.flush()
    a.store.committer._tick()  # the first look at the branch
    host = native(file_url)
    daily = host.remember("native host learned the cache TTL", at(9, 0))
    host.commit("native-bot: remember")
    host.push()
    told: list[list[str]] = []
    a.store.listeners.append(lambda paths, _when: told.append(list(paths)))
    assert a.round(blocking=True).integrated == 1
    assert [daily] in told
    heard = len(told)
    a.store.committer._tick()
    assert len(told) == heard, told


def test_housekeeping_holding_the_commit_graph_never_fails_a_round(instance, native,
                                                                   file_url) -> None:
    """The background commit-graph write and a fetch used to race for one lock."""
    a = instance("a", file_url)
    host = native(file_url)
    host.remember("native host learned the cache TTL", at(9, 0))
    arrived = host.commit("native-bot: remember")
    host.push()
    chain = a.store.git.git_dir / "objects" / "info" / "commit-graphs"
    chain.mkdir(parents=True, exist_ok=True)
    lock = chain / "commit-graph-chain.lock"
    lock.write_text("")  # as `git commit-graph write --split` holds it while it runs
    try:
        r = a.round(blocking=True)
    finally:
        lock.unlink()
    assert (r.error, r.integrated) == (None, 1)
    assert a.store.head() == arrived


def test_a_round_that_finds_the_index_locked_leaves_git_status_clean_after_the_next_tick(
        instance, native, file_url) -> None:
    """Another git process (a `git status` refreshing the index) may hold `index.lock` as a
    round stages what it brought: the next commit tick stages it, so `git status` never keeps
    showing the remote's files as changed (and a person's `git commit` never reverts them)."""
    a = instance("a", file_url)
    host = native(file_url)
    mem = host.reflect("# Memory\n\n- the cache TTL is 5 minutes\n")
    arrived = host.commit("native-bot: reflect")
    host.push()
    lock = a.store.git.git_dir / "index.lock"
    lock.write_text("")
    try:
        r = a.round(blocking=True)
    finally:
        lock.unlink()
    assert (r.error, r.integrated) == (None, 1)
    assert a.store.head() == arrived and a.store.read(mem) == host.read(mem)
    assert a.store.git.has_uncommitted()  # what the committer's next tick looks at
    a.store.flush()
    assert git(a.store.root, "status", "--porcelain") == ""


def test_daily_logs_from_both_sides_merge_entry_by_entry(instance, native, daemon, bare,
                                                         tmp_path) -> None:
    url = daemon.url("memory.git")
    host = native(url)
    path = host.remember("first, from the host", at(9, 0))
    host.commit()
    host.push()
    a = instance("a", url)  # bootstrap clones the remote
    assert a.store.read(path) == host.read(path)

    host.remember("host at 09:20", at(9, 20))
    host.remember("host at 09:40", at(9, 40))
    host.commit()
    host.push()
    remember(a.store, "native-bot", "memoryui at 09:20", at(9, 20))  # the same minute
    remember(a.store, "native-bot", "memoryui at 09:30", at(9, 30))

    r = a.round(blocking=True)
    assert (r.error, r.conflicts, r.pushed) == (None, [], True)
    text = a.store.read(path)
    assert text.count("# 2026-02-12") == 1
    assert [(e.time, e.body) for e in parse_daily(text)] == [
        ("09:00", "first, from the host"), ("09:20", "memoryui at 09:20"),
        ("09:20", "host at 09:20"), ("09:30", "memoryui at 09:30"),
        ("09:40", "host at 09:40")]
    assert text == ("# 2026-02-12\n\n## 09:00\n\nfirst, from the host\n"
                    "\n## 09:20\n\nmemoryui at 09:20\n\n## 09:20\n\nhost at 09:20\n"
                    "\n## 09:30\n\nmemoryui at 09:30\n\n## 09:40\n\nhost at 09:40\n")
    assert show(bare, path) == text
    host.pull()
    assert host.read(path) == text
    b = instance("b", url)
    assert b.store.read(path) == text
    assert a.round(blocking=True).summary() == "sync: up to date"
    for repo in (bare, a.store.root, b.store.root, host.path):
        fsck_clean(repo)


def test_clean_three_way_merge_of_memory(instance, native, file_url, bare) -> None:
    lines = ["# Memory", "", "- one", "- two", "- three", "- four", "- five", ""]
    host = native(file_url)
    mem = host.reflect("\n".join(lines))
    host.commit()
    host.push()
    a = instance("a", file_url)
    host.reflect("\n".join(lines).replace("- one", "- ONE (host)"))
    theirs = host.commit()
    host.push()
    reflect(a.store, "native-bot", "\n".join(lines).replace("- five", "- FIVE (memoryui)"))
    ours = a.store.head()

    r = a.round(blocking=True)
    assert (r.error, r.conflicts, r.pushed) == (None, [], True)
    merged = "\n".join(lines).replace("- one", "- ONE (host)").replace("- five",
                                                                         "- FIVE (memoryui)")
    assert a.store.read(mem) == merged
    parents = git(a.store.root, "log", "-1", "--format=%P").split()
    assert parents == [ours, theirs]
    body = git(a.store.root, "log", "-1", "--format=%B")
    assert f"- {mem}" in body and "Memoryui-Actor: system:sync" in body
    host.pull()
    assert host.read(mem) == merged
    fsck_clean(bare)


def test_same_line_conflict_keeps_local_pauses_publishing_until_resolved(
        instance, native, daemon, bare) -> None:
    url = daemon.url("memory.git")
    host = native(url)
    mem = host.reflect("# Memory\n\n- the deploy window is Tuesday\n")
    host.commit()
    host.push()
    a = instance("a", url)
    host.reflect("# Memory\n\n- the deploy window is Wednesday\n")
    c1 = host.commit("host: Wednesday")
    host.push()
    thursday = "# Memory\n\n- the deploy window is Thursday\n"
    reflect(a.store, "native-bot", thursday)

    r = a.round(blocking=True)
    assert (r.conflicts, r.paused, r.pushed, r.error) == ([mem], True, False, None)
    assert a.store.read(mem) == thursday  # the local version stays
    assert tip(bare) == c1  # and the remote never sees it
    st = a.status()
    assert (st.state, st.publishing_paused) == ("conflict", True)
    assert [(c.path, c.theirs_commit) for c in st.conflicts] == [(mem, c1)]
    base, ours, theirs = a.conflict_texts(mem)
    assert ("Tuesday" in base, "Thursday" in ours, "Wednesday" in theirs) == (True,) * 3

    # Agent writes go on, other files keep flowing in; nothing is pushed meanwhile.
    daily = remember(a.store, "ops", "still writing during the conflict", at(10, 0))
    reflect(a.store, "native-bot", thursday + "- and Friday\n")
    host.remember("the host keeps going", at(10, 5))
    c2 = host.commit()
    host.push()
    r = a.round(blocking=True)
    assert (r.integrated, r.pushed, r.paused, r.error) == (1, False, True, None)
    assert "the host keeps going" in a.store.read(host.daily_path(DAY))
    assert a.store.read(daily) and tip(bare) == c2

    # The remote edits the file again: the conflict follows its newest version.
    host.reflect("# Memory\n\n- the deploy window is Wednesday, 10:00 UTC\n")
    c3 = host.commit("host: a time")
    host.push()
    assert a.round(blocking=True).conflicts == [mem]
    assert a.conflict(mem).theirs_commit == c3
    _base, ours, theirs = a.conflict_texts(mem)
    assert "and Friday" in ours and "10:00 UTC" in theirs
    with pytest.raises(ConflictChanged):
        a.resolve(mem, "stale", actor=ALICE, expect_theirs=c1)

    merged = ("# Memory\n\n- the deploy window is Wednesday, 10:00 UTC (Thursday as a "
              "fallback)\n- and Friday\n")
    sha = a.resolve(mem, merged, actor=ALICE, expect_theirs=c3)
    message = git(a.store.root, "log", "-1", "--format=%B", sha)
    assert f"Resolves-Sync-Conflict: {c3}" in message
    assert "Memoryui-Actor: user:alice" in message
    assert a.status().conflicts == []
    r = a.round(blocking=True)
    assert (r.pushed, r.error) == (True, None)
    final = tip(bare)
    assert all(is_ancestor(bare, t, final) for t in (c1, c2, c3))  # nothing forced away
    assert show(bare, mem) == merged
    host.pull()
    assert host.read(mem) == merged
    assert a.status().state == "synced"
    for repo in (bare, a.store.root, host.path):
        fsck_clean(repo)


def test_modify_delete_conflicts_both_ways(instance, native, file_url, bare) -> None:
    host = native(file_url)
    gone_there = "agents/native-bot/memory/notes/runbook.md"
    gone_here = "agents/native-bot/memory/notes/oncall.md"
    host.write(gone_there, "runbook v1\n")
    host.write(gone_here, "oncall v1\n")
    host.commit()
    host.push()
    a = instance("a", file_url)
    host.delete(gone_there)
    host.write(gone_here, "oncall v2 from the host\n")
    host.commit()
    host.push()
    a.store.write(gone_there, "runbook v2 from memoryui\n", actor=ALICE, tool="edit")
    a.store.delete(gone_here, actor=ALICE, tool="delete")

    r = a.round(blocking=True)
    assert sorted(r.conflicts) == sorted([gone_there, gone_here]) and not r.pushed
    assert a.store.read(gone_there) == "runbook v2 from memoryui\n"
    assert not a.store.exists(gone_here)
    assert a.conflict(gone_there).theirs is None and a.conflict(gone_here).ours is None
    assert a.conflict_texts(gone_here) == ("oncall v1\n", None, "oncall v2 from the host\n")

    a.resolve(gone_there, None, actor=ALICE)  # agree with the deletion
    assert a.round(blocking=True).paused  # one conflict still open
    a.resolve(gone_here, "oncall v2 from the host\n", actor=ALICE)
    r = a.round(blocking=True)
    assert (r.pushed, r.error) == (True, None)
    assert show(bare, gone_there) is None
    assert show(bare, gone_here) == "oncall v2 from the host\n"
    fsck_clean(bare)


def test_push_race_restarts_the_round_and_loses_nothing(instance, native, daemon, bare) -> None:
    url = daemon.url("memory.git")
    a = instance("a", url)
    host = native(url)
    daily = remember(a.store, "ops", "local entry", at(11, 0))
    real_push = a.transport.push
    raced: list[str] = []

    def push_after_a_rival(sha: str, branch: str):
        if not raced:  # another clone pushes between our fetch and our push
            host.remember("pushed in between", at(11, 1))
            raced.append(host.commit())
            host.push()
        return real_push(sha, branch)

    a.transport.push = push_after_a_rival
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
