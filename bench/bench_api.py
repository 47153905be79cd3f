"""Agents over HTTP (issue 2): `remember` throughput and latency, and `recall` latency,
through the production server (`manage.py serve --workers 4`) on a copy of the corpus.

Rows, each with its floor measured in the same run and repository:

- `remember` over HTTP from 16 concurrent keep-alive clients on 5 scopes (ops/s over the
  wall time; p50/p95/p99 per call). Floor: append + `git add` + `git commit` by the git CLI.
- `Store.append` in-process with deferred commits (the store call alone, no HTTP, no
  Django), same floor.
- `recall` over HTTP, sequential on one keep-alive connection. Floor: the same tool call
  in-process (`call_tool`), so the difference is the HTTP and auth overhead.

After the run the server is stopped with SIGTERM and the benchmark checks what a user
would: every entry is on disk exactly once and `git status` is clean.

Goals (issue 2): remember >= 200 calls/s with p99 < 100 ms; recall p50 < 10 ms.

    python -m bench.bench_api --preset large
"""

from __future__ import annotations

import queue
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from bench.floors import git_cli_floor
from bench.run import percentile
from memoryui.store import Actor, Store

N_FLOOR = 200
N_STORE = 300
N_HTTP = 3000
N_WARM = 40
N_RECALL = 300
CLIENTS = 16
WORKERS = 4
FLOOR_DATE = "2026-11-23"
N_PACED = 3000
PACED_RATE = 200.0
STORE_DATE = "2026-11-24"
ENTRY_RE = re.compile(r"apibench-[a-z0-9-]+?-\d+-[0-9a-f]{12}")



def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout



def store_floor(root: Path, scopes: list[str], n: int) -> list[float]:
    """`Store.append` alone, deferred commits as the server runs it (0.2 s)."""
    store = Store(root, commit_delay=0.2)
    lat = []
    for i in range(n):
        scope = scopes[i % len(scopes)]
        path = store.path_for("daily", scope, STORE_DATE)
        t = time.perf_counter()
        store.append(path, f"\n## 11:{i % 60:02d}\n\nstore entry {i}\n",
                     header=f"# {STORE_DATE}\n", actor=Actor.agent(scope), tool="remember")
        lat.append((time.perf_counter() - t) * 1000)
    store.close()
    return lat


def recall_in_process(root: Path, scope: str, n: int) -> list[float]:
    """The recall tool called directly on a Store: the floor for recall over HTTP."""
    from memoryui.tools.registry import ToolContext, call_tool

    store = Store(root)
    ctx = ToolContext(store=store, scope=scope, actor=Actor.agent(scope))
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        call_tool(ctx, "recall", {})
        lat.append((time.perf_counter() - t) * 1000)
    store.close()
    return lat


def http_remember(server, tokens: dict[str, str], n: int, clients: int,
                  rate: float | None = None
                  ) -> tuple[list[float], float, dict[str, str], list[str]]:
    """`n` remember calls from `clients` threads; returns latencies, wall time, sent, errors.

    Without `rate` every client sends as fast as it can (the server's ceiling, latency is
    mostly queueing). With `rate` calls are sent on a fixed schedule (calls/s over all
    clients) and latency counts from the scheduled time, so a server falling behind shows
    up as latency instead of being hidden by the clients slowing down.
    """
    work: queue.Queue = queue.Queue()
    sent: dict[str, str] = {}
    scopes = list(tokens)
    for i in range(n):
        scope = scopes[i % len(scopes)]
        content = f"apibench-{scope}-{i}-{uuid.uuid4().hex[:12]}"
        sent[content] = scope
        work.put((scope, content))
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    schedule = iter(range(n))
    start: list[float] = []

    def client() -> None:
        conn = server.connection()
        barrier.wait()
        while True:
            try:
                scope, content = work.get_nowait()
            except queue.Empty:
                break
            t = time.perf_counter()
            if rate:
                with lock:
                    due = start[0] + next(schedule) / rate
                if due > t:
                    time.sleep(due - t)
                t = due
            try:
                status, body = server.call_tool(tokens[scope], scope, "remember",
                                                {"content": content}, conn=conn)
            except Exception as exc:  # noqa: BLE001 - counted as lost
                conn.close()
                conn = server.connection()
                status, body = 0, {"error": repr(exc)}
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if status == 200:
                    lat.append(ms)
                else:
                    errors.append(f"{status} {body}")
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for th in threads:
        th.start()
    start.append(time.perf_counter() + 0.05)
    barrier.wait()
    started = time.perf_counter()
    for th in threads:
        th.join()
    return lat, time.perf_counter() - started, sent, errors


