"""`manage.py serve` when workers cannot start: one clear line and a non-zero exit, never a
server that replaces dying workers forever while connections wait.

A `sitecustomize` on PYTHONPATH makes new interpreters die at start the way an unreadable
virtualenv does: every one (the check `serve` makes before it starts uvicorn), or only the
worker processes uvicorn spawns (`--multiprocessing-fork` in their argv), which uvicorn's
supervisor replaces every half second."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.api.realserver import COMMAND_TIMEOUT, ROOT, RealServer
from tests.waiting import wait_for

BREAK = """
import os, sys
if os.environ.get("BREAK_WORKERS") == "all" and sys.argv[:1] == ["-c"] \\
        or "--multiprocessing-fork" in sys.argv:
    sys.stderr.write("PermissionError: [Errno 13] Permission denied: '/venv/lib'\\n")
    sys.stderr.flush()
    os._exit(1)
"""


def serve(tmp: Path, which: str) -> tuple[subprocess.CompletedProcess, int]:
    broken = tmp / "broken"
    broken.mkdir()
    (broken / "sitecustomize.py").write_text(BREAK)
    server = RealServer(tmp, workers=2)
    server.migrate()
    env = {**server.env, "PYTHONPATH": f"{ROOT}:{broken}", "BREAK_WORKERS": which}
    done = subprocess.run([sys.executable, "manage.py", "serve", "--workers", "2", "--bind",
                           f"127.0.0.1:{server.port}", "--no-migrate"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    return done, server.port


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
    except ConnectionRefusedError:
        return True
    return False


def test_serve_refuses_to_start_when_a_worker_cannot_start(tmp_path):
    done, port = serve(tmp_path, "all")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "CommandError: a worker cannot start: PermissionError: [Errno 13] Permission "
        "denied: '/venv/lib'")
    assert refused(port)


def test_serve_stops_when_its_workers_keep_dying_at_start(tmp_path):
    """Its line counts the workers that died, those that died between two of its looks
    included (uvicorn logs each replacement: "Child process [N] died")."""
    done, port = serve(tmp_path, "spawned")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    said = re.fullmatch(r"CommandError: workers keep dying \((\d+) replaced within 60 s\); "
                        r"see the errors above", last)
    assert said, last
    died = len(re.findall(r"Child process \[\d+\] died", done.stderr))
    # (uvicorn may replace one more of each pair while the stop reaches it)
    assert died - 2 <= int(said[1]) <= died, (said[1], died)
    assert len(done.stderr.splitlines()) < 200, "a crash loop's log"
    assert refused(port)


def test_the_committer_serve_started_stops_when_serve_is_killed(tmp_path):
    """A committer must not outlive the `serve` that started it (it would hold the
    workspace's committer lock for nobody): killed with SIGKILL, serve leaves a pipe's
    end behind, and its committer commits what is journaled and exits."""
    server = RealServer(tmp_path, workers=2)
    server.migrate()
    server.start()
    assert server.proc is not None
    serve = server.proc.pid
    out = subprocess.run(["pgrep", "-P", str(serve), "-f", "django committer"],
                         capture_output=True, text=True).stdout.split()
    assert len(out) == 1, out
    committer = int(out[0])
    try:
        os.kill(serve, signal.SIGKILL)
        wait_for("the committer to stop once serve is gone", lambda: not alive(committer))
    finally:
        os.killpg(serve, signal.SIGKILL)  # the workers left behind
        server.proc.wait()
        server.proc = None
    assert "committer" in server.log.read_text() and "is gone: stopping" in server.log.read_text()
