"""Who commits deferred writes: the process itself, or the committer process that holds
the workspace's committer lock, and the blobs a commit makes from journaled content."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pygit2
import pytest

from memoryui.store import Actor, Store
from memoryui.store.committerlock import CommitterLock
from memoryui.store.records import Record

MEM = "agents/a/memory/MEMORY.md"
NOTE = "agents/a/memory/notes/n.md"
LOG = "agents/a/memory/daily/2026-11-24.md"
DEADLINE = 120  # bounds a hang only: CI is a loaded 2-core machine


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def committed(store: Store) -> threading.Event:
    """Set when a flush of `store`'s own makes a commit (its ticks included)."""
    done = threading.Event()
    store.git.on_commit = lambda _paths, _when: done.set()
    return done


def test_each_commit_keeps_its_authors_version_and_only_kept_versions_get_blobs(
        tmp_path: Path) -> None:
    store = Store(tmp_path / "ws", commit_delay=60)  # nothing commits by itself
    a, b = Actor.agent("a"), Actor.agent("b")
    store.write(MEM, "one\n", actor=a, tool="reflect")
    store.write(MEM, "one two\n", actor=a, tool="reflect")  # same author: one commit
    store.write(MEM, "one two three\n", actor=b, tool="reflect")
    store.write(MEM, "four\n", actor=a, tool="reflect")
    store.flush()
    shas = git(store.root, "log", "--format=%H %an", "--", MEM).splitlines()
    assert [line.split()[1] for line in shas] == ["a", "b", "a"]
    versions = [git(store.root, "show", f"{line.split()[0]}:{MEM}") for line in shas]
    assert versions == ["four\n", "one two three\n", "one two\n"]
    # "one\n" was replaced before any commit kept it: no object was ever written for it.
    assert pygit2.hash(b"one\n") not in store.git.repo.odb
    assert git(store.root, "status", "--porcelain") == ""
    store.close()


def test_appends_are_journaled_as_their_entries_and_a_restart_commits_each_version(
        tmp_path: Path) -> None:
    """A long daily log costs its entry, not its size, in the journal; a restart after a
    crash rebuilds every author's version from the committed file and the entries."""
    root = tmp_path / "ws"
    store = Store(root, commit_delay=60)  # nothing commits by itself
    day = "# 2026-11-24\n" + "".join(f"\n## 08:{i % 60:02d}\n\nearlier {i}\n" for i in range(4000))
    store.write(LOG, day, actor=Actor.agent("a"), tool="remember")
    store.flush()
    entries = [("a", "\n## 09:00\n\nfirst\n"), ("b", "\n## 09:01\n\nsecond\n"),
               ("a", "\n## 09:02\n\nthird\n")]
    for who, entry in entries:
        store.append(LOG, entry, actor=Actor.agent(who), tool="remember")
    assert (root / LOG).stat().st_size > 90_000
    assert store.git.journal.stat().st_size < 3_000  # three entries, not three copies
    store._stop.set()  # the process dies: no exit flush
    del store
    restarted = Store(root)
    shas = git(root, "log", "--format=%H %an", "-3", "--", LOG).splitlines()
    assert [line.split()[1] for line in shas] == ["a", "b", "a"]
    versions = [git(root, "show", f"{line.split()[0]}:{LOG}") for line in reversed(shas)]
    assert versions == [day + "".join(e for _, e in entries[:n]) for n in (1, 2, 3)]
    assert git(root, "status", "--porcelain") == ""
    restarted.close()


def test_an_append_after_a_change_from_outside_is_committed_from_the_file(
        tmp_path: Path) -> None:
    """An edit made outside memoryui between two journaled appends: the second append's
    version cannot be rebuilt from the first, so it is taken from the file, which holds
    it; every version is committed and nothing is left pending."""
    store = Store(tmp_path / "ws", commit_delay=60)
    store.write(LOG, "# 2026-11-24\n", actor=Actor.agent("a"), tool="remember")
    store.flush()
    store.append(LOG, "\n## 09:00\n\nfrom a\n", actor=Actor.agent("a"), tool="remember")
    path = store.root / LOG
    path.write_text("by hand\n" + path.read_text())
    store.append(LOG, "\n## 09:01\n\nfrom b\n", actor=Actor.agent("b"), tool="remember")
    store.flush()
    shas = git(store.root, "log", "--format=%H %an", "-2", "--", LOG).splitlines()
    assert [line.split()[1] for line in shas] == ["b", "a"]
    assert git(store.root, "show", f"{shas[1].split()[0]}:{LOG}") == \
        "# 2026-11-24\n\n## 09:00\n\nfrom a\n"
    assert git(store.root, "show", f"{shas[0].split()[0]}:{LOG}") == path.read_text()
    assert path.read_text().startswith("by hand\n") and path.read_text().endswith("from b\n")
    assert store.pending() == []
    store.close()


