"""A full disk is a clear DiskFull (507 "the workspace disk is full"), the old file stays
intact, and writes work again once there is room. Real ENOSPC from a small tmpfs
(tests/fulldisk.py)."""

from __future__ import annotations

import logging
import os

import pytest

from memoryui.store import Actor, DiskFull, Store, writing
from memoryui.store.records import Record
from memoryui.store.room import FullDiskBackoff
from tests import fulldisk
from tests.fulldisk import Disk
from tests.waiting import wait_for

small_disk = fulldisk.small_disk  # the fixture

MEM = "agents/ops-bot/memory/MEMORY.md"
DAILY = "agents/ops-bot/memory/daily/2026-03-01.md"
BOT = Actor.agent("ops-bot")


def test_disk_full_is_a_clear_error_and_the_old_file_stays(small_disk: Disk) -> None:
    store = Store(small_disk.path / "ws")
    try:
        store.write(MEM, "# Memory\n\n- the old fact\n", actor=BOT, tool="reflect")
        store.append(DAILY, "\n## 09:00\n\nfirst\n", header="# 2026-03-01\n", actor=BOT,
                     tool="remember")
        head = store.head()
        small_disk.fill()

        big = "# Memory\n\n" + "".join(f"- fact {i}: {os.urandom(8).hex()}\n"
                                        for i in range(3000))
        with pytest.raises(DiskFull) as info:
            store.write(MEM, big, actor=BOT, tool="reflect")
        assert str(info.value) == "the workspace disk is full"
        assert (info.value.status, info.value.code) == (507, "insufficient_storage")
        with pytest.raises(DiskFull):
            store.append(DAILY, "\n## 10:00\n\n" + big, actor=BOT, tool="remember")

        assert store.read(MEM) == "# Memory\n\n- the old fact\n"
        assert store.read(DAILY) == "# 2026-03-01\n\n## 09:00\n\nfirst\n"
        leftovers = [p.name for p in (store.root / MEM).parent.rglob(".*")]
        assert leftovers == []  # no temp file left behind
        assert store.head() == head

        small_disk.free()
        store.write(MEM, big, actor=BOT, tool="reflect")
        assert store.read(MEM) == big
        assert store.head() != head and store.pending() == []
    finally:
        store.close()


ALICE = Actor.user("alice")


def authors(store: Store) -> list[str]:
    return [c.actor for c in store.log(limit=100)]


def test_an_emptying_save_on_a_full_disk_is_refused_and_never_committed(
        small_disk: Disk) -> None:
    """Emptying a file needs no data blocks, so it got through on a full disk while its
    commit could not: the save was answered as failed yet the file was empty, and the
    person was later committed as its author."""
    store = Store(small_disk.path / "ws", commit_delay=3600)
    try:
        store.write(MEM, "# Memory\n\n- the old fact\n", actor=BOT, tool="reflect")
        store.flush()
        small_disk.fill()
        with pytest.raises(DiskFull):
            store.write(MEM, "", actor=ALICE, tool="edit")
        with pytest.raises(DiskFull):
            store.delete(MEM, actor=ALICE, tool="delete")
        assert (store.root / MEM).read_bytes() == b"# Memory\n\n- the old fact\n"
        assert not store.git.has_uncommitted()
        small_disk.free()
        store.flush()
        assert authors(store) == ["agent:ops-bot"] and store.pending() == []
    finally:
        store.close()


def test_a_change_whose_record_cannot_be_journaled_is_taken_back(
        small_disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fills between the room check and the journal's record (here: no check):
    a replaced file, an entry appended in place and a removed file all come back."""
    monkeypatch.setattr(writing, "ensure_room", lambda where, needed: None)
    store = Store(small_disk.path / "ws")
    try:
        store.write(MEM, "# Memory\n\n- the old fact\n", actor=BOT, tool="reflect")
        store.append(DAILY, "\n## 09:00\n\nfirst\n", header="# 2026-03-01\n", actor=BOT,
                     tool="remember")
        head = store.head()
        small_disk.fill()
        with pytest.raises(DiskFull):
            store.write(MEM, "", actor=ALICE, tool="edit")
        with pytest.raises(DiskFull):
            store.append(DAILY, "\n## 10:00\n\nsmall\n", actor=BOT, tool="remember")
        with pytest.raises(DiskFull):
            store.delete(MEM, actor=ALICE, tool="delete")
        assert store.read(MEM) == "# Memory\n\n- the old fact\n"
        assert store.read(DAILY) == "# 2026-03-01\n\n## 09:00\nfirst\n".replace(
            "09:00\n", "09:00\n\n")
        assert sorted(p.name for p in (store.root / MEM).parent.rglob(".*")) == []
        small_disk.free()
        store.flush()
        assert store.head() == head and store.pending() == []
    finally:
        store.close()


def test_a_journal_record_cut_short_by_a_full_disk_leaves_no_torn_line(
        small_disk: Disk) -> None:
    """A record the disk has room for only in part is taken off again: the next one is not
    glued to it, so the writes before and after it are committed by their authors."""
    store = Store(small_disk.path / "ws", commit_delay=3600)
    try:
        store.write(MEM, "before\n", actor=BOT, tool="reflect")
        small_disk.fill()
        big = os.urandom(64 * 1024).hex().encode()
        with pytest.raises(DiskFull):
            store.git.record(Record("memory/world/x.md", store.git.blob_id(big), ALICE,
                                    "edit", data=big))
        small_disk.free()
        store.write("memory/world/after.md", "after\n", actor=ALICE, tool="edit")
        store.flush()
        assert sorted(authors(store)) == ["agent:ops-bot", "user:alice"]
        assert store.pending() == [] and store.file_at("memory/world/after.md", "HEAD")
    finally:
        store.close()



def test_the_committer_backs_off_on_a_full_disk_and_logs_it_once(
        small_disk: Disk, caplog: pytest.LogCaptureFixture) -> None:
    """A tick every few milliseconds on a full disk logs the disk once (not "HEAD moved"
    at every tick), waits longer each time, and commits once there is room."""
    if not small_disk.mounted:
        pytest.skip("libgit2 writes outside Python's os calls: this needs the real tmpfs")
    writer = Store(small_disk.path / "ws", commit_delay=3600)  # journals; never ticks here
    try:
        writer.write(MEM, "# Memory\n\n- kept while the disk is full\n", actor=BOT,
                     tool="reflect")
        small_disk.fill()
        host = Store(small_disk.path / "ws", commit_delay=0.01)
        try:
            backoff = host.committer.backoff = FullDiskBackoff(first=0.02, cap=0.16)
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="memoryui.store"):
                host.host_commits()
                wait_for("eight failed ticks", lambda: backoff.failures >= 8)
                texts = [r.getMessage() for r in caplog.records]
                assert len(texts) == 1 and "is full" in texts[0], texts
                small_disk.free()
                wait_for("the commit", lambda: not host.git.has_uncommitted())
                wait_for("the episode's end", lambda: not backoff.active)
            texts = [r.getMessage() for r in caplog.records]
            assert len(texts) == 2 and "room again" in texts[1], texts
            assert authors(host) == ["agent:ops-bot"]
        finally:
            host.close()
    finally:
        writer.close()
