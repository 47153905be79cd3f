"""Helpers to drive the production server (`manage.py serve`) from tests and benchmarks.

Everything goes through the real command line: `manage.py migrate`, `manage.py token
create`, then `manage.py serve` as a subprocess on 127.0.0.1 with its own workspace,
SQLite database and var folder.

Requests open a fresh connection each and send `Connection: close`: uvicorn drops a
keep-alive connection after 5 s idle, and on a busy CI machine the steps between two
requests (a `manage.py` subprocess, a slow assertion) easily take longer, which made a
reused connection fail with BrokenPipeError. Only benchmarks pass their own keep-alive
`conn`; it is reopened when the server has dropped it while idle.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Generous limits: CI is a loaded 2-core machine. They only bound a hang, they never pace
# a test (every wait below polls for its condition and returns as soon as it holds).
COMMAND_TIMEOUT = 300.0  # one manage.py subprocess
START_TIMEOUT = 180.0  # until /healthz answers
STOP_TIMEOUT = 120.0  # a graceful shutdown commits pending writes first
REQUEST_TIMEOUT = 120.0  # socket timeout of one request


_handed_out: set[int] = set()


def free_port() -> int:
    """A port free right now, never one this process handed out before (servers started
    together must not be given the same one)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def _listens(pid: int, port: int) -> bool | None:
    """Whether process `pid` holds the listening socket on 127.0.0.1:`port`, so a probe that
    answered came from our server and not from another that has the port (None: unknown)."""
    try:
        table = Path("/proc/net/tcp").read_text().splitlines()[1:]
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return None
    inodes = {f"socket:[{f[9]}]" for f in (line.split() for line in table)
              if f[3] == "0A" and f[1] == f"0100007F:{port:04X}"}
    for fd in fds:
        try:
            if os.readlink(fd) in inodes:
                return True
        except OSError:
            continue
    return False


def is_worker(pid: int) -> bool:
    """A `serve` worker process: a child multiprocessing spawned, not its resource tracker."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"spawn_main" in cmdline and b"resource_tracker" not in cmdline


@dataclass
class Reply:
    """One HTTP answer, read in full."""

    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def cookies(self) -> dict[str, str]:
        """The cookies this answer sets (name -> value)."""
        pairs = (c.split(";", 1)[0].split("=", 1) for c in self.headers.get_all("Set-Cookie", []))
        return {name.strip(): value for name, value in pairs}


def sign_in_form(send: Callable[..., Reply], base_url: str, username: str, password: str,
                 headers: dict[str, str] | None = None) -> Reply:
    """Fill in and post the login form through `send(method, path, body, headers)`; the
    answer to the post (`headers` go with both requests)."""
    page = send("GET", "/accounts/login/", None, headers)
    csrf = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.body)
    assert page.status == 200 and csrf, page.status
    cookie = "; ".join(f"{k}={v}" for k, v in page.cookies().items())
    form = urllib.parse.urlencode({"username": username, "password": password,
                                   "csrfmiddlewaretoken": csrf.group(1).decode()})
    return send("POST", "/accounts/login/", form.encode(), {
        "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded",
        "Referer": f"{base_url}/accounts/login/", **(headers or {})})


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """True when an idle keep-alive connection was closed by the server (EOF is readable)."""
    if conn.sock is None:
        return False
    try:
        readable, _, _ = select.select([conn.sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


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

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def manage(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                              check=True)

    def migrate(self) -> None:
        self.manage("migrate", "--verbosity", "0")

    def token(self, *args: str) -> str:
        """`token create ...`; the raw token is the last line of stdout."""
        out = self.manage("token", "create", *args).stdout
        return out.rstrip("\n").split("\n")[-1]

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start `serve` and wait until /healthz answers. The port was free when probed; if
        another process took it meanwhile (xdist workers start servers at once), try the
        next free one."""
        for _attempt in range(5):
            offset = self.log.stat().st_size if self.log.exists() else 0
            if self._start_once(timeout, offset):
                return
            self.port = free_port()
        raise RuntimeError(f"no free port for the server:\n{self.log.read_text()[-4000:]}")

    def _start_once(self, timeout: float, offset: int) -> bool:
        """True once /healthz answers; False when the port turned out to be taken."""
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "manage.py", "serve", "--workers", str(self.workers),
                 "--bind", f"127.0.0.1:{self.port}", "--no-migrate"],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.proc = None
                with self.log.open("rb") as log:
                    log.seek(offset)
                    tail = log.read().decode(errors="replace")
                if "address already in use" in tail.lower():
                    return False
                raise RuntimeError(f"server exited early:\n{tail[-4000:]}")
            probe = self.connection(timeout=10)  # short: a probe that hangs is sent again
            try:
                if (self.send("GET", "/healthz", headers={"Connection": "close"},
                              conn=probe).status == 200
                        and _listens(self.proc.pid, self.port) is not False):
                    return True
            except OSError:
                pass
            finally:
                probe.close()
            time.sleep(0.1)  # poll interval, not a pace: returns as soon as it answers
        self.stop()
        raise RuntimeError(f"server did not answer /healthz:\n{self.log.read_text()[-4000:]}")

    def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM (a graceful shutdown that commits pending writes), then wait."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(30)
        code = self.proc.returncode
        self.proc = None
        return code

    def worker_pids(self) -> set[int]:
        """The pids of this server's live worker processes (Linux: from /proc)."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                             text=True).stdout.split()
        return {int(pid) for pid in out if is_worker(int(pid))}

    def connection(self, timeout: float = REQUEST_TIMEOUT) -> http.client.HTTPConnection:
        """A new connection (for hand-made requests such as chunked bodies; one request each)."""
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def send(self, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None,
             conn: http.client.HTTPConnection | None = None) -> Reply:
        """One request, answered in full: on a fresh connection closed afterwards, or on
        `conn` (kept alive; reopened first if the server dropped it while idle)."""
        own = conn is None
        if own:
            conn = self.connection()
            headers = {"Connection": "close", **(headers or {})}
        elif _dropped(conn):
            conn.close()  # http.client reconnects on the next request
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return Reply(resp.status, resp.headers, resp.read())
        finally:
            if own:
                conn.close()

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None,
                conn: http.client.HTTPConnection | None = None) -> tuple[int, bytes]:
        reply = self.send(method, path, body, headers, conn)
        return reply.status, reply.body

    def call_tool(self, token: str, scope: str, tool: str, args: dict, *,
                  conn: http.client.HTTPConnection | None = None) -> tuple[int, dict]:
        status, data = self.request(
            "POST", f"/api/v1/agents/{scope}/tools/{tool}", json.dumps(args).encode(),
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, conn)
        return status, json.loads(data)

    def sign_in(self, username: str, password: str) -> str:
        """Sign in through the login form; returns the `Cookie` header of the session."""
        done = self.try_sign_in(username, password)
        assert done.status == 302, f"sign-in as {username} failed: {done.status}"
        return f"sessionid={done.cookies()['sessionid']}"

    def try_sign_in(self, username: str, password: str,
                    headers: dict[str, str] | None = None) -> Reply:
        """The login form's answer (`headers` go with both requests: a proxy's)."""
        return sign_in_form(self.send, self.base_url, username, password, headers)

    def __enter__(self) -> RealServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