def http_recall(server, token: str, scope: str, n: int) -> list[float]:
    conn = server.connection()
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        status, body = server.call_tool(token, scope, "recall", {}, conn=conn)
        lat.append((time.perf_counter() - t) * 1000)
        if status != 200:
            raise RuntimeError(f"recall failed: {status} {body}")
    conn.close()
    return lat


def verify(root: Path, sent: dict[str, str]) -> str:
    """Every entry once, in its scope's daily log; nothing left uncommitted."""
    seen: dict[str, int] = {}
    for scope in set(sent.values()):
        for f in (root / "agents" / scope / "memory" / "daily").glob("*.md"):
            for m in ENTRY_RE.findall(f.read_text()):
                seen[m] = seen.get(m, 0) + 1
    missing = sum(1 for c in sent if c not in seen)
    doubled = sum(1 for c in sent if seen.get(c, 0) > 1)
    dirty = _git(root, "status", "--porcelain").strip()
    return (f"{len(sent) - missing}/{len(sent)} entries on disk, {missing} lost, {doubled} "
            f"doubled; git status {'clean' if not dirty else 'NOT clean'}")


def run(corpus: Path, report: Callable[..., None]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.api.realserver import RealServer

    root = Path(corpus)
    probe = Store(root)
    scopes = probe.scopes()[:5]
    probe.close()

    floor = git_cli_floor(root, scopes[0], N_FLOOR, FLOOR_DATE)
    store_lat = store_floor(root, scopes, N_STORE)
    recall_floor = recall_in_process(root, scopes[1], N_RECALL)

    import tempfile

    with tempfile.TemporaryDirectory(prefix="memoryui-api-bench-") as tmp:
        server = RealServer(Path(tmp), workspace=root, workers=WORKERS)
        server.migrate()
        tokens = {s: server.token(s) for s in scopes}
        with server:
            server.start(timeout=180)
            http_remember(server, tokens, N_WARM, CLIENTS)  # warm up workers and caches
            lat, wall, sent, errors = http_remember(server, tokens, N_HTTP, CLIENTS)
            paced, paced_wall, paced_sent, paced_errors = http_remember(
                server, tokens, N_PACED, CLIENTS, rate=PACED_RATE)
            sent.update(paced_sent)
            errors += paced_errors
            recall_lat = http_recall(server, tokens[scopes[1]], scopes[1], N_RECALL)
        check = verify(root, sent)

    ops = len(lat) / wall if wall else 0.0
    report(f"remember over HTTP ({CLIENTS} clients, serve --workers {WORKERS})", lat,
           ops_per_s=ops, floor="append + git commit (git CLI)", floor_ms=floor,
           note=f"p50 {percentile(lat, 50):.1f} ms, p95 {percentile(lat, 95):.1f} ms, p99 "
                f"{percentile(lat, 99):.1f} ms, {ops:.0f} calls/s; {len(errors)} errors; {check}; "
                "goal >= 200/s, p99 < 100 ms")
    paced_ops = len(paced) / paced_wall if paced_wall else 0.0
    report(f"remember over HTTP at {PACED_RATE:.0f} calls/s offered ({CLIENTS} clients)",
           paced, ops_per_s=paced_ops, floor="append + git commit (git CLI)", floor_ms=floor,
           note=f"p50 {percentile(paced, 50):.1f} ms, p95 {percentile(paced, 95):.1f} ms, p99 "
                f"{percentile(paced, 99):.1f} ms from the scheduled send time; "
                "goal >= 200/s with p99 < 100 ms")
    report("Store.append in-process (deferred commits)", store_lat,
           floor="append + git commit (git CLI)", floor_ms=floor,
           note=f"the store call alone; p99 {percentile(store_lat, 99):.1f} ms")
    report("recall over HTTP (sequential, keep-alive)", recall_lat,
           floor="recall in-process (call_tool)", floor_ms=recall_floor,
           note=f"p50 {percentile(recall_lat, 50):.1f} ms, p99 {percentile(recall_lat, 99):.1f} ms; "
                "goal p50 < 10 ms")


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, name="api"))
