"""bench_stock's reading of the server cores' time: which cores, and the host's share."""

from __future__ import annotations

import os
import sys
import time

import pytest

from bench.bench_stock import _cpu_list, cpu_ticks, steal_share


def test_a_cpu_list_reads_as_taskset_writes_it() -> None:
    assert _cpu_list("0") == [0]
    assert _cpu_list("0-2,5") == [0, 1, 2, 5]


def test_the_stolen_share_is_steal_over_all_the_time_that_passed() -> None:
    before = [100, 0, 20, 500, 0, 0, 0, 10, 0, 0]
    after = [160, 0, 30, 520, 0, 0, 0, 20, 0, 0]  # 100 ticks passed, 10 of them stolen
    assert steal_share(before, after) == pytest.approx(10.0)
    assert steal_share(before, before) == 0.0  # no tick passed: nothing to divide


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/stat")
def test_the_ticks_of_the_cores_this_process_runs_on_grow_while_it_works() -> None:
    cores = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    before = cpu_ticks(cores)
    end = time.process_time() + 0.1
    while time.process_time() < end:  # 100 ms of this process's CPU, whatever the load
        pass
    after = cpu_ticks(cores)
    busy = sum(after[:3]) - sum(before[:3])  # user, nice, system
    assert busy > 0
    assert 0.0 <= steal_share(before, after) <= 100.0
