"""Rebuilds, hosted workers and several processes keep one search index current and complete."""

from __future__ import annotations

import multiprocessing
import time

import pytest

from memoryui.search import PostgresSearchIndex, SearchIndex, updater
from memoryui.store import Actor, Store
from memoryui.store.committerlock import CommitterLock
from tests.search.helpers import ALICE, BOT, daily, note, paths


def test_a_hosted_worker_finds_its_own_write_before_its_host_committed_it(tmp_path):
    """Under a server the committer process commits and indexes the workers' agent writes, and a
    worker drains its own queue only every 2 s; a search it serves right after a write
    drains first and finds it (nothing is committed yet: the host never ticks here)."""
    s = Store(tmp_path / "ws", commit_delay=30)
    live = CommitterLock(s.git.state_dir)  # a committer that never ticks here
    assert live.hold()
    idx = SearchIndex(tmp_path / "s.db", catch_up_interval=3600)
    idx.attach(s)
    path = s.path_for("note", "ops-bot", "quick")
    s.write(path, "lightning fast\n", actor=BOT, tool="test")
    assert s.head() is None
    assert paths(idx.search("lightning", catch_up=False)) == [path]  # the drain found it
    s.close()
    live.close()


def test_a_hosted_worker_leaves_the_indexing_of_its_agent_writes_to_its_host(
        tmp_path, monkeypatch):
    """Under agent traffic a daily log has changed again by a worker's next background
    drain, so "skip what the index already holds" skipped nothing: every worker re-read and
    re-tokenized every log it wrote, every 2 s, holding up its requests. The drain leaves
    writes its host commits (and indexes); it indexes what the worker committed itself (a
    UI edit, flushed at once); a search it answers still drains everything first."""
    monkeypatch.setattr(updater, "DRAIN_EVERY_HOSTED", 0.01)
    s = Store(tmp_path / "ws", commit_delay=30)
    live = CommitterLock(s.git.state_dir)  # a committer that never ticks here
    assert live.hold()
    idx = SearchIndex(tmp_path / "s.db", catch_up_interval=3600)
    idx.attach(s)
    edited = note(s, "ops-bot", "runbook", "falcon failover steps\n", actor=ALICE)
    s.flush()  # as the editor does: this worker commits it, not the host
    log = daily(s, "ops-bot", "2026-11-20", ("09:00", "kestrel paged twice"))
    assert s.hosted and s.host_indexes == {log}
    while (drainer := idx._drainer) is not None:  # its background drains end
        drainer.join(30)
    assert set(idx._stamps([edited, log])) == {edited}  # as indexed, nothing drained first
    assert paths(idx.search("kestrel", catch_up=False)) == [log]  # read your writes
    # A worker that answers no search keeps no growing list of what its host indexes:
    # past LEFT_TO_HOST_FOR its host has long committed and indexed them.
    monkeypatch.setattr(updater, "LEFT_TO_HOST_FOR", -1.0)
    daily(s, "ops-bot", "2026-11-21", ("09:00", "heron landed"))
    while (drainer := idx._drainer) is not None:
        drainer.join(30)
    idx.enqueue([edited])  # a next write restarts the drains, which let the old one go
    while (drainer := idx._drainer) is not None:
        drainer.join(30)
    assert s.host_indexes == set() and idx._queue == {}
    s.close()
    live.close()


# -- rebuilding, several workspaces and processes -------------------------------------------


def test_rebuild_gives_the_same_index_as_incremental_updates(store, index, tmp_path):
    for i in range(12):
        note(store, "ops-bot", f"n{i}", f"# Topic {i}\n\nkafka lag {i} and redis {i % 3}\n")
    daily(store, "billing-agent", "2026-02-01", ("08:00", "invoice run kafka"))
    store.delete(store.path_for("note", "ops-bot", "n3"), actor=BOT, tool="test")
    store.write(store.path_for("note", "ops-bot", "n5"), "# Topic 5\n\nno more queues\n",
                actor=BOT, tool="test")
    fresh = SearchIndex(tmp_path / "fresh.db", catch_up_interval=0, background=False)
    fresh.attach(store)
    progress: list[tuple[int, int]] = []
    stats = fresh.rebuild(progress=lambda done, total: progress.append((done, total)))
    assert stats["files"] == index.count() == 12
    assert progress[-1] == (12, 12)
    assert fresh.indexed_paths() == index.indexed_paths()
    for q in ("kafka", "redis", '"kafka lag"', "topic", "queues", "invoice"):
        a, b = index.search(q, limit=50), fresh.search(q, limit=50)
        assert sorted(paths(a)) == sorted(paths(b)), q
        assert a.total == b.total


