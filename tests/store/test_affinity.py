"""A `serve` worker kept to one CPU lets its background threads and the programs its
requests start (git) run on every CPU: a first start's history read or a history page's
`git log` then takes an idle core instead of the one the worker's requests wait for."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from memoryui.store import affinity
from memoryui.store.gitcli import run_git
from memoryui.store.threadnames import named

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _status_cpus(pid: int) -> str:
    status = Path(f"/proc/{pid}/status").read_text()
    return status.split("Cpus_allowed_list:")[1].split()[0]


@pytest.mark.skipif(len(CPUS) < 2, reason="one CPU: nothing to keep a thread to")
def test_a_kept_thread_keeps_its_cpu_and_its_background_threads_and_programs_do_not(
        monkeypatch) -> None:
    monkeypatch.setattr(affinity, "_wide", None)  # put back after the test
    seen: dict[str, object] = {}

    def worker() -> None:  # a thread of its own: the test's own thread is never kept
        affinity.keep_to(CPUS[-1])
        seen["kept"] = os.sched_getaffinity(0)
        background = threading.Thread(
            target=named(lambda: seen.__setitem__("background", os.sched_getaffinity(0))))
        background.start()
        background.join()
        with subprocess.Popen(["sleep", "60"]) as child:
            try:
                seen["child before"] = _status_cpus(child.pid)
                affinity.widen(child.pid)
                seen["child"] = _status_cpus(child.pid)
            finally:
                child.kill()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen["kept"] == {CPUS[-1]}
    assert seen["background"] == set(CPUS)
    assert seen["child before"] == str(CPUS[-1])  # a program inherits its thread's CPU ...
    assert seen["child"] == _status_cpus(os.getpid())  # ... until it is let go
    assert os.sched_getaffinity(0) == set(CPUS)  # the test's thread was never kept


def test_outside_a_kept_worker_nothing_changes(monkeypatch) -> None:
    monkeypatch.setattr(affinity, "_wide", None)
    affinity.widen_thread()
    affinity.widen(os.getpid())
    assert sorted(os.sched_getaffinity(0)) == CPUS


def test_run_git_lets_each_git_it_starts_run_anywhere(tmp_path: Path, monkeypatch) -> None:
    """run_git still answers as before (output, input, git's own error), and hands each
    git it started to `widen` while it runs."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    widened: list[int] = []
    monkeypatch.setattr(affinity, "widen", widened.append)
    assert run_git(tmp_path, "rev-parse", "--git-dir").strip() == b".git"
    blob = run_git(tmp_path, "hash-object", "--stdin", input=b"hello\n").strip()
    assert blob == b"ce013625030ba8dba906f756967f9e9ca394464a"
    with pytest.raises(subprocess.CalledProcessError) as failed:
        run_git(tmp_path, "rev-parse", "--verify", "no-such-ref")
    assert b"no-such-ref" in failed.value.stderr or b"fatal" in failed.value.stderr
    assert len(widened) == 3 and os.getpid() not in widened
