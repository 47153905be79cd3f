"""`manage.py committer` gives way to the server's requests: its threads run at the lowest
niceness, and in a session of its own (a shell's `setsid`, a process manager) the whole
session gets a low CPU weight, since Linux shares a core between sessions before it weighs
their threads. Started inside another session (`serve` starts it so), it leaves that
session's weight alone: the workers are in it too. A committer whose workspace is removed
under it stops, saying so."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memoryui.store.committer import SESSION_NICE
from tests.api.realserver import ROOT, RealServer
from tests.waiting import wait_for

AUTOGROUP = Path("/proc/self/autogroup")
needs_autogroups = pytest.mark.skipif(not AUTOGROUP.exists(),
                                      reason="a kernel without autogroups")


def session(pid: int) -> str:
    """The process's session group and its nice value, as the kernel shares cores by them
    (empty for the kernel's root group, which a process manager's sessions may share)."""
    return Path(f"/proc/{pid}/autogroup").read_text()


def committer(tmp: Path, own_session: bool, server: RealServer | None = None
              ) -> tuple[subprocess.Popen, Path]:
    server = server or RealServer(tmp)
    server.migrate()
    log = tmp / "committer.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "manage.py", "committer"], cwd=ROOT,
                                env=server.env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=own_session)
    wait_for("the committer to run", lambda: "running on" in log.read_text()
             or proc.poll() is not None)
    assert proc.poll() is None, log.read_text()
    return proc, log


def stop(proc: subprocess.Popen, log: Path) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(120) == 0, log.read_text()


@needs_autogroups
def test_a_committer_in_a_session_of_its_own_gives_the_session_a_low_weight(tmp_path):
    proc, log = committer(tmp_path, own_session=True)
    try:
        assert session(proc.pid).split()[-1] == str(SESSION_NICE)
    finally:
        stop(proc, log)


@needs_autogroups
def test_a_committer_started_inside_another_session_leaves_its_weight_alone(tmp_path):
    before = AUTOGROUP.read_text()
    proc, log = committer(tmp_path, own_session=False)
    try:
        assert session(proc.pid) == before
        assert AUTOGROUP.read_text() == before
    finally:
        stop(proc, log)


def test_a_committer_whose_workspace_is_removed_stops_and_says_why(tmp_path):
    """Not left running for nobody: it logs the reason and exits non-zero, so a process
    manager's restart starts afresh."""
    server = RealServer(tmp_path)
    proc, log = committer(tmp_path, own_session=False, server=server)
    try:
        shutil.rmtree(server.workspace)
        assert proc.wait(120) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
    said = log.read_text()
    assert f"the workspace {server.workspace} is gone" in said
    assert "Traceback" not in said