def test_rebuild_keeps_history_order_for_recency(store, tmp_path):
    text = "# Same\n\nidentical words\n"
    older = note(store, "ops-bot", "old", text)
    newer = note(store, "ops-bot", "new", text)
    idx = SearchIndex(tmp_path / "r.db", catch_up_interval=3600)
    idx.attach(store)
    idx.rebuild()
    assert paths(idx.search("identical")) == [newer, older]


def test_a_rebuild_in_batches_keeps_every_file_in_history_order(store, tmp_path, monkeypatch):
    """A rebuild reads ahead and inserts in batches (200k files are never all held): every
    file is in, newest first, and FTS5 merges its segments as usual afterwards."""
    from memoryui.search import sqlite as search_sqlite

    monkeypatch.setattr(search_sqlite, "INSERT_BATCH", 3)
    made = [note(store, "ops-bot", f"n{i:02d}", f"# Batch {i}\n\nsame words\n")
            for i in range(11)]
    idx = SearchIndex(tmp_path / "b.db", catch_up_interval=3600)
    idx.attach(store)
    assert idx.rebuild()["files"] == 11
    assert paths(idx.search("same words", limit=50)) == made[::-1]
    conn = idx._conn()
    config = dict(conn.execute("SELECT k, v FROM fts_config WHERE k IN "
                               "('automerge', 'crisismerge')").fetchall())
    assert config == {"automerge": 4, "crisismerge": 16}


def test_a_rebuild_that_fails_leaves_the_old_index(store, tmp_path, monkeypatch):
    from memoryui.search import documents
    from memoryui.search import sqlite as search_sqlite

    monkeypatch.setattr(search_sqlite, "INSERT_BATCH", 2)
    for i in range(6):
        note(store, "ops-bot", f"n{i}", f"kept words {i}\n")
    idx = SearchIndex(tmp_path / "f.db", catch_up_interval=3600)
    idx.attach(store)
    idx.rebuild()
    real, calls = documents.DocReader.read, []

    def failing(self, path, seen=None):
        calls.append(path)
        if len(calls) == 5:
            raise OSError("disk went away")
        return real(self, path, seen)

    monkeypatch.setattr(documents.DocReader, "read", failing)
    with pytest.raises(OSError, match="disk went away"):
        idx.rebuild()
    monkeypatch.setattr(documents.DocReader, "read", real)
    assert idx.count() == 6 and len(idx.search("kept", limit=50).hits) == 6


def _spec(index: SearchIndex) -> tuple[str, str]:
    return (index.backend, str(index.path) if index.backend == "sqlite" else index.dsn)


def _open(spec: tuple[str, str], **kw: object) -> SearchIndex:
    """Another handle on the same index storage (another process would open it this way)."""
    backend, where = spec
    return SearchIndex(where, **kw) if backend == "sqlite" else PostgresSearchIndex(where, **kw)


def test_another_workspace_starts_a_fresh_index(tmp_path, store, index):
    note(store, "ops-bot", "here", "only in the first workspace\n")
    other = Store(tmp_path / "ws2")
    idx2 = _open(_spec(index), catch_up_interval=0, background=False)
    idx2.attach(other)
    assert idx2.search("workspace").hits == []
    other.close()


def _writer(spec: tuple[str, str], ws: str, scope: str, n: int) -> None:
    s = Store(ws)
    idx = _open(spec, catch_up_interval=3600)
    idx.attach(s)
    for i in range(n):
        s.write(s.path_for("note", scope, f"n{i}"), f"concurrent note {i}\n",
                actor=Actor.agent(scope), tool="test")
    s.close()


def test_several_processes_update_one_index(store, index):
    index.search("warmup")  # creates the file and the first scan
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(_spec(index), str(store.root), f"bot-{k}", 15))
             for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    res = index.search("concurrent", limit=100, catch_up=False)
    assert res.total == 45
    assert index.catch_up() == []  # every write was already indexed by its own process


