"""`serve` with uvicorn's quiet loops: a dead worker is still replaced at once, the Date
header still follows the clock, and a stop signal still ends the server gracefully."""

from __future__ import annotations

import email.utils
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memoryui import serving
from tests.api.realserver import RealServer

DEADLINE = 120.0  # bounds a hang only: CI is a loaded 2-core machine


def _workers(server: RealServer) -> set[int]:
    out = subprocess.run(["pgrep", "-P", str(server.proc.pid)], capture_output=True,
                         text=True).stdout.split()
    return {int(pid) for pid in out if _is_worker(int(pid))}


def _is_worker(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in cmdline and b"resource_tracker" not in cmdline


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
    before = _workers(server)
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
    now = _workers(server)  # (each look is a pgrep: it paces the loop)
    while time.monotonic() < deadline and not (victim not in now and len(now) == 2):
        now = _workers(server)
    assert victim not in now and len(now) == 2, "the dead worker was not replaced"
    assert _healthy(server)


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
    workers = _workers(server)
    code = server.stop()
    assert code is not None and code != -signal.SIGKILL
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or b"zombie" in _state(pid)


def _state(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/status").read_bytes().lower()
    except OSError:
        return b"zombie"
