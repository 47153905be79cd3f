"""`manage.py serve` with a remote: bootstrap at start, background rounds in the workers."""

from __future__ import annotations

import subprocess
import sys

from memoryui.store import Store
from tests.api.realserver import ROOT, RealServer
from tests.sync.helpers import reflect
from tests.sync_fixtures import git
from tests.waiting import wait_for


def test_serve_clones_then_syncs_in_the_background(tmp_path, native, daemon, bare) -> None:
    url = daemon.url("memory.git")
    host = native(url)
    host.remember("native entry before the server starts")
    host.commit()
    host.push()
    server = RealServer(tmp_path / "srv", workers=2,
                        env={"MEMORYUI_REMOTE": url, "MEMORYUI_SYNC_INTERVAL": "1"})
    server.migrate()
    token = server.token("ops-bot")
    with server:
        server.start()
        ws = server.workspace
        assert git(ws, "rev-parse", "HEAD").strip() == host.head()  # cloned at start

        host.remember("native entry while it runs")
        pushed = host.commit()
        host.push()
        wait_for("the instance to take in the host's commit", lambda: subprocess.run(
            ["git", "merge-base", "--is-ancestor", pushed, "HEAD"], cwd=ws).returncode == 0)

        status, body = server.call_tool(token, "ops-bot", "remember",
                                        {"content": "written through the server"})
        assert status == 200, body
        wait_for("the agent's entry to reach the remote", lambda: "written through the server"
                 in git(bare, "log", "-p", "main", "--", "agents/ops-bot"))
    host.pull()
    assert "written through the server" in git(host.path, "log", "-p", "--", "agents/ops-bot")


def test_serve_refuses_a_workspace_unrelated_to_the_remote(tmp_path, native, file_url) -> None:
    host = native(file_url)
    host.reflect("# Memory\n")
    host.commit()
    host.push()
    mine = Store(tmp_path / "mine")
    reflect(mine, "ops", "# Memory\n\n- another history\n")
    mine.close()
    server = RealServer(tmp_path / "srv", workspace=tmp_path / "mine",
                        env={"MEMORYUI_REMOTE": file_url})
    proc = subprocess.run([sys.executable, "manage.py", "serve", "--no-migrate", "--bind",
                           f"127.0.0.1:{server.port}"], cwd=ROOT, env=server.env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "no commit in common" in proc.stderr
    assert "MEMORYUI_WORKSPACE at an empty folder" in proc.stderr
    assert "Traceback" not in proc.stderr
