"""Helpers to drive the production server (`manage.py serve`) from tests and benchmarks.

Everything goes through the real command line: `manage.py migrate`, `manage.py token
create`, then `manage.py serve` as a subprocess on 127.0.0.1 with its own workspace,
SQLite database and var folder.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RealServer:
    """One `serve` process with its own workspace, database and var folder."""

    def __init__(self, tmp: Path, *, workspace: Path | None = None, layout: str = "duragent",
                 workers: int = 4, env: dict[str, str] | None = None):
        self.tmp = Path(tmp)
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.workspace = Path(workspace or self.tmp / "ws")
        self.workers = workers
        self.port = free_port()
        base = {k: v for k, v in os.environ.items() if k != "MEMORYUI_COMMIT_DELAY"}
        self.env = {**base,
                    "MEMORYUI_WORKSPACE": str(self.workspace),
                    "MEMORYUI_LAYOUT": layout,
                    "DATABASE_URL": f"sqlite:///{self.tmp / 'db.sqlite3'}",
                    "MEMORYUI_VAR_DIR": str(self.tmp),
                    "MEMORYUI_SEARCH_DB": str(self.tmp / "search.sqlite3"),
                    "DJANGO_SETTINGS_MODULE": "memoryui.settings",
                    **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.log = self.tmp / "server.log"

    def manage(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=120, check=True)

    def migrate(self) -> None:
        self.manage("migrate", "--verbosity", "0")

    def token(self, *args: str) -> str:
        """`token create ...`; the raw token is the last line of stdout."""
        out = self.manage("token", "create", *args).stdout
        return out.rstrip("\n").split("\n")[-1]

    def start(self, timeout: float = 60.0) -> None:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "manage.py", "serve", "--workers", str(self.workers),
                 "--bind", f"127.0.0.1:{self.port}", "--no-migrate"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited early:\n{self.log.read_text()[-4000:]}")
            try:
                status, _ = self.request("GET", "/healthz")
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not answer /healthz:\n{self.log.read_text()[-4000:]}")

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (a graceful shutdown that commits pending writes), then wait."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        code = self.proc.returncode
        self.proc = None
        return code

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None,
                conn: http.client.HTTPConnection | None = None) -> tuple[int, bytes]:
        own = conn is None
        conn = conn or self.connection()
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            if own:
                conn.close()

    def call_tool(self, conn: http.client.HTTPConnection, token: str, scope: str, tool: str,
                  args: dict) -> tuple[int, dict]:
        status, data = self.request(
            "POST", f"/api/v1/agents/{scope}/tools/{tool}", json.dumps(args).encode(),
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, conn)
        return status, json.loads(data)

    def __enter__(self) -> RealServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
