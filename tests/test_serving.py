"""`serve` with uvicorn's quiet loops: a dead worker is still replaced at once, the Date
header still follows the clock, a stop signal still ends the server gracefully, and each
worker keeps to a CPU of its own."""

from __future__ import annotations

import email.utils
import os
import select
import signal
import time
from pathlib import Path

import pytest

from memoryui import serving
from tests.api.realserver import RealServer

DEADLINE = 120.0  # bounds a hang only: CI is a loaded 2-core machine


def _healthy(server: RealServer) -> bool:
    try:
        return server.send("GET", "/healthz", headers={"Connection": "close"}).status == 200
    except OSError:
        return False


@pytest.fixture
def server(tmp_path: Path):
    srv = RealServer(tmp_path, workers=2)
    srv.migrate()
    srv.start(timeout=DEADLINE)
    yield srv
    srv.stop()


def test_this_uvicorn_is_the_one_the_quiet_loops_extend() -> None:
    """Otherwise `serve` falls back to uvicorn's own loops (and says so in its log)."""
    assert serving._fits()


@pytest.mark.skipif(not Path("/proc").is_dir() or not hasattr(os, "pidfd_open"),
                    reason="reads the process table, waits on a pidfd")
def test_a_killed_worker_is_replaced_without_waiting_for_the_health_check(server) -> None:
    """The supervisor checks its workers every HEALTH_EVERY seconds, but a worker's death
    (SIGCHLD) wakes it: the replacement is there long before the next check."""
    before = server.worker_pids()
    assert len(before) == 2
    victim = min(before)
    death = os.pidfd_open(victim)
    try:
        os.kill(victim, signal.SIGKILL)
        waiter = select.poll()  # (not select.select: a test process may hold 1,024 fds)
        waiter.register(death, select.POLLIN)
        assert waiter.poll(DEADLINE * 1000), "the worker did not die"
    finally:
        os.close(death)
    deadline = time.monotonic() + DEADLINE
    now = server.worker_pids()  # (each look is a pgrep: it paces the loop)
    while time.monotonic() < deadline and not (victim not in now and len(now) == 2):
        now = server.worker_pids()
    assert victim not in now and len(now) == 2, "the dead worker was not replaced"
    assert _healthy(server)
    if len(CPUS) > 1:  # the replacement keeps to the CPU the dead worker left free, once
        # it runs its server (it starts, importing Django, where the kernel puts it)
        while time.monotonic() < deadline and not all(_pinned(pid) for pid in now):
            now = server.worker_pids()
        assert _two_cpus(now)


CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _cpus(pid: int, kept_only: bool = False) -> set[str]:
    """The CPU lists of the process's threads (one entry when they all agree); with
    `kept_only`, of the threads a worker keeps to its CPU: its first (the event loop's)
    and its request threads."""
    lists = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
            name = (task / "comm").read_text().strip()
        except OSError:  # the thread ended meanwhile
            continue
        if kept_only and task.name != str(pid) and not name.startswith("request_"):
            continue
        lists.add(status.split("Cpus_allowed_list:")[1].split()[0])
    return lists


def _pinned(pid: int) -> bool:
    cpus = _cpus(pid, kept_only=True)
    return len(cpus) == 1 and next(iter(cpus)).isdigit()


def _one_cpu(pid: int) -> int:
    (only,) = _cpus(pid, kept_only=True)
    assert only.isdigit(), f"worker {pid} may run on CPUs {only}, not on one"
    return int(only)


def _two_cpus(workers: set[int]) -> bool:
    """Two workers, each on one CPU of those the server may use, not the same one."""
    cpus = {_one_cpu(pid) for pid in workers}
    return len(workers) == 2 and len(cpus) == 2 and cpus <= set(CPUS)


@pytest.mark.skipif(len(CPUS) < 2, reason="one CPU: there is nothing to spread workers over")
def test_each_worker_keeps_to_a_cpu_of_its_own_and_the_supervisor_to_none(server) -> None:
    """Each worker's event loop and request threads stay on one CPU, so they hand the GIL
    to each other without a wakeup across cores; two workers take two CPUs; the
    supervisor, which commits and runs git's housekeeping, may run anywhere."""
    for _ in range(8):  # requests, so that each worker has request threads to look at
        assert _healthy(server)
    deadline = time.monotonic() + DEADLINE
    workers = server.worker_pids()  # (a worker may still be starting: /healthz needs only one)
    while time.monotonic() < deadline and not (
            len(workers) == 2 and all(_pinned(pid) for pid in workers)):
        workers = server.worker_pids()
    assert _two_cpus(workers)
    assert _cpus(server.proc.pid) == _cpus(os.getpid())


def test_workers_run_anywhere_when_pinning_is_off(tmp_path: Path) -> None:
    srv = RealServer(tmp_path, workers=2, env={"MEMORYUI_PIN_WORKERS": "0"})
    srv.migrate()
    srv.start(timeout=DEADLINE)
    try:
        for pid in srv.worker_pids():
            assert _cpus(pid) == _cpus(os.getpid())
        assert _healthy(srv)
    finally:
        srv.stop()


def test_a_new_worker_takes_the_cpu_fewest_live_workers_keep_to() -> None:
    assert serving.pick_cpu([0, 1], []) == 0
    assert serving.pick_cpu([0, 1], [0]) == 1
    assert serving.pick_cpu([0, 1], [0, 1]) == 0
    assert serving.pick_cpu([0, 1], [1, 0, 1]) == 0  # a dead worker's CPU is free again
    assert serving.pick_cpu([2, 5, 7], [2, 5]) == 7
    assert serving.pick_cpu([5, 7, 2], []) == 5  # the order handed out: from the pid's pick


def test_servers_start_handing_out_cpus_at_different_ones(settings) -> None:
    """Each server's list holds every CPU it may use once, from a start its pid picks."""
    settings.MEMORYUI_PIN_WORKERS = True
    cpus = serving.cpus_to_pin()
    if len(CPUS) < 2:
        assert cpus == []
        return
    assert sorted(cpus) == CPUS
    assert cpus[0] == CPUS[os.getpid() % len(CPUS)]
    assert cpus == CPUS[CPUS.index(cpus[0]):] + CPUS[:CPUS.index(cpus[0])]
    settings.MEMORYUI_PIN_WORKERS = False
    assert serving.cpus_to_pin() == []


def test_the_date_header_follows_the_clock(server) -> None:
    """Workers tick once a second instead of ten times; the Date header still moves."""
    first = server.send("GET", "/healthz", headers={"Connection": "close"})
    shown = email.utils.parsedate_to_datetime(first.headers["Date"]).timestamp()
    assert abs(shown - time.time()) < 5
    deadline = time.monotonic() + DEADLINE
    moved = shown  # each look is a request on a new connection: it paces the loop
    while time.monotonic() < deadline and moved <= shown:
        later = server.send("GET", "/healthz", headers={"Connection": "close"})
        moved = email.utils.parsedate_to_datetime(later.headers["Date"]).timestamp()
    assert moved > shown
    assert abs(moved - time.time()) < 5


def test_a_stop_signal_ends_the_server_gracefully(server) -> None:
    """SIGTERM wakes the supervisor and the workers' loops at once; the server exits by
    itself (not by the test's SIGKILL after its timeout) and leaves no worker behind."""
    workers = server.worker_pids()
    code = server.stop()
    assert code is not None and code != -signal.SIGKILL
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or b"zombie" in _state(pid)


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/status").read_bytes().lower()
    except OSError:
        return b"zombie"