def test_a_change_another_worker_already_indexed_is_not_indexed_again(store, index):
    """Every worker of a server drains the writes it served; when several wrote one daily
    log, the first drain indexes the file as it is, and the others find it current."""
    p = daily(store, "ops-bot", "2026-11-20", ("09:00", "rolled back payments"))
    index.drain()
    index.enqueue([p], time.time())  # the same write, as another worker's queue holds it
    assert index.drain() == 0
    assert paths(index.search("rolled back")) == [p]
    store.append(p, "- 09:30 paged kestrel\n", actor=BOT, tool="remember")
    assert index.drain() == 1  # a new version is indexed
    assert paths(index.search("kestrel")) == [p]
    assert paths(index.search("rolled back")) == [p]


def test_the_background_drain_reindexes_a_busy_big_log_at_most_every_few_seconds(
        store, tmp_path, monkeypatch):
    """Under steady agent writes a daily log is re-indexed whole after every commit tick;
    the background drain holds a big one back for REINDEX_EVERY seconds. A search, in the
    writing process or in another one (a second index and store on the same workspace, as
    another worker), indexes what was written lately first and finds the newest entries;
    small files are not held."""
    monkeypatch.setattr(updater, "REINDEX_BIG", 1000)
    monkeypatch.setattr(updater, "REINDEX_EVERY", 3600.0)  # not due within this test
    writer = SearchIndex(tmp_path / "shared.sqlite3", catch_up_interval=0, background=False)
    writer.attach(store)
    worker = Store(store.root)
    other = SearchIndex(tmp_path / "shared.sqlite3", catch_up_interval=0, background=False)
    other.attach(worker)
    try:
        log = daily(store, "ops-bot", "2026-11-20", ("09:00", "rolled back payments " * 80))
        small = note(store, "ops-bot", "disk", "The disk on db-3 is nearly full.\n")
        writer.drain(hold_busy=True)  # (or the background drain did: both hold the lock)
        assert paths(other.search("rolled back", catch_up=False)) == [log]

        store.append(log, "- 09:30 paged kestrel\n", actor=BOT, tool="remember")
        store.write(small, "The disk on db-3 was resized.\n", actor=BOT, tool="test")
        writer.drain(hold_busy=True)
        assert writer._queue.keys() == {log}  # the big log waits in the background
        assert paths(other.search("kestrel", catch_up=False)) == [log]  # read your writes
        assert paths(other.search("resized", catch_up=False)) == [small]
        assert paths(writer.search("kestrel", catch_up=False)) == [log]

        monkeypatch.setattr(updater, "REINDEX_EVERY", 0.0)  # the window has passed
        store.append(log, "- 10:00 paged heron\n", actor=BOT, tool="remember")
        writer.drain(hold_busy=True)
        assert writer._queue == {}
        assert paths(other.search("heron", catch_up=False)) == [log]
    finally:
        writer.close()
        other.close()
        worker.close()


def test_a_search_finds_what_another_worker_wrote_before_its_committer_indexed_it(
        tmp_path, index):
    """Under a server with several workers an agent's search may reach another worker than
    its write did, while the committer has not committed the write yet, or has committed it
    and not indexed it yet (it indexes in its own time). The search indexes both first."""
    committer = Store(tmp_path / "ws", commit_delay=30)  # commits when told, indexes never
    live = CommitterLock(committer.git.state_dir)
    assert live.hold()
    writing = Store(tmp_path / "ws", commit_delay=30)  # a worker that leaves both to it
    searching = Store(tmp_path / "ws", commit_delay=30)  # the worker the search reaches
    index.attach(searching)
    try:
        log = daily(writing, "ops-bot", "2026-11-20", ("09:00", "paged kestrel"))
        assert writing.head() is None and writing.hosted
        assert paths(index.search("kestrel", catch_up=False)) == [log]  # journaled only

        writing.append(log, "- 09:30 paged heron\n", actor=BOT, tool="remember")
        committer.flush()  # committed by the committer, not indexed by anyone
        assert committer.head() is not None and not committer.git.journaled_paths()
        assert paths(index.search("heron", catch_up=False)) == [log]
        assert paths(index.search("kestrel", catch_up=False)) == [log]
    finally:
        for s in (writing, searching, committer):
            s.close()
        live.close()
