"""Real git transports and a native agent host for sync tests (domain, web and e2e).

- `make_bare(path)`: a bare repository whose HEAD names `main`.
- `GitDaemon(base)`: a real `git daemon` on 127.0.0.1 serving every repo below `base` over
  git:// with push enabled; `stop()` then `start()` again reuses the same port (an outage).
- `HttpGit(base, user, password)`: real smart HTTP (`git http-backend` behind a small
  threaded HTTP server) with Basic auth, for URLs that carry a password.
- `NativeHost(url, path)`: a plain clone where a script writes the framework's files exactly
  as Duragent does (append to today's daily log, rewrite MEMORY.md), commits and pushes.
No fixed sleeps: servers are waited for by connecting, with a deadline.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import signal
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from memoryui.store.housekeeping import wait_for_housekeeping

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_AUTHOR_NAME": "native-bot",
           "GIT_AUTHOR_EMAIL": "native-bot@agents.example", "GIT_COMMITTER_NAME": "native-bot",
           "GIT_COMMITTER_EMAIL": "native-bot@agents.example"}


def git(cwd: Path | str, *args: str, check: bool = True, input: str | None = None) -> str:
    """Run git; returns stdout (text). Raises with git's stderr when it fails."""
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=120, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def make_bare(path: Path, branch: str = "main") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "--bare", "--quiet", f"--initial-branch={branch}", str(path))
    return path


def fsck_clean(path: Path | str) -> None:
    """`git fsck` finds nothing wrong (dangling objects are fine: they are not damage)."""
    wait_for_housekeeping(Path(path))  # a repack beside fsck: loose objects "missing"
    proc = subprocess.run(["git", "fsck", "--no-dangling", "--no-progress"], cwd=path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = [ln for ln in (proc.stdout + proc.stderr).splitlines()
           if ln.strip() and not ln.startswith(("Checking", "notice:"))]
    assert not bad, bad


def is_ancestor(repo: Path | str, a: str, b: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=repo,
                          capture_output=True).returncode == 0


def tip(repo: Path | str, ref: str = "refs/heads/main") -> str | None:
    out = git(repo, "rev-parse", "--verify", "--quiet", ref, check=False).strip()
    return out or None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, deadline: float = 120.0) -> None:
    end = time.monotonic() + deadline
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > end:
                raise TimeoutError(f"nothing listens on 127.0.0.1:{port}") from None
            time.sleep(0.02)  # polling a condition with a deadline, not a fixed wait


class GitDaemon:
    """`git daemon` over git:// on 127.0.0.1, push enabled, stoppable and restartable."""

    def __init__(self, base: Path, port: int | None = None):
        self.base = Path(base)
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def start(self) -> GitDaemon:
        self.proc = subprocess.Popen(
            ["git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
             "--informative-errors", f"--base-path={self.base}", "--listen=127.0.0.1",
             f"--port={self.port}", str(self.base)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_port(self.port)
        return self

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self.proc = None
        end = time.monotonic() + 120
        while time.monotonic() < end:  # wait until the port really refuses
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                return
            time.sleep(0.02)

    def __enter__(self) -> GitDaemon:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _GitHTTPHandler(BaseHTTPRequestHandler):
    server: _GitHTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        self.server.requests.append(self.requestline)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _serve(self) -> None:
        body = self._body() if self.command == "POST" else b""
        expected = "Basic " + base64.b64encode(
            f"{self.server.user}:{self.server.password}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = {**os.environ, "GIT_PROJECT_ROOT": str(self.server.base),
               "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
               "REQUEST_METHOD": self.command, "REMOTE_USER": self.server.user,
               "REMOTE_ADDR": "127.0.0.1", "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body))}
        for header in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(header):
                env["HTTP_" + header.upper().replace("-", "_")] = self.headers[header]
        proc = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env,
                              timeout=120)
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _GitHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    base: Path
    user: str
    password: str
    requests: list[str]


class HttpGit:
    """Smart HTTP with Basic auth on 127.0.0.1 (git http-backend), for password URLs."""

    def __init__(self, base: Path, user: str = "alice", password: str = "s3cret-pw-4711"):
        self.base, self.user, self.password = Path(base), user, password
        self.server: _GitHTTPServer | None = None
        self.thread: threading.Thread | None = None
        self.port = 0

    def url(self, name: str, *, auth: bool = True, password: str | None = None) -> str:
        cred = f"{self.user}:{password or self.password}@" if auth else ""
        return f"http://{cred}127.0.0.1:{self.port}/{name}"

    def start(self) -> HttpGit:
        server = _GitHTTPServer(("127.0.0.1", self.port), _GitHTTPHandler)
        server.base, server.user, server.password = self.base, self.user, self.password
        server.requests = []
        self.server, self.port = server, server.server_address[1]
        self.thread = threading.Thread(target=server.serve_forever, daemon=True)
        self.thread.start()
        wait_port(self.port)
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self) -> HttpGit:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class NativeHost:
    """A native agent host: a plain clone written exactly as Duragent writes its files."""

    def __init__(self, url: str, path: Path, scope: str = "native-bot", branch: str = "main"):
        self.url, self.path, self.scope, self.branch = url, Path(path), scope, branch
        if not (self.path / ".git").exists():
            git(self.path.parent, "clone", "--quiet", url, str(self.path))
        git(self.path, "config", "user.name", scope)
        git(self.path, "config", "user.email", f"{scope}@agents.example")

    def daily_path(self, day: dt.date | None = None) -> str:
        day = day or dt.date.today()
        return f"agents/{self.scope}/memory/daily/{day.isoformat()}.md"

    def remember(self, text: str, when: dt.datetime | None = None) -> str:
        """Duragent's remember: header once per file, then `\\n## HH:MM\\n\\n{text}\\n`."""
        when = when or dt.datetime.now()
        rel = self.daily_path(when.date())
        full = self.path / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        with open(full, "a") as fh:
            if fh.tell() == 0:
                fh.write(f"# {when.date().isoformat()}\n")
            fh.write(f"\n## {when:%H:%M}\n\n{text}\n")
        return rel

    def reflect(self, text: str) -> str:
        """Duragent's reflect: MEMORY.md replaced whole."""
        rel = f"agents/{self.scope}/memory/MEMORY.md"
        self.write(rel, text)
        return rel

    def write(self, rel: str, text: str) -> None:
        full = self.path / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        tmp = full.with_name(full.name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, full)

    def read(self, rel: str) -> str | None:
        try:
            return (self.path / rel).read_text()
        except FileNotFoundError:
            return None

    def delete(self, rel: str) -> None:
        (self.path / rel).unlink()

    def commit(self, message: str = "agent memory") -> str:
        git(self.path, "add", "-A")
        git(self.path, "commit", "--quiet", "--allow-empty", "-m", message)
        return self.head()

    def pull(self) -> None:
        git(self.path, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", self.branch)

    def push(self, deadline: float = 300.0) -> None:
        """Push; on rejection pull (a plain merge) and push again, as a sync daemon would.

        Busy instances push every second, so a loaded machine can lose the race many times
        in a row: retry until a deadline, never a fixed number of attempts."""
        end = time.monotonic() + deadline
        while True:
            proc = subprocess.run(["git", "push", "--quiet", "origin", f"HEAD:{self.branch}"],
                                  cwd=self.path, capture_output=True, text=True,
                                  env={**os.environ, **GIT_ENV}, timeout=120)
            if proc.returncode == 0:
                return
            if time.monotonic() > end:
                break
            self.pull()
        raise AssertionError(f"native host could not push: {proc.stderr}")

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD").strip()
