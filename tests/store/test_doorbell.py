"""The idle committer's doorbell: a write that starts a journal wakes a resting committer, a
ring never blocks or fails a write, and nothing at the bell's path but a FIFO is written to."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
from pathlib import Path

from memoryui.store import Actor, Store
from memoryui.store.doorbell import Doorbell
from tests.waiting import wait_for

MEM = "agents/a/memory/MEMORY.md"
LOG = "agents/a/memory/daily/2026-11-29.md"


def test_a_ring_with_no_committer_listening_changes_nothing(tmp_path: Path) -> None:
    bell = Doorbell(tmp_path)
    bell.ring()  # no bell yet
    assert not bell.path.exists()
    listener = Doorbell(tmp_path)
    assert listener.listen()
    listener.close()
    bell.ring()  # a bell no one listens at
    assert stat.S_ISFIFO(bell.path.lstat().st_mode)


def test_a_ring_is_heard_once(tmp_path: Path) -> None:
    listener = Doorbell(tmp_path)
    assert listener.listen()
    assert not listener.wait(0)
    for _ in range(3):
        Doorbell(tmp_path).ring()
    assert listener.wait(0)
    assert not listener.wait(0)  # the rings were taken together
    listener.close()


def test_the_bell_is_heard_in_a_process_with_over_a_thousand_files_open(tmp_path: Path
                                                                       ) -> None:
    """A busy committer holds many descriptors (repositories, databases, pipes): the bell's
    may be numbered past 1,023, where select() cannot wait on it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1_200
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    held = []
    try:
        while len(held) < 1_100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        listener = Doorbell(tmp_path)
        assert listener.listen()
        Doorbell(tmp_path).ring()
        assert listener.wait(0)
        assert not listener.wait(0)
        listener.close()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_no_file_or_link_at_the_bell_is_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    state = tmp_path / "state"
    state.mkdir()
    bell = Doorbell(state)
    bell.path.symlink_to(outside)
    bell.ring()
    assert outside.read_text() == "keep\n"
    assert bell.listen()  # the link is replaced by a FIFO; its target is left alone
    assert stat.S_ISFIFO(bell.path.lstat().st_mode) and outside.read_text() == "keep\n"
    bell.close()
    bell.path.unlink()
    bell.path.write_text("plain\n")
    bell.ring()
    assert bell.path.read_text() == "plain\n"
    bell.path.unlink()
    bell.path.mkdir()
    assert not bell.listen()  # a folder in its place: the committer looks on its own
    bell.ring()
    assert bell.path.is_dir()


def test_a_resting_committer_commits_a_write_it_is_rung_for(tmp_path: Path,
                                                           monkeypatch) -> None:
    """Once idle the committer looks on its own only every HOST_IDLE_EVERY seconds (made an
    hour here): the worker's write that starts the journal rings it awake, and the write
    is committed under its agent's name; closing it rings it too, so it stops at once."""
    from memoryui.store import committer as cadence

    monkeypatch.setattr(cadence, "IDLE_AFTER", 0.0)
    monkeypatch.setattr(cadence, "HOST_IDLE_EVERY", 3600.0)
    monkeypatch.setattr(cadence, "STAND_IN_AFTER", 3600.0)  # only the committer commits
    host = Store(tmp_path / "ws", commit_delay=0.05)
    assert host.host_commits(wait=False)
    assert host.committer.listening
    wait_for("the committer to rest", lambda: host.committer.resting)
    worker = Store(tmp_path / "ws", commit_delay=0.05)
    assert worker.hosted
    worker.append(LOG, "- rang the bell\n", actor=Actor.agent("a"), tool="remember")

    def committed() -> bool:
        shown = subprocess.run(["git", "log", "-1", "--format=%an", "--", LOG],
                               cwd=worker.root, capture_output=True, text=True)
        return shown.stdout.strip() == Actor.agent("a").name

    wait_for("the rung committer to commit the write", committed)
    worker.close()
    wait_for("the committer to rest again", lambda: host.committer.resting)
    ticking = host.committer._thread
    host.close()  # rings too: a resting committer stops now, not within the hour
    assert ticking is not None
    ticking.join(120)
    assert not ticking.is_alive()
