"""Nothing is lost: concurrent processes, SIGKILL mid-write, stale locks, a crashed committer."""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memoryui.store import Actor, CommitRaceError, Store
from memoryui.store.housekeeping import wait_for_housekeeping
from memoryui.store.records import Record
from tests.store.plain_git import git

DAILY = "agents/ops-bot/memory/daily/2026-11-20.md"


def _appender(root: str, worker: int, count: int) -> None:
    store = Store(root, commit_delay=0.05)
    actor = Actor.agent(f"writer-{worker}")
    for i in range(count):
        store.append(DAILY, f"\n## 10:{i % 60:02d}\n\nentry w{worker}-{i:03d}\n",
                     actor=actor, tool="remember", header="# 2026-11-20\n")
    store.close()


def test_eight_processes_append_1600_entries_each_exactly_once(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    Store(root).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_appender, args=(str(root), w, 200)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    store = Store(root)
    store.flush()
    text = (root / DAILY).read_text()
    found = re.findall(r"^entry (w\d-\d{3})$", text, flags=re.M)
    expected = {f"w{w}-{i:03d}" for w in range(8) for i in range(200)}
    assert len(found) == 1600 and set(found) == expected
    assert text.count("# 2026-11-20\n") == 1, "the date header is written once"
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "show", f"HEAD:{DAILY}") == text
    # Every entry was added by a commit authored by the process that wrote it.
    for w in (0, 7):
        added = git(root, "log", f"--author=^writer-{w} <", "-p", "--format=", "--", DAILY)
        mine = set(re.findall(r"^\+entry (w\d-\d{3})$", added, flags=re.M))
        assert mine == {f"w{w}-{i:03d}" for i in range(200)}
    # A writer that made its 500th commit left a repack running in the background; it
    # removes the loose objects it packed, which a `git fsck` beside it reports missing.
    wait_for_housekeeping(store.root)
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=root, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


WRITER = """
import sys
from memoryui.store import Actor, Store
store = Store(sys.argv[1])
big = [("A" * 1_500_000) + "\\n", ("B" * 1_500_000) + "\\n"]
i = 0
print("ready", flush=True)
while True:
    store.write("memory/MEMORY.md", big[i % 2], actor=Actor.agent("killer"), tool="t")
    i += 1
"""