def test_a_journal_line_whose_content_does_not_match_its_id_is_never_committed(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(tmp_path / "ws")
    store.write(MEM, "good\n", actor=Actor.agent("a"), tool="reflect")
    (store.root / MEM).write_text("on disk\n")
    rec = Record(MEM, str(pygit2.hash(b"claimed\n")), Actor.agent("a"), "reflect",
                 id="x1", data=b"tampered\n")
    (store.git.state_dir / "batch-00000000000000000001-1.jsonl").write_bytes(rec.to_json())
    head = store.head()
    with caplog.at_level(logging.ERROR, logger="memoryui.store"):
        store.flush()
    assert "does not match its id" in caplog.text
    assert store.head() == head  # nothing else to commit: history is untouched
    assert [e.path for e in store.pending()] == [MEM]  # the file shows as changed instead
    store.close()


def test_a_hosted_store_leaves_commits_and_their_indexing_to_its_host(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    host = Store(root, commit_delay=0.05)
    heard: list[tuple[list[str], float | None]] = []
    done = threading.Event()
    host.listeners.append(lambda paths, when: (heard.append((list(paths), when)), done.set()))
    assert host.host_commits()
    worker = Store(root, commit_delay=0.05)
    assert worker.hosted and not host.hosted
    worker.append(LOG, "\n## 09:00\n\nfrom the worker\n", header="# 2026-11-24\n",
                  actor=Actor.agent("a"), tool="remember")
    assert done.wait(DEADLINE), "the host never committed it"
    assert git(root, "log", "--format=%an %s", "-1").startswith("a ")
    assert git(root, "show", f"HEAD:{LOG}") == "# 2026-11-24\n\n## 09:00\n\nfrom the worker\n"
    committed = int(git(root, "log", "--format=%at", "-1"))
    assert [when for paths, when in heard if LOG in paths] == [committed]
    worker.close()
    host.close()


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="thread priorities are Linux's")
def test_the_hosts_ticks_and_indexing_yield_the_cpu_to_requests(tmp_path: Path) -> None:
    """serve's supervisor commits and indexes at the lowest CPU priority (its threads' own
    nice value), so the workers' requests go first when both want a core; a worker that
    stands in for it, and a store that commits its own writes, keep theirs."""
    from memoryui.search import SearchIndex

    root = tmp_path / "ws"
    host = Store(root, commit_delay=0.05)
    index = SearchIndex(tmp_path / "s.db", catch_up_interval=3600)
    index.attach(host)
    nice: dict[str, int] = {}
    done, drained = threading.Event(), threading.Event()

    def heard(paths: list[str], when: float | None) -> None:
        nice["tick"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        done.set()

    real_write = index._write

    def write(*args, **kwargs):
        nice["drain"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        drained.set()
        return real_write(*args, **kwargs)

    index._write = write
    host.listeners.insert(0, heard)
    host.host_commits()
    worker = Store(root, commit_delay=0.05)
    worker.append(LOG, "\n## 09:00\n\nfrom the worker\n", header="# 2026-11-24\n",
                  actor=Actor.agent("a"), tool="remember")
    assert done.wait(DEADLINE), "the host never committed it"
    assert drained.wait(DEADLINE), "the host never indexed it"
    assert nice == {"tick": 19, "drain": 19}
    own = Store(tmp_path / "own", commit_delay=0.05)
    mine = committed(own)
    own.write(MEM, "mine\n", actor=Actor.agent("a"), tool="reflect")
    assert mine.wait(DEADLINE)
    assert os.getpriority(os.PRIO_PROCESS, own.committer._thread.native_id) == \
        os.getpriority(os.PRIO_PROCESS, 0)
    for s in (worker, own, host):
        s.close()


HOLD_LOCK = """
import sys
from pathlib import Path
from memoryui.store.committerlock import CommitterLock
assert CommitterLock(Path(sys.argv[1])).hold()
print("held", flush=True)
sys.stdin.read()
"""


def test_a_killed_committer_is_followed_by_the_one_waiting_and_the_workers_stand_in(
        tmp_path: Path) -> None:
    """The committer lock is the kernel's: the moment a committer process dies (SIGKILL
    included) a second committer waiting on it takes over, and workers no longer count on
    it, so they commit their own writes."""
    worker = Store(tmp_path / "ws", commit_delay=0.05)
    assert not worker.hosted  # no committer yet
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(worker.git.state_dir)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    assert worker.hosted
    standby = CommitterLock(worker.git.state_dir)
    assert not standby.hold(blocking=False), "two committers at once"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert not worker.hosted
    assert standby.hold(blocking=False), "the standby could not take over"
    assert worker.hosted
    standby.close()
    assert not worker.hosted
    done = committed(worker)
    worker.write(MEM, "still committed\n", actor=Actor.agent("a"), tool="reflect")
    assert done.wait(DEADLINE), "nobody committed the write"
    assert git(worker.root, "show", f"HEAD:{MEM}") == "still committed\n"
    worker.close()


def test_a_hosted_store_stands_in_when_its_live_host_lets_writes_wait(tmp_path: Path) -> None:
    """A host that is there but does not tick (stuck) must not leave writes uncommitted:
    after STAND_IN_AFTER seconds of waiting writes and no tick, a worker commits them."""
    worker = Store(tmp_path / "ws", commit_delay=0.05)
    stuck = CommitterLock(worker.git.state_dir)  # a committer that is alive but never ticks
    assert stuck.hold() and worker.hosted
    done = committed(worker)
    worker.write(MEM, "waited\n", actor=Actor.agent("a"), tool="reflect")
    assert worker.head() is None
    assert done.wait(DEADLINE), "the stand-in never committed"
    assert git(worker.root, "show", f"HEAD:{MEM}") == "waited\n"
    worker.close()
    stuck.close()


def test_a_stand_in_leaves_the_indexing_of_what_it_commits_to_the_live_committer(
        tmp_path: Path) -> None:
    """A worker that commits for a live committer that falls behind (its core busy with
    requests) only commits: its own search index leaves those files to the committer, which
    hears of them at its next tick and indexes them there (so no worker loads the embedding
    model for a stand-in's commits)."""
    host = Store(tmp_path / "ws", commit_delay=0.05)
    heard: list[list[str]] = []
    host.listeners.append(lambda paths, when: heard.append(paths))
    assert host.host_commits(wait=False)
    host.committer.stop.set()  # alive, holding the lock, but it no longer ticks by itself
    host.write(NOTE, "before\n", actor=Actor.agent("a"), tool="reflect")
    host.flush()
    host.committer._tick()  # a tick with nothing to commit looks at the branch
    heard.clear()
    worker = Store(tmp_path / "ws", commit_delay=0.05)
    worker_heard: list[list[str]] = []
    worker.listeners.append(lambda paths, when: worker_heard.append(paths))
    assert worker.hosted
    done = threading.Event()
    told = worker.git.on_commit
    assert told is not None
    worker.git.on_commit = lambda paths, when: (told(paths, when), done.set())
    worker.write(MEM, "waited\n", actor=Actor.agent("a"), tool="reflect")
    assert done.wait(DEADLINE), "the stand-in never committed"
    assert git(worker.root, "show", f"HEAD:{MEM}") == "waited\n"
    assert worker_heard[-1] == [MEM]  # (its file catalogue hears of it)
    assert MEM in worker.host_indexes  # its search index leaves the file to the committer
    assert heard == []
    host.committer._tick()
    assert heard == [[MEM]]
    host.committer._tick()  # told once
    assert heard == [[MEM]]
    worker.close()
    host.close()


def test_an_idle_store_ticks_seldom_and_still_commits_a_write_within_its_second(
        tmp_path: Path, monkeypatch) -> None:
    """An idle server should cost almost nothing: once nothing was journaled for IDLE_AFTER
    seconds the tick comes every IDLE_EVERY seconds (within the design's second), after a
    busy tick every BUSY_DELAY, and a worker that only stands in for a live committer looks
    every STANDBY_EVERY seconds. A write after an idle spell is still committed."""
    from memoryui.store import committer as cadence

    monkeypatch.setattr(cadence, "IDLE_AFTER", 0.0)
    store = Store(tmp_path / "ws", commit_delay=0.05)
    tick = store.committer
    assert tick._next_wait(len(tick._tick())) == cadence.IDLE_EVERY <= 0.5
    assert tick._next_wait(cadence.BUSY_RECORDS) == cadence.BUSY_DELAY < 1.0
    done = committed(store)
    store.write(MEM, "after a quiet spell\n", actor=Actor.agent("a"), tool="reflect")
    assert done.wait(DEADLINE), "the write was never committed"
    assert git(store.root, "show", f"HEAD:{MEM}") == "after a quiet spell\n"
    worker = Store(tmp_path / "ws", commit_delay=0.05)
    live = CommitterLock(worker.git.state_dir)
    assert live.hold()
    assert worker.committer._next_wait(0) == cadence.STANDBY_EVERY < cadence.STAND_IN_AFTER
    worker.close()
    live.close()
    store.close()


def test_a_committer_sees_its_workspace_removed_though_a_lock_made_its_folder_again(
        tmp_path: Path) -> None:
    """A lock file another thread or process takes meanwhile makes `.git/memoryui` again;
    the committer still sees that the repository is gone, and stops instead of running for
    nobody."""
    host = Store(tmp_path / "ws", commit_delay=0.05)
    assert host.host_commits(wait=False)
    host.committer.stop.set()  # ticks only when this test calls them
    shutil.rmtree(host.root)
    host.git.state_dir.mkdir(parents=True)  # as the catalogue's lock does
    host.committer._tick()
    assert host.committer.gone.is_set()
