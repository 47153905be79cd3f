"""The one write primitive answers with the commit that holds the write: its sha when it
was committed before returning, else its journal record id, which `Store.commit_for` turns
into the commit the committer made (noted in .git/memoryui/committed), with no flush and
no search of history."""

from __future__ import annotations

import multiprocessing as mp
import subprocess
import time
from pathlib import Path

from memoryui.store import Actor, Store, WriteResult, committed
from memoryui.tools.registry import ToolContext, call_tool

BOT = Actor.agent("ops-bot")
DAILY = "agents/ops-bot/memory/daily/2026-03-01.md"
MEM = "agents/ops-bot/MEMORY.md"
WAIT = 60.0  # bounds a hang only (a loaded machine)


def files_of(root: Path, sha: str) -> set[str]:
    out = subprocess.run(["git", "show", "--name-only", "--format=", sha], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def holds(root: Path, sha: str, path: str, text: str) -> bool:
    """The commit touches `path` and its version there contains `text`."""
    shown = subprocess.run(["git", "show", f"{sha}:{path}"], cwd=root, capture_output=True,
                           text=True).stdout
    return path in files_of(root, sha) and text in shown


def test_every_kind_of_write_returns_the_commit_that_holds_it(store: Store) -> None:
    made = [
        store.write(MEM, "# Memory\n\n- one\n", actor=BOT, tool="reflect"),
        store.append(DAILY, "\n## 09:00\n\nfirst\n", header="# 2026-03-01\n", actor=BOT,
                     tool="remember"),
        store.append(DAILY, "\n## 09:05\n\nsecond\n", actor=BOT, tool="remember"),
        store.rename(MEM, "agents/ops-bot/memory/notes/old.md", actor=BOT, tool="move"),
        store.delete("agents/ops-bot/memory/notes/old.md", actor=BOT, tool="forget"),
    ]
    for res in made:
        assert res.commit and res.record, res
        assert res.path in files_of(store.root, res.commit)
        assert store.commit_for(res.record) == res.commit  # noted for any process too
    assert holds(store.root, made[2].commit or "", DAILY, "second")


def test_nothing_changed_names_no_commit(store: Store) -> None:
    store.write(MEM, "same\n", actor=BOT, tool="reflect")
    res = store.write(MEM, "same\n", actor=BOT, tool="reflect")
    assert not res.changed and res.commit is None and res.record == ""
    assert store.commit_for(res, wait=0.5) is None


def test_a_deferred_write_is_found_by_its_record_without_the_writer_flushing(
        tmp_path: Path) -> None:
    """No committer process: the writer's own thread commits a tick later, and the handle
    its writes answered turns into that commit."""
    store = Store(tmp_path / "ws", commit_delay=0.2)
    try:
        first = store.append(DAILY, "\n## 09:00\n\nfirst\n", header="# 2026-03-01\n",
                             actor=BOT, tool="remember")
        entry = store.append(DAILY, "\n## 09:05\n\nin place\n", actor=BOT, tool="remember")
        whole = store.write(MEM, "# Memory\n\n- deferred\n", actor=BOT, tool="reflect")
        for res in (first, entry, whole):
            assert res.commit is None and res.record
        sha = store.commit_for(entry, wait=WAIT)
        assert sha and holds(store.root, sha, DAILY, "in place")
        sha = store.commit_for(whole.record, wait=WAIT)
        assert sha and holds(store.root, sha, MEM, "- deferred")
    finally:
        store.close()


def test_a_tool_write_links_to_its_commit(tmp_path: Path, monkeypatch) -> None:
    """An agent's tool writes through the primitive; what it returned names the commit."""
    from memoryui.store import writing

    results: list[WriteResult] = []
    update = writing.Writing.update

    def seen(self: Store, *args: object, **kwargs: object) -> WriteResult:
        res = update(self, *args, **kwargs)  # type: ignore[arg-type]
        results.append(res)
        return res
    monkeypatch.setattr(writing.Writing, "update", seen)
    store = Store(tmp_path / "ws", commit_delay=0.2)
    try:
        ctx = ToolContext(store, "ops-bot", BOT)
        call_tool(ctx, "remember", {"content": "the tool's entry"})
        call_tool(ctx, "remember", {"content": "the next entry"})
        assert [r.commit for r in results] == [None, None]
        sha = store.commit_for(results[-1], wait=WAIT)
        assert sha and holds(store.root, sha, results[-1].path, "the next entry")
    finally:
        store.close()


def _committer(root: str, ready: mp.Event, stop: mp.Event) -> None:
    store = Store(root, commit_delay=0.05)
    store.host_commits()
    ready.set()
    stop.wait(300)
    store.close()


def test_a_write_the_committer_process_commits_names_that_commit(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    Store(root).close()
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_committer, args=(str(root), ready, stop))
    proc.start()
    try:
        assert ready.wait(WAIT)
        store = Store(root, commit_delay=0.2)
        try:
            assert store.hosted
            res = store.write(MEM, "# Memory\n\n- by the committer\n", actor=BOT,
                              tool="reflect")
            assert res.commit is None
            sha = store.commit_for(res, wait=WAIT)
            assert sha and holds(root, sha, MEM, "by the committer")
        finally:
            store._stop.set()  # (this worker must not commit it in its own close)
            store.close()
    finally:
        stop.set()
        proc.join(WAIT)


def test_an_unknown_or_malformed_handle_names_no_commit(store: Store) -> None:
    started = time.monotonic()
    assert store.commit_for("0" * 32, wait=0.2) is None
    assert store.commit_for("not-a-record") is None
    assert time.monotonic() - started < 30


def test_the_noted_commits_keep_one_previous_generation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(committed, "ROTATE_AT", 50)
    old = {f"{i:032x}": f"{i:040x}" for i in range(3)}
    committed.note(tmp_path, old)
    committed.note(tmp_path, {"f" * 32: "e" * 40})
    assert (tmp_path / "committed.1").exists()
    assert committed.find(tmp_path, f"{1:032x}") == f"{1:040x}"
    assert committed.find(tmp_path, "f" * 32) == "e" * 40
    committed.note(tmp_path, {"d" * 32: "c" * 40})
    assert committed.find(tmp_path, f"{1:032x}") is None  # two generations back: gone
    assert committed.find(tmp_path, "f" * 32) == "e" * 40
