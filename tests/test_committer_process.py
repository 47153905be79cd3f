"""memoryui under a stock server: `uvicorn memoryui.asgi:application --workers 3` beside
`manage.py committer`, both real processes on 127.0.0.1, agents writing all along. A worker
and then the committer are killed with SIGKILL in the middle of the stream, the committer
is started again: every acknowledged write is committed exactly once, the workers commit
while no committer runs (and /healthz says so), and `git fsck` is clean. And each server
command the deployment guide gives (uvicorn, gunicorn, granian) serves agents as written."""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import json
import re
import shlex
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryui.store.housekeeping import wait_for_housekeeping
from tests.api.realserver import ROOT, RealServer, free_port, is_worker
from tests.waiting import wait_for

SCOPES = ["alpha", "bravo", "charlie"]
CLIENTS = 4
DEADLINE = 300.0  # bounds a hang only: CI is a loaded 2-core machine
ENTRY_RE = re.compile(r"entry-([a-z]+)-(\d+)-([0-9a-f]{32})")


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, capture_output=True, text=True,
                          check=True).stdout



class Stack:
    """A stock uvicorn with several workers and a committer, on one workspace."""

    def __init__(self, server: RealServer, workers: int) -> None:
        self.server = server
        self.workers = workers
        self.uvicorn: subprocess.Popen | None = None
        self.committer: subprocess.Popen | None = None
        self.log = server.tmp / "stack.log"

    def _spawn(self, *args: str) -> subprocess.Popen:
        with self.log.open("ab") as log:
            return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=self.server.env,
                                    stdout=log, stderr=subprocess.STDOUT)

    def start_committer(self) -> None:
        self.committer = self._spawn("manage.py", "committer")

    def start_uvicorn(self) -> None:
        self.start_server(["-m", "uvicorn", "memoryui.asgi:application", "--host", "127.0.0.1",
                           "--port", "8000", "--workers", "4"])

    def start_server(self, args: list[str]) -> None:
        """`python ARGS`, on a free port and with this stack's workers (ARGS say 8000, 4)."""
        self.server.port = free_port()
        port, workers = str(self.server.port), str(self.workers)
        args = [a.replace(":8000", f":{port}") if a.endswith(":8000") else a for a in args]
        args = [port if a == "8000" else a for a in args]
        at = [i for i, a in enumerate(args) if a in ("-w", "--workers")]
        assert at and args[at[0] + 1] == "4", args
        args[at[0] + 1] = workers
        self.uvicorn = self._spawn(*args)

    def health(self) -> dict:
        try:
            reply = self.server.send("GET", "/healthz")
        except OSError:
            return {}
        return json.loads(reply.body) if reply.status == 200 else {}

    def worker_pids(self) -> list[int]:
        assert self.uvicorn is not None
        out = subprocess.run(["pgrep", "-P", str(self.uvicorn.pid)], capture_output=True,
                             text=True).stdout.split()
        return [int(pid) for pid in out if is_worker(int(pid))]

    def stop(self) -> None:
        for proc in (self.uvicorn, self.committer):  # the committer last: it commits the rest
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(DEADLINE)