def started(script: Path, root: Path) -> subprocess.Popen:
    """A writer script on the workspace `root`, running once it has printed "ready"."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, str(script), str(root)], stdout=subprocess.PIPE,
                            env=env)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    return proc


def test_sigkill_mid_write_leaves_old_or_new_file_50_times(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    store = Store(root)
    store.write("memory/MEMORY.md", "original\n", actor=Actor.agent("ops"), tool="t")
    valid = {"original\n", "A" * 1_500_000 + "\n", "B" * 1_500_000 + "\n", "after\n"}
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    for n in range(50):
        proc = started(script, root)
        time.sleep(0.02 + (n % 7) * 0.013)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert (root / "memory/MEMORY.md").read_text() in valid
        result = store.write("memory/MEMORY.md", "after\n", actor=Actor.agent("ops"), tool="t")
        assert result.changed or result.text == "after\n"
        assert (root / "memory/MEMORY.md").read_text() == "after\n"
    # The repository is repaired by the next operation: everything ends up committed.
    # A lock left by the killed committer counts as dead once it is older than 1 s: age any
    # leftover lock files instead of waiting for that second to pass.
    aged = time.time() - 5
    for lock in [root / ".git" / "index.lock", root / ".git" / "HEAD.lock",
                 *(root / ".git" / "refs" / "heads").glob("*.lock")]:
        if lock.exists():
            os.utime(lock, (aged, aged))
    store.flush()
    assert git(root, "show", "HEAD:memory/MEMORY.md") == "after\n"
    assert git(root, "status", "--porcelain") == ""
    subprocess.run(["git", "fsck"], cwd=root, check=True, capture_output=True)


def test_stale_index_lock_is_recovered(store: Store) -> None:
    store.write("memory/MEMORY.md", "one\n", actor=Actor.agent("a"), tool="t")
    lock = store.root / ".git" / "index.lock"
    lock.write_text("")
    old = time.time() - 60
    os.utime(lock, (old, old))
    result = store.write("memory/MEMORY.md", "two\n", actor=Actor.agent("a"), tool="t")
    assert result.commit
    assert not lock.exists()
    assert git(store.root, "status", "--porcelain") == ""


def test_a_lost_race_fails_loudly_and_loses_nothing(store: Store) -> None:
    """HEAD moved by someone else between reading it and committing: no silent overwrite."""
    store.write("memory/MEMORY.md", "base\n", actor=Actor.agent("a"), tool="t")
    repo = store.git
    with repo.write_lock:
        data = b"mine\n"
        (store.root / "memory/MEMORY.md").write_bytes(data)
        repo.record(Record("memory/MEMORY.md", repo.create_blob(data), Actor.agent("a"), "t"))
    # Someone else commits an unrelated file behind memoryui's back, mid-flight.
    real_head = repo.head
    calls = {"n": 0}

    def racing_head() -> str | None:
        tip = real_head()
        calls["n"] += 1
        if calls["n"] == 1:
            (store.root / "other.md").write_text("theirs\n")
            git(store.root, "add", "other.md")
            git(store.root, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "x")
        return tip

    repo.head = racing_head  # type: ignore[method-assign]
    with pytest.raises(CommitRaceError):
        repo.flush()
    repo.head = real_head  # type: ignore[method-assign]
    # The batch is kept and the retry commits it on top of the other commit.
    store.flush()
    assert git(store.root, "show", "HEAD:memory/MEMORY.md") == "mine\n"
    assert git(store.root, "show", "HEAD:other.md") == "theirs\n"
    assert git(store.root, "log", "--format=%an", "-2").split() == ["a", "x"]


def test_journal_left_by_a_crash_is_committed_with_its_authors(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    store = Store(root, commit_delay=60)  # nothing commits by itself in this test
    store.write("agents/a/memory/MEMORY.md", "from a\n", actor=Actor.agent("a"), tool="reflect")
    store.write("agents/b/memory/MEMORY.md", "from b\n", actor=Actor.agent("b"), tool="reflect")
    assert store.head() is None  # written, journaled, not committed yet
    store._stop.set()  # simulate the process dying: no exit flush
    del store
    restarted = Store(root)  # a restart commits the leftovers
    log = restarted.log()
    assert sorted(c.author for c in log) == ["a", "b"]
    assert git(root, "status", "--porcelain") == ""


def test_batch_replayed_after_crash_does_not_revert_newer_versions(tmp_path: Path) -> None:
    """A committer that died after moving the branch must not replay older versions."""
    root = tmp_path / "ws"
    store = Store(root)
    actor_a, actor_b = Actor.agent("a"), Actor.agent("b")
    store.write("memory/MEMORY.md", "v1\n", actor=actor_a, tool="t")
    store.write("memory/MEMORY.md", "v2\n", actor=actor_b, tool="t")
    repo = store.git
    leftover = repo.state_dir / "batch-00000000000000000001-1.jsonl"
    leftover.write_bytes(
        Record("memory/MEMORY.md", repo.create_blob(b"v1\n"), actor_a, "t", id="x1").to_json()
        + Record("memory/MEMORY.md", repo.create_blob(b"v2\n"), actor_b, "t", id="x2").to_json()
    )
    head = store.head()
    store.flush()
    assert store.head() == head
    assert not leftover.exists()


def test_deferred_commits_group_per_author_and_keep_status_truthful(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    store = Store(root, commit_delay=0.05)
    # Hold the commit lock while writing so the 30 writes land in one tick however slowly a
    # loaded machine runs them (the committer skips a tick while someone else commits).
    with store.git.commit_lock:
        for i in range(30):
            who = ["a", "b", "c"][i % 3]
            store.append(f"agents/{who}/memory/daily/2026-11-20.md",
                         f"\n## 10:{i:02d}\n\nx{i}\n", actor=Actor.agent(who),
                         tool="remember", header="# 2026-11-20\n")
        assert store.git.has_uncommitted(), "status says the writes are not committed yet"
    deadline = time.monotonic() + 120  # bounds a hang only: CI is a loaded 2-core machine
    while store.git.has_uncommitted() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not store.git.has_uncommitted(), "deferred writes were not committed in time"
    assert git(root, "status", "--porcelain") == ""
    commits = store.log(limit=100)
    assert {c.author for c in commits} == {"a", "b", "c"}
    assert len(commits) < 30, "writes in one tick are grouped into one commit per author"
    for c in commits:
        assert {f.path.split("/")[1] for f in c.files} == {c.author}
    store.close()


def test_an_index_refresh_blocked_by_a_lock_is_retried_by_the_next_flush(tmp_path: Path) -> None:
    """A killed writer can leave `index.lock`: the entries it kept us from refreshing must
    not stay stale (`git status` would show the committed file as modified forever)."""
    root = tmp_path / "ws"
    store = Store(root)
    store.write("memory/MEMORY.md", "one\n", actor=Actor.agent("ops"), tool="t")
    lock = root / ".git" / "index.lock"
    lock.write_bytes(b"")
    store.write("memory/MEMORY.md", "two\n", actor=Actor.agent("ops"), tool="t")
    assert git(root, "show", "HEAD:memory/MEMORY.md") == "two\n"
    lock.unlink()  # the lock's owner is gone
    store.flush()
    assert git(root, "status", "--porcelain") == ""
