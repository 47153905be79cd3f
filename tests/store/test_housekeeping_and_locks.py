"""Git housekeeping runs one process at a time, and the write locks hold up only what they must."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from memoryui.store import Actor, Store
from memoryui.store.housekeeping import wait_for_housekeeping
from tests.store.plain_git import git


def test_housekeeping_packs_loose_objects_and_writes_the_commit_graph(store: Store) -> None:
    store.git.loose_object_limit = 20
    for i in range(30):
        store.write(f"agents/a/memory/notes/n{i}.md", f"note {i}\n", actor=Actor.agent("a"),
                    tool="t")
    loose_before = int(git(store.root, "count-objects").split()[0])
    assert loose_before > 20
    reflog = store.root / ".git/logs/refs/heads/main"
    lines = reflog.read_text().splitlines()
    first = lines[0].split(" ")[1]  # an entry before the branch's first, dated 2001
    reflog.write_text(f"{'0' * 40} {first} a <a@b> 1000000000 +0000\tolder than 90 days\n"
                      + "\n".join(lines) + "\n")
    store.git.maintain(background=False)
    assert int(git(store.root, "count-objects").split()[0]) < loose_before
    kept = reflog.read_text()
    assert "older than 90 days" not in kept and kept.count("\n") == len(lines)
    graphs = list((store.root / ".git/objects/info").glob("commit-graph*/*.graph"))
    graphs += list((store.root / ".git/objects/info").glob("commit-graph"))
    assert any(b"BIDX" in g.read_bytes() for g in graphs), "Bloom filters for path logs"
    assert git(store.root, "status", "--porcelain") == ""
    assert len(store.log(limit=100)) == 30


def test_housekeeping_prunes_stray_objects_past_the_grace_at_most_daily(store: Store) -> None:
    """Objects no commit holds are removed once past git's two weeks' grace, so the workspace
    does not grow forever; younger ones (a writer may be about to use them), and everything
    reachable, stay. The full walk a prune costs runs at most once a day."""
    store.git.prune_from = 2
    for i in range(3):
        store.write(f"agents/a/memory/notes/n{i}.md", f"note {i}\n", actor=Actor.agent("a"),
                    tool="t")
    weeks_ago = time.time() - 15 * 86400

    def stray(text: str, old: bool) -> str:
        sha = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=store.root,
                             input=text.encode(), capture_output=True, check=True
                             ).stdout.decode().strip()
        if old:
            obj = store.root / ".git/objects" / sha[:2] / sha[2:]
            os.utime(obj, (weeks_ago, weeks_ago))
        return sha

    def exists(sha: str) -> bool:
        return subprocess.run(["git", "cat-file", "-e", sha], cwd=store.root).returncode == 0

    old = [stray(f"old stray {i}\n", old=True) for i in range(3)]
    young = stray("young stray\n", old=False)
    store.git.maintain(background=False)
    assert not any(exists(s) for s in old), "strays past the grace are pruned"
    assert exists(young), "a stray within the grace stays"
    assert git(store.root, "fsck", "--connectivity-only", "--no-dangling") == ""
    assert store.list_files("agents/a/memory/notes") == \
        [f"agents/a/memory/notes/n{i}.md" for i in range(3)]
    later = [stray(f"later stray {i}\n", old=True) for i in range(3)]
    store.git.maintain(background=False)
    assert all(exists(s) for s in later), "no second prune within a day"


def test_one_housekeeping_runs_at_a_time_across_processes(store: Store) -> None:
    """Workers reaching their 500th commit together must not repack side by side; a
    process that finds one running leaves the work to it, and can wait for it."""
    lock = store.root / ".git/memoryui/housekeeping.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys\n"
        f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()\n")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    store.git.maintain(background=True)
    assert store.git.maintenance is None, "skipped: another process is housekeeping"
    holder.communicate("")
    wait_for_housekeeping(store.root)  # returns once the holder is gone
    store.write("memory/MEMORY.md", "one\n", actor=Actor.agent("ops"), tool="t")
    graphs = store.root / ".git/objects/info"
    for old in graphs.glob("commit-graph*"):
        subprocess.run(["rm", "-rf", str(old)], check=True)
    store.git.maintain(background=True)
    assert store.git.maintenance is not None
    wait_for_housekeeping(store.root)  # the lock is held until the housekeeping ends
    assert list(graphs.glob("commit-graph*")), "its commit-graph is written by then"
    assert store.git.maintenance.wait(60) == 0


def test_a_slow_write_holds_up_writers_of_that_file_only(store: Store) -> None:
    """Writers share the workspace lock, each file has its own: an agent whose fsync is
    slow never makes agents writing other files wait; writers of the same file keep their
    order, and what rewrites the tree as a whole waits for both."""
    import threading

    inside, release = threading.Event(), threading.Event()
    order: list[str] = []
    bot = Actor.agent("ops-bot")

    def slow(old: str | None) -> str:
        inside.set()
        assert release.wait(60)
        order.append("slow")
        return (old or "") + "- slow\n"

    slow_writer = threading.Thread(target=store.update, args=("memory/world/a.md", slow),
                                   kwargs={"actor": bot, "tool": "t"})
    slow_writer.start()
    assert inside.wait(60)
    store.write("memory/world/b.md", "# B\n", actor=bot, tool="t")  # does not wait
    assert store.read("memory/world/b.md") == "# B\n"

    def after(old: str | None) -> str:
        order.append("same file")
        return (old or "") + "- after\n"

    same_file = threading.Thread(target=store.update, args=("memory/world/a.md", after),
                                 kwargs={"actor": bot, "tool": "t"})
    same_file.start()
    exclusive = threading.Event()

    def whole_tree() -> None:
        with store.git.write_lock:
            exclusive.set()

    tree_writer = threading.Thread(target=whole_tree)
    tree_writer.start()
    assert not exclusive.wait(0.2) and order == []  # both wait for the slow writer
    release.set()
    for t in (slow_writer, same_file, tree_writer):
        t.join(60)
    assert exclusive.is_set() and order == ["slow", "same file"]
    assert store.read("memory/world/a.md") == "- slow\n- after\n"
    store.flush()
    assert git(store.root, "status", "--porcelain") == ""


HOLDER = """
import sys
from memoryui.store.locks import SharedProcessLock
lock = SharedProcessLock(__import__("pathlib").Path(sys.argv[1]))
with lock.shared():
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_the_write_lock_is_shared_across_processes_and_exclusive_waits(tmp_path: Path
                                                                       ) -> None:
    from memoryui.store.locks import SharedProcessLock

    path = tmp_path / "write.lock"
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "held"
        lock = SharedProcessLock(path)
        with lock.shared():  # shared beside another process's shared hold
            pass
        assert not lock.acquire(blocking=False)  # exclusive must wait for the child
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(60) == 0
        assert lock.acquire()
        with lock.shared(), lock:  # shared by the exclusive holder, then re-entered
            pass
        lock.release()
    finally:
        child.kill()


def test_the_workers_of_one_workspace_share_one_commit_tick(tmp_path: Path) -> None:
    """Each tick's commits rewrite git's whole index: workers that ticked apart made one
    round of commits each for the same writes. A tick within the delay of another process's
    tick commits nothing; the next one does."""
    root = tmp_path / "ws"
    first, second = Store(root, commit_delay=60), Store(root, commit_delay=60)
    assert first.committer._due()  # nobody ticked yet: this one commits
    assert not second.committer._due()  # another worker's tick, within the delay
    assert not first.committer._due()
    stamp = first.git.state_dir / "ticked"
    then = time.time() - 61
    os.utime(stamp, (then, then))  # the delay has passed since that tick
    assert second.committer._due()
    assert not first.committer._due()
    first.close()
    second.close()
