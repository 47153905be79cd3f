"""memoryui as the hosts' git remote, over HTTP against a real `serve`, beside the floor:
the same operations against `git http-backend` behind a minimal Python HTTP server (the
same smart-HTTP protocol, no authentication, no rules, no integration).

Rows:

- a clone of the corpus (`git clone` over HTTP). Floor: the same clone from the floor.
- a push of 100 commits (one file each, in one scope; the host token's rules check every
  commit, the push is integrated into the working tree). Floor: the same push to the floor.
- the workers' peak RSS while a host pushes one file of incompressible bytes (100 MB at
  large and huge, 20 MB at small), sampled every 20 ms, against the same workers just
  before: the bodies are streamed, so the peak stays near the resting size.

    python -m bench.run --only gitremote            # or python -m bench.bench_gitremote
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bench.options import OPTIONS

if TYPE_CHECKING:
    from tests.api.realserver import RealServer

CLONES = 3
PUSHES = 3
COMMITS = 100
WORKERS = 2
ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "bench-host",
       "GIT_AUTHOR_EMAIL": "host@bench", "GIT_COMMITTER_NAME": "bench-host",
       "GIT_COMMITTER_EMAIL": "host@bench"}

# The floor: git http-backend as CGI behind http.server, one thread per request.
FLOOR_SERVER = r'''
import os, subprocess, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = sys.argv[1]

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if not size:
                    self.rfile.readline()
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _cgi(self):
        path, _, query = self.path.partition("?")
        body = self._body() if self.command == "POST" else b""
        env = {**os.environ, "GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "REMOTE_USER": "floor",
               "CONTENT_LENGTH": str(len(body)), "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
               "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", "")}
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(rest)))
        self.end_headers()
        self.wfile.write(rest)

    do_GET = do_POST = _cgi

ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
'''


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=ENV).stdout


def _ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def _commits(clone: Path, batch: int) -> None:
    """100 commits, one new note each, in the host's scope."""
    folder = clone / "agents" / "git-bench" / "memory" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(COMMITS):
        (folder / f"b{batch}-{i}.md").write_text(f"# note {batch}-{i}\n\npushed by a host\n")
        _git(clone, "add", "-A")
        _git(clone, "commit", "-q", "-m", f"note {batch}-{i}")


def _rss_mb(pids: set[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total = max(total, int(line.split()[1]) / 1024)
        except OSError:
            continue
    return total


def _floor_server(tmp: Path, corpus: Path) -> tuple[subprocess.Popen, str]:
    from tests.api.realserver import free_port

    bare = tmp / "floor.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(corpus), str(bare)], check=True)
    _git(bare, "config", "http.receivepack", "true")
    script = tmp / "floor_server.py"
    script.write_text(FLOOR_SERVER)
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(script), str(tmp), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/floor.git"
    deadline = time.monotonic() + 60
    while subprocess.run(["git", "ls-remote", url], capture_output=True,
                         env=ENV).returncode != 0:
        assert time.monotonic() < deadline, "the floor server did not answer"
        time.sleep(0.1)  # poll interval
    return proc, url


def run(corpus: Path, report: Callable[..., None]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.api.realserver import RealServer

    big_mb = 20 if OPTIONS.preset == "small" else 100
    tmp = Path(tempfile.mkdtemp(prefix="memoryui-bench-git-"))
    server = RealServer(tmp / "server", workspace=corpus, workers=WORKERS,
                        env={"MEMORYUI_MAX_BODY": str((big_mb + 8) * 1024 * 1024)})
    server.migrate()
    token = server.token("--git", "--scopes", "git-bench", "--name", "bench-host")
    floor, floor_url = _floor_server(tmp, corpus)
    try:
        server.start(timeout=900)
        creds = tmp / "credentials"
        creds.write_text(f"http://bench:{token}@127.0.0.1:{server.port}\n")
        helper = ["-c", f"credential.helper=store --file={creds}"]
        ours_url = f"{server.base_url}/git/workspace.git"

        def clone(url: str, dest: Path) -> None:
            subprocess.run(["git", *helper, "clone", "-q", url, str(dest)], check=True,
                           env=ENV, capture_output=True)

        ours, base = [], []
        for i in range(CLONES):
            ours.append(_ms(lambda i=i: clone(ours_url, tmp / f"ours-{i}")))
            base.append(_ms(lambda i=i: clone(floor_url, tmp / f"floor-{i}")))
        report("git clone over HTTP", ours, floor="git http-backend (floor)", floor_ms=base)

        pushes, floor_pushes = [], []
        for batch in range(PUSHES):
            for name, into in (("ours", pushes), ("floor", floor_pushes)):
                clone_dir = tmp / f"{name}-0"
                _commits(clone_dir, batch)
                into.append(_ms(lambda d=clone_dir: subprocess.run(
                    ["git", *helper, "push", "-q", "origin", "HEAD"], cwd=d, check=True,
                    env=ENV, capture_output=True)))
        report(f"git push of {COMMITS} commits", pushes, floor="git http-backend (floor)",
               floor_ms=floor_pushes, note="each commit checked against the host's rules, "
                                           "then integrated into the working tree")
        _big_push(server, helper, tmp / "ours-1", big_mb, report)
    finally:
        floor.terminate()
        floor.wait(30)
        server.stop()


def _big_push(server: RealServer, helper: list[str], clone_dir: Path, big_mb: int,
              report: Callable[..., None]) -> None:
    workers = server.worker_pids()
    _git(clone_dir, *helper, "pull", "-q", "--no-rebase", "origin", "main")
    folder = clone_dir / "agents" / "git-bench" / "memory" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "large.md").write_bytes(os.urandom(big_mb * 1024 * 1024))
    _git(clone_dir, "add", "-A")
    _git(clone_dir, "commit", "-q", "-m", "a large file")
    before = _rss_mb(workers)
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mb(workers))
            time.sleep(0.02)  # sampling interval
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        took = _ms(lambda: subprocess.run(["git", *helper, "push", "-q", "origin", "HEAD"],
                                          cwd=clone_dir, check=True, env=ENV,
                                          capture_output=True))
    finally:
        done.set()
        sampler.join()
    report(f"worker peak RSS during a {big_mb} MB push", [peak[0]], unit="MB",
           floor="the same worker before the push", floor_ms=[before],
           note=f"push took {took / 1000:.1f} s; bodies streamed in 64 KiB chunks")


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="gitremote"))
