"""The supervisor moves a worker off a CPU whose workers do more than another's: the
choice of move, and a real move of a busy process's threads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memoryui import cpubalance

CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def test_the_move_that_evens_out_the_cpus_best_is_chosen() -> None:
    # two busy workers on CPU 0, two idle on CPU 1: one busy one moves
    assert cpubalance.move({1: 0.9, 2: 0.8, 3: 0.1, 4: 0.0}, {1: 0, 2: 0, 3: 1, 4: 1},
                           [0, 1]) == (2, 1)
    # one busy and one idle against two halves: no single move helps
    assert cpubalance.move({1: 0.65, 2: 0.05, 3: 0.5, 4: 0.45}, {1: 0, 2: 0, 3: 1, 4: 1},
                           [0, 1]) is None
    # within a quarter of a core: left alone
    assert cpubalance.move({1: 0.6, 2: 0.4}, {1: 0, 2: 1}, [0, 1]) is None
    # a CPU with no worker at all takes one
    assert cpubalance.move({1: 0.5, 2: 0.5}, {1: 0, 2: 0}, [0, 1]) == (1, 1)


BUSY = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
mark = time.thread_time()
while True:  # busy; says so after each 0.2 s of its own CPU
    if time.thread_time() - mark >= 0.2:
        print("used", flush=True)
        mark = time.thread_time()
"""


def _until_both_used(procs: list[subprocess.Popen]) -> None:
    """Until each busy process says it used 0.2 s more CPU (each look then measures work
    done, however busy the machine is): a blocking read of its line, no polling."""
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "used"


@pytest.mark.skipif(len(CPUS) < 2, reason="one CPU: nowhere to move a worker to")
def test_a_busy_worker_is_moved_to_the_idle_cpu() -> None:
    """Two busy processes kept to one CPU, a sleeping one to another: after two looks
    (its CPU measured over the time between them) one busy process runs on the other CPU,
    and the balancer keeps looking every BALANCE_EVERY seconds."""
    hot, cold = CPUS[0], CPUS[1]
    procs = [subprocess.Popen([sys.executable, "-c", BUSY, str(hot)], stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    procs.append(subprocess.Popen(["sleep", "60"]))
    os.sched_setaffinity(procs[2].pid, {cold})
    try:
        placed = {procs[0].pid: hot, procs[1].pid: hot, procs[2].pid: cold}
        balancer = cpubalance.Balancer(CPUS)
        assert balancer.look(placed, time.monotonic()) is None  # nothing measured yet
        deadline = time.monotonic() + 60
        moved = None
        while moved is None and time.monotonic() < deadline:
            _until_both_used(procs[:2])  # the window the CPU is measured over
            moved = balancer.look(placed, time.monotonic())
        assert moved is not None and moved[0] in placed and moved[1] == cold
        assert placed[moved[0]] == hot and moved[0] != procs[2].pid
        status = Path(f"/proc/{moved[0]}/status").read_text()
        assert status.split("Cpus_allowed_list:")[1].split()[0] == str(cold)
        assert balancer.busy
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
