"""The benches' CPU split: a named thread's CPU lands in its group, beside the machine's; the
server cores' ticks and the host's stolen share."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from bench import cputime
from memoryui.store.threadnames import named

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _burn(seconds: float) -> None:
    """Spend `seconds` of this thread's own CPU (not wall time: the same under load)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_request_threads_cpu_is_counted_under_its_name() -> None:
    burnt, done = threading.Event(), threading.Event()

    def work() -> None:
        _burn(0.08)
        burnt.set()
        done.wait(60)  # alive until read: an ended thread's CPU leaves /proc with it

    before = cputime.snapshot(os.getpid())
    worker = threading.Thread(target=named(work), name="memoryui-request_9")
    worker.start()
    assert burnt.wait(60)
    split = cputime.per_call(cputime.spent(before, cputime.snapshot(os.getpid())), calls=1)
    done.set()
    worker.join()
    # 80 ms of the thread's CPU, read in clock ticks of 10 ms: at least 60 ms shows
    assert split["supervisor: request threads"] >= 60
    assert split["machine"] >= split["supervisor: request threads"] - 10
    assert 0 < split["cores busy %"] <= 100
    text = cputime.describe(split)
    assert text.startswith("machine ") and "supervisor: request threads" in text


def test_nothing_measured_says_so() -> None:
    now = cputime.snapshot(os.getpid())
    assert cputime.per_call(cputime.spent(now, now), calls=0) == {}
    assert cputime.describe({}) == "not measured (no /proc)"


CHILD = """
import hashlib, os, sys, threading, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
data = b"x" * (4 << 20)

def burn():  # hashing a large buffer lets go of the GIL: both threads want the one core
    end = time.thread_time() + 0.3
    while time.thread_time() < end:
        hashlib.sha256(data)

other = threading.Thread(target=burn)
other.start()
burn()
other.join()
print("done", flush=True)
sys.stdin.read()  # until the test lets go
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="keeps a child to one CPU")
def test_a_workers_wait_for_a_core_is_counted() -> None:
    """A worker (a child of the server's supervisor: here, of the test) whose two busy
    threads share one core: its first thread, the event loop's, waits for the core about
    as long as the other runs."""
    import subprocess

    with subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as child:
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "done"
            waited = cputime.thread_waits([child.pid])
            everyone = cputime.core_waits(os.getpid())  # this child and any other
        finally:
            child.kill()
    assert waited >= 0.05  # of the other thread's 0.3 s on the core
    assert everyone >= waited


def test_a_cpu_list_reads_as_taskset_writes_it() -> None:
    assert cputime._cpu_list("0") == [0]
    assert cputime._cpu_list("0-2,5") == [0, 1, 2, 5]


def test_the_stolen_share_is_steal_over_all_the_time_that_passed() -> None:
    before = [100, 0, 20, 500, 0, 0, 0, 10, 0, 0]
    after = [160, 0, 30, 520, 0, 0, 0, 20, 0, 0]  # 100 ticks passed, 10 of them stolen
    assert cputime.steal_share(before, after) == pytest.approx(10.0)
    assert cputime.steal_share(before, before) == 0.0  # no tick passed: nothing to divide


def test_the_ticks_of_the_cores_this_process_runs_on_grow_while_it_works() -> None:
    cores = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    before = cputime.cpu_ticks(cores)
    end = time.process_time() + 0.1
    while time.process_time() < end:  # 100 ms of this process's CPU, whatever the load
        pass
    after = cputime.cpu_ticks(cores)
    busy = sum(after[:3]) - sum(before[:3])  # user, nice, system
    assert busy > 0
    assert 0.0 <= cputime.steal_share(before, after) <= 100.0
