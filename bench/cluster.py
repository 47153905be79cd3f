"""Real `serve` instances on one bare remote, for the server figures of bench_sync.

`Rig` holds a bare remote made from the corpus, the database (one throwaway Postgres shared by
every instance, as the README's "several instances" setup runs it; SQLite per instance when
Postgres is not installed) and the instances: `manage.py serve` processes, each with its own
clone of the remote (made here with `git clone --local`, as an operator would, so that the
huge corpus is not cloned over the transport three times), var folder and port.

`remember_load` drives `remember` calls over HTTP from several client threads spread over
the instances; `propagation` times a write on one instance until another serves it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote

from bench.clients import run_clients
from tests.api.realserver import RealServer
from tests.pg import pg_bindir, pg_database, pg_server

WRITTEN = re.compile(r"Written to ([^\s\"]+\.md)")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


class Rig:
    """A bare remote, a database, and `serve` instances on them."""

    def __init__(self, base: Path, source: Path) -> None:
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.bare = base / "remote.git"
        git(base, "clone", "--bare", "--quiet", str(source), str(self.bare))
        git(self.bare, "symbolic-ref", "HEAD", "refs/heads/main")
        self.url = f"file://{self.bare}"
        self._pg = None
        self.shared_db: str | None = None
        if pg_bindir() is not None and importlib.util.find_spec("psycopg") is not None:
            self._pg = pg_server()
            self.shared_db = pg_database(next(self._pg))
        self.database = "one shared Postgres" if self.shared_db else "SQLite per instance"
        self.instances: dict[str, RealServer] = {}
        self.tokens: dict[str, dict[str, str]] = {}
        self._migrated = False

    def instance(self, name: str, scopes: list[str], *, workers: int, interval: float
                 ) -> RealServer:
        """The instance `name` (made once: clone, migrate, tokens), set to `workers` and
        `interval` for its next start."""
        server = self.instances.get(name)
        if server is None:
            ws = self.base / name / "ws"
            git(self.base, "clone", "--quiet", "--local", str(self.bare), str(ws))
            db = self.shared_db or f"sqlite:///{self.base / name / 'db.sqlite3'}"
            server = RealServer(self.base / name, workspace=ws, workers=workers, env={
                "DATABASE_URL": db, "MEMORYUI_REMOTE": self.url,
                "MEMORYUI_REMOTE_BRANCH": "main"})
            if not self.shared_db or not self._migrated:
                server.migrate()
                self._migrated = True
                made = {s: server.token(s) for s in scopes}
            else:
                made = next(iter(self.tokens.values()))
            self.instances[name] = server
            self.tokens[name] = made
        server.workers = workers
        server.env["MEMORYUI_SYNC_INTERVAL"] = f"{interval:g}"
        return server

    def start(self, names: list[str]) -> None:
        """Start these instances at once (each imports Django: the slow part)."""
        threads = [threading.Thread(target=self.instances[n].start, kwargs={"timeout": 900})
                   for n in names if self.instances[n].proc is None]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for n in names:
            if self.instances[n].proc is None:
                raise RuntimeError(f"instance {n} did not start: see {self.instances[n].log}")

    def stop(self, names: list[str] | None = None) -> None:
        for n in names or list(self.instances):
            self.instances[n].stop()

    def tip(self) -> str:
        return git(self.bare, "rev-parse", "main").strip()

    def settled(self, names: list[str]) -> bool:
        """Every instance's HEAD is the remote's tip and nothing is left uncommitted."""
        tip = self.tip()
        for n in names:
            ws = self.instances[n].workspace
            if git(ws, "rev-parse", "HEAD").strip() != tip or git(
                    ws, "status", "--porcelain", "--untracked-files=no"):
                return False
        return True

    def wait_settled(self, names: list[str], timeout: float) -> float | None:
        """Seconds until settled, or None at the deadline."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.settled(names):
                return time.monotonic() - started
            time.sleep(0.5)  # poll interval
        return None

    def close(self) -> None:
        self.stop()
        if self._pg is not None:
            self._pg.close()  # the generator's finally stops the server


def remember_load(servers: list[RealServer], tokens: list[dict[str, str]], scopes: list[str],
                  n: int, clients: int, mark: str
                  ) -> tuple[list[float], float, list[str], dict[int, int]]:
    """`n` remember calls from `clients` threads; client i talks to servers[i % len] about
    scopes[i % len(scopes)]. Returns latencies (ms), wall seconds, acknowledged contents and
    the failed calls by HTTP status (0: the connection failed)."""
    lat: list[float] = []
    acked: list[str] = []
    failed: dict[int, int] = {}
    lock = threading.Lock()
    counter = iter(range(n))

    def client(i: int, barrier: threading.Barrier) -> None:
        k = i % len(servers)
        server, scope = servers[k], scopes[i % len(scopes)]
        conn = server.connection()
        barrier.wait()
        while True:
            with lock:
                j = next(counter, None)
            if j is None:
                break
            content = f"{mark}-{scope}-{j}-{uuid.uuid4().hex[:8]}"
            t = time.perf_counter()
            try:
                status, _ = server.call_tool(tokens[k][scope], scope, "remember",
                                             {"content": content}, conn=conn)
            except Exception:  # noqa: BLE001 - counted as failed
                conn.close()
                conn = server.connection()
                status = 0
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if status == 200:
                    lat.append(ms)
                    acked.append(content)
                else:
                    failed[status] = failed.get(status, 0) + 1
        conn.close()

    return lat, run_clients(client, clients), acked, failed


def count_on_remote(bare: Path, mark: str) -> dict[str, int]:
    """How many times each `mark-...` entry is in the daily logs at the remote's tip."""
    out = subprocess.run(["git", "grep", "-o", "-h", "-E", f"{mark}-[a-z0-9-]+", "main", "--",
                          "agents/*/memory/daily/*"], cwd=bare, capture_output=True,
                         text=True).stdout
    counts: dict[str, int] = {}
    for line in out.splitlines():
        word = line.split(":", 1)[-1]
        counts[word] = counts.get(word, 0) + 1
    return counts


def propagation(a: RealServer, b: RealServer, token_a: str, token_b: str, scope: str, n: int,
                timeout: float, mark: str) -> tuple[list[float], int]:
    """Seconds (as ms) from `remember` acknowledged on `a` until `b` serves the entry through
    the files API; polled every 50 ms. Returns samples and how many timed out."""
    samples, missed = [], 0
    for i in range(n):
        content = f"{mark}-{i}-{uuid.uuid4().hex[:8]}"
        status, body = a.call_tool(token_a, scope, "remember", {"content": content})
        acked = time.perf_counter()
        found = WRITTEN.search(json.dumps(body))
        if status != 200 or not found:
            raise RuntimeError(f"remember on {a.base_url} failed: {status} {body}")
        url = "/api/v1/files/" + quote(found.group(1))
        headers = {"Authorization": f"Bearer {token_b}"}
        while True:
            reply = b.send("GET", url, headers=headers)
            if reply.status == 200 and content.encode() in reply.body:
                samples.append((time.perf_counter() - acked) * 1000)
                break
            if time.perf_counter() - acked > timeout:
                missed += 1
                break
            time.sleep(0.05)  # poll interval
    return samples, missed