def test_killed_worker_and_committer_lose_nothing_and_commit_each_write_once(tmp_path):
    server = RealServer(tmp_path)
    server.migrate()
    tokens = {s: server.token(s) for s in SCOPES}
    stack = Stack(server, workers=3)
    acked: dict[str, str] = {}  # content -> scope, answered 200
    tried: set[str] = set()
    lock = threading.Lock()
    stop = threading.Event()
    counter = itertools.count()

    def client() -> None:
        while not stop.is_set():
            i = next(counter)
            scope = SCOPES[i % len(SCOPES)]
            content = f"entry-{scope}-{i}-{uuid.uuid4().hex}"
            with lock:
                tried.add(content)
            try:
                status, body = server.call_tool(tokens[scope], scope, "remember",
                                                {"content": content})
            except (OSError, ValueError):  # the worker was killed: not acknowledged
                continue
            if status == 200:
                with lock:
                    acked[content] = scope

    def acked_at_least(n: int) -> Callable[[], bool]:
        return lambda: len(acked) >= n

    def commits() -> int:
        # (none yet on a busy machine: the committer gives way to the requests)
        listed = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=server.workspace,
                                capture_output=True, text=True)
        return int(listed.stdout) if listed.returncode == 0 else 0

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    try:
        stack.start_committer()
        stack.start_uvicorn()
        wait_for("the stack answers with a committer", lambda: stack.health().get("committer") == "ok", timeout=DEADLINE)
        for t in threads:
            t.start()
        wait_for("100 writes acknowledged", acked_at_least(100), timeout=DEADLINE)

        victim = stack.worker_pids()[0]
        subprocess.run(["kill", "-KILL", str(victim)], check=True)
        wait_for("uvicorn replaced the worker",
                 lambda: len(stack.worker_pids()) == 3 and victim not in stack.worker_pids(), timeout=DEADLINE)
        wait_for("200 writes acknowledged", acked_at_least(200), timeout=DEADLINE)

        assert stack.committer is not None
        stack.committer.kill()
        stack.committer.wait(DEADLINE)
        wait_for("/healthz says the committer is missing",
                 lambda: stack.health().get("committer") == "missing", timeout=DEADLINE)
        before = commits()
        wait_for("the workers commit by themselves", lambda: commits() > before, timeout=DEADLINE)
        wait_for("300 writes acknowledged", acked_at_least(300), timeout=DEADLINE)

        stack.start_committer()
        wait_for("/healthz sees the committer again",
                 lambda: stack.health().get("committer") == "ok", timeout=DEADLINE)
        wait_for("400 writes acknowledged", acked_at_least(400), timeout=DEADLINE)
    finally:
        stop.set()
        for t in threads:
            if t.is_alive():
                t.join(DEADLINE)
        stack.stop()

    ws = server.workspace
    assert git(ws, "status", "--porcelain", "--untracked-files=all") == ""
    added: collections.Counter = collections.Counter()
    for line in git(ws, "log", "-p", "--no-color", "--format=").split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added.update(m.group(0) for m in ENTRY_RE.finditer(line))
    assert [c for c in acked if added[c] != 1] == [], "an acknowledged write not committed once"
    assert [c for c, n in added.items() if n > 1 or c not in tried] == []
    on_disk: collections.Counter = collections.Counter()
    for path in ws.rglob("*.md"):
        on_disk.update(m.group(0) for m in ENTRY_RE.finditer(path.read_text()))
    assert all(on_disk[c] == 1 for c in acked)
    wait_for_housekeeping(ws)  # a repack beside fsck: loose objects "missing"
    fsck = subprocess.run(["git", "fsck", "--full", "--strict"], cwd=ws, capture_output=True,
                          text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr


def test_a_page_shows_a_write_the_committer_has_not_committed_yet(tmp_path):
    """The worker that answers a write does no catalogue work (the committer re-states what
    it commits); a page read before that commit still shows the write, from the journal."""
    server = RealServer(tmp_path, env={"MEMORYUI_PASSWORD": "lead-password-1"})
    server.migrate()
    assert server.manage("user", "lead", "--role", "curator").returncode == 0
    token = server.token("alpha")
    stack = Stack(server, workers=1)
    try:
        stack.start_committer()
        stack.start_uvicorn()
        wait_for("the stack answers with a committer",
                 lambda: stack.health().get("committer") == "ok", timeout=DEADLINE)
        session = server.sign_in("lead", "lead-password-1")
        assert server.request("GET", "/", headers={"Cookie": session})[0] == 200
        assert stack.committer is not None
        stack.committer.send_signal(signal.SIGSTOP)  # alive, holding its lock, not ticking
        try:
            status, body = server.call_tool(token, "alpha", "remember",
                                            {"content": "A write the pages must show."})
            assert status == 200, body
            daily = re.search(r"agents/alpha/memory/daily/[0-9-]+\.md", body["result"])
            assert daily is not None, body
            status, page = server.request("GET", "/s/alpha/", headers={"Cookie": session})
            assert status == 200 and daily.group(0).rsplit("/", 1)[1] in page.decode()
        finally:
            stack.committer.send_signal(signal.SIGCONT)
        wait_for("the committer commits the write",
                 lambda: "A write the pages must show." in subprocess.run(
                     ["git", "log", "-p", "--format="], cwd=server.workspace,
                     capture_output=True, text=True).stdout, timeout=DEADLINE)
    finally:
        stack.stop()


def documented_servers() -> dict[str, list[str]]:
    """The stock-server command lines docs/deployment.md gives, by server, as `python`'s
    arguments."""
    text = (ROOT / "docs/deployment.md").read_text()
    block = text[text.index("## Stock servers"):text.index("Workers: one per core")]
    found = {}
    for line in block.splitlines():
        if not line.startswith("    ") or line.strip().startswith("#") or not line.strip():
            continue
        words = shlex.split(line)
        args = words[1:] if words[0] == "python" else ["-m", *words]
        found[args[1]] = args
    return found


@pytest.mark.parametrize("name", ["uvicorn", "gunicorn", "granian"])
def test_each_documented_server_runs_memoryui_beside_the_committer(tmp_path, name):
    """The deployment guide's command for each server, as written: agents write over HTTP
    and MCP, the committer commits, and both stop cleanly with nothing left uncommitted."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    server = RealServer(tmp_path)
    server.migrate()
    token = server.token("alpha")
    stack = Stack(server, workers=2)

    async def remember_over_mcp() -> bool:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with http, Client(streamable_http_client(f"{server.base_url}/mcp",
                                                       http_client=http)) as mcp:
            result = await mcp.call_tool("remember", {"content": f"over MCP under {name}"})
            return not result.is_error

    try:
        stack.start_committer()
        stack.start_server(documented_servers()[name])
        wait_for(f"{name} answers with a committer",
                 lambda: stack.health().get("committer") == "ok", timeout=DEADLINE)
        status, body = server.call_tool(token, "alpha", "remember",
                                        {"content": f"over HTTP under {name}"})
        assert status == 200, body
        # (in a thread of its own: Playwright may keep a loop running in this one)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            # the MCP endpoint runs in the server's lifespan
            assert pool.submit(anyio.run, remember_over_mcp).result()
        def committed() -> str:  # (git log fails before the first commit)
            return subprocess.run(["git", "log", "-p", "--format="], cwd=server.workspace,
                                  capture_output=True, text=True).stdout

        wait_for("the committer commits both", lambda: all(
            f"over {way} under {name}" in committed() for way in ("HTTP", "MCP")),
                 timeout=DEADLINE)
    finally:
        stack.stop()
    assert stack.uvicorn is not None and stack.uvicorn.returncode is not None
    assert git(server.workspace, "status", "--porcelain", "--untracked-files=all") == ""
