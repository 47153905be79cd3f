"""memoryui under `manage.py serve` and under stock uvicorn, gunicorn (uvicorn workers) and
granian, each beside `manage.py committer`, the server on its own cores and the load
generator on others.

For each stack, on a fresh empty workspace, with `WORKERS` workers:

- `/healthz` and `remember` (the Duragent tool over HTTP) from 16 keep-alive clients, as
  fast as they go: calls a second, p50/p99;
- the server's CPU per `remember` (workers and committer, the commits and indexing of what
  the phase wrote included: the stack is left to settle first) and the share of the server
  cores' time the host stole meanwhile. On a shared virtual machine calls a second move
  with the neighbours' load; CPU per call hardly does, so the two side by side tell a
  slower stack from a busier host;
- `remember` paced at half of that maximum for HALF_SECONDS, once the stack has settled:
  p50/p99 (goal: p99 < 3x p50), beside two floors at the same rate: `/healthz` paced on
  the same schedule (the serving stack and the clients alone, no write) and the
  durable-write floor (the disk alone); and beside `/healthz` paced at half of *its own*
  maximum, which keeps the server core as busy as the `remember` phase does: the tail that
  queueing alone gives at that load, with no write in it;
- the server's idle CPU (workers, supervisor and committer together, % of one core over
  IDLE_SECONDS, once SETTLE_SECONDS have passed since the last call: the committer
  indexes the last writes for search meanwhile, which is work, not idling) and each
  worker's resident memory;
- every acknowledged entry on disk once, and `git status` clean after a SIGTERM.

The server processes keep to `--server-cpus` (`taskset`; children inherit it) and this
process, whose threads are the clients, to `--client-cpus` (`os.sched_setaffinity`).

    python -m bench.bench_stock --workers 2 --server-cpus 0 --client-cpus 1 [--baseline DIR]

`--baseline DIR` adds a stack: `manage.py serve` of another checkout (DIR), say the main
branch, run the same way, to compare with. `--rounds R` measures every stack R times, each
round in an order turned by one place (on a shared virtual machine a stack's figures depend
on its place in the run), and reports the medians.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_api import ENTRY_RE, http_remember, verify  # noqa: E402
from bench.bench_serve import session_cpu, session_rss  # noqa: E402
from bench.clients import http_healthz, paced_healthz  # noqa: E402
from bench.cputime import cpu_ticks, steal_share  # noqa: E402
from bench.floors import durable_write_floor  # noqa: E402
from bench.run import percentile  # noqa: E402
from tests.api.realserver import RealServer, is_worker  # noqa: E402

WORKERS = 2
CLIENTS = 16
SCOPES = ["alpha", "bravo", "charlie", "delta", "echo"]
N_HEALTHZ = 4000
N_REMEMBER = 4000
HALF_SECONDS = 10.0
IDLE_SECONDS = 30.0
SETTLE_SECONDS = 15.0
STACKS = ("serve", "uvicorn", "gunicorn", "granian")
STOCK = ("uvicorn", "gunicorn", "granian")  # the stock servers, compared with the others
assert ENTRY_RE  # the entries `verify` counts are the ones `http_remember` sends


class Stack:
    """One server (and its committer) on `server_cpus`, started in sessions of their own."""

    def __init__(self, kind: str, server: RealServer, cpus: str, workers: int,
                 root: Path = ROOT) -> None:
        self.kind, self.server, self.cpus, self.workers = kind, server, cpus, workers
        self.root = root
        self.procs: list[subprocess.Popen] = []

    def _spawn(self, *args: str) -> None:
        log = (self.server.tmp / f"{self.kind}.log").open("ab")
        self.procs.append(subprocess.Popen(
            ["taskset", "-c", self.cpus, sys.executable, *args], cwd=self.root,
            env={**self.server.env, "PYTHONPATH": str(self.root)},
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))

    def start(self) -> None:
        bind = ["127.0.0.1", str(self.server.port)]
        level = ["--log-level", "warning"]
        if self.kind in ("serve", "baseline"):
            self._spawn("manage.py", "serve", "--no-migrate", "--workers", str(self.workers),
                        "--bind", ":".join(bind), *level)
        else:  # a stock server beside its committer, started first
            self._spawn("manage.py", "committer")
            self._spawn(*self._stock_server(bind, level))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                reply = self.server.send("GET", "/healthz")
                if reply.status == 200 and (self.root != ROOT or b'"ok"}' in reply.body):
                    return
            except OSError:
                pass
            time.sleep(0.1)  # poll interval
        raise RuntimeError(f"{self.kind} did not answer with a committer")

    def _stock_server(self, bind: list[str], level: list[str]) -> list[str]:
        """The stock server's command line, as docs/deployment.md gives it."""
        workers = str(self.workers)
        if self.kind == "uvicorn":
            return ["-m", "uvicorn", "memoryui.asgi:application", "--host", bind[0],
                    "--port", bind[1], "--workers", workers, *level]
        if self.kind == "gunicorn":
            return ["-m", "gunicorn", "memoryui.asgi:application", "-k",
                    "uvicorn_worker.UvicornWorker", "-w", workers, "-b", ":".join(bind),
                    *level]
        return ["-m", "granian", "--interface", "asgi", "--host", bind[0], "--port", bind[1],
                "--workers", workers, *level, "memoryui.asgi:application"]

    def cpu(self) -> float:
        return sum(session_cpu(p.pid) for p in self.procs)

    def worker_rss(self) -> list[float]:
        server = self.procs[-1].pid
        if self.kind in ("granian", "gunicorn"):  # workers forked by the server process
            return sorted(mb for pid, mb in session_rss(server).items()
                          if _parent(pid) == server)
        workers = sorted(mb for p in self.procs for pid, mb in session_rss(p.pid).items()
                         if is_worker(pid))
        # uvicorn (and `serve`) with one worker serve from the server process itself
        return workers or [mb for pid, mb in session_rss(server).items() if pid == server]

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the server first, then its committer
            proc.send_signal(signal.SIGTERM)
            proc.wait(300)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _spread(lat: list[float]) -> str:
    p50, p99 = percentile(lat, 50), percentile(lat, 99)
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms ({_ratio(lat):.1f}x)"


def _ratio(lat: list[float]) -> float:
    """p99 over p50."""
    p50 = percentile(lat, 50)
    return percentile(lat, 99) / p50 if p50 else 0.0


def measure(kind: str, tmp: Path, server_cpus: str, workers: int,
            say: Callable[[str], None], root: Path = ROOT) -> dict[str, float]:
    server = RealServer(tmp / kind, workers=workers)
    server.migrate()
    tokens = {s: server.token(s) for s in SCOPES}
    stack = Stack(kind, server, server_cpus, workers, root)
    stack.start()
    sent: dict[str, str] = {}
    try:
        http_remember(server, tokens, 200, CLIENTS)  # warm every worker
        h_lat, h_wall = http_healthz(server, N_HEALTHZ, CLIENTS)
        cpu0, ticks0 = stack.cpu(), cpu_ticks(server_cpus)
        r_lat, r_wall, r_sent, errors = http_remember(server, tokens, N_REMEMBER, CLIENTS)
        steal = steal_share(ticks0, cpu_ticks(server_cpus))
        sent.update(r_sent)
        caught_up = settle(stack)
        per_call = (stack.cpu() - cpu0) * 1000 / len(r_lat)
        top = len(r_lat) / r_wall
        half = top / 2
        p_lat, _, p_sent, p_errors = http_remember(server, tokens, int(half * HALF_SECONDS),
                                                   CLIENTS, rate=half)
        sent.update(p_sent)
        p_health = paced_healthz(server, int(half * HALF_SECONDS), CLIENTS, half)
        h_half = len(h_lat) / h_wall / 2
        p_own = paced_healthz(server, int(h_half * HALF_SECONDS), CLIENTS, h_half)
        before = stack.cpu()
        t = time.monotonic()
        time.sleep(SETTLE_SECONDS)  # a measured window, not a wait for something
        after = (stack.cpu() - before) / (time.monotonic() - t) * 100
        before = stack.cpu()
        t = time.monotonic()
        time.sleep(IDLE_SECONDS)  # the idle window being measured
        idle = (stack.cpu() - before) / (time.monotonic() - t) * 100
        rss = stack.worker_rss()
    finally:
        stack.stop()
    floor = durable_write_floor(tmp / f"{kind}-floor", int(half * HALF_SECONDS), workers,
                                half, 200)
    say(f"{kind}, {workers} workers, server on CPU {server_cpus}:")
    say(f"  /healthz   {len(h_lat) / h_wall:8.0f}/s  {_spread(h_lat)}")
    say(f"  remember   {top:8.0f}/s  {_spread(r_lat)}  errors {len(errors)}")
    say(f"             {per_call:.2f} ms of server CPU a call, the committer's commits and "
        f"indexing included ({caught_up:.1f} s to catch up); {steal:.1f} % of the server's "
        f"CPU time stolen by the host")
    say(f"  half load  {half:8.0f}/s  {_spread(p_lat)}  errors {len(p_errors)}")
    say(f"  /healthz   {half:8.0f}/s  {_spread(p_health)}  (paced the same: stack and clients)")
    say(f"  /healthz   {h_half:8.0f}/s  {_spread(p_own)}  (half of its own maximum: the "
        f"queueing of as busy a core)")
    say(f"  disk floor {half:8.0f}/s  {_spread(floor)}")
    say(f"  first {SETTLE_SECONDS:.0f} s after the load {after:.2f} % of a core; then idle "
        f"{idle:.2f} % (server and committer); worker RSS "
        f"{', '.join(f'{mb:.0f}' for mb in rss)} MB")
    say(f"  {verify(server.workspace, sent)}")
    return {"healthz": len(h_lat) / h_wall, "remember": top, "idle": idle, "cpu": per_call,
            "tail": _ratio(p_lat), "queueing": _ratio(p_own)}


def settle(stack: Stack, quiet: float = 2.0, window: float = 1.0, limit: float = 120.0
           ) -> float:
    """Seconds until the stack uses under `quiet` % of a core over a `window`: the
    committer has committed and indexed what the full-speed phase wrote, so the half-load
    phase measures half load, not a catch-up after a burst."""
    start = last_t = time.monotonic()
    last = stack.cpu()
    while time.monotonic() - start < limit:
        time.sleep(window)  # the window being measured
        now, t = stack.cpu(), time.monotonic()
        if (now - last) / (t - last_t) * 100 < quiet:
            break
        last, last_t = now, t
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--server-cpus", default="0")
    parser.add_argument("--client-cpus", default="1")
    parser.add_argument("--stacks", default=",".join(STACKS))
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure every stack this many times, each round in an order "
                             "turned by one place, and report the medians")
    args = parser.parse_args()
    os.sched_setaffinity(0, {int(c) for c in args.client_cpus.split(",")})
    kinds = (["baseline"] if args.baseline is not None else []) + args.stacks.split(",")
    rounds: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="memoryui-stock-bench-") as tmp:
        for n in range(args.rounds):
            order = kinds[n % len(kinds):] + kinds[: n % len(kinds)]
            print(f"round {n + 1} of {args.rounds}: {', '.join(order)}")
            for kind in order:
                root = args.baseline.resolve() if kind == "baseline" else ROOT
                rounds[kind].append(measure(kind, Path(tmp) / f"r{n}", args.server_cpus,
                                            args.workers, print, root))
    summarize(rounds)


def summarize(rounds: dict[str, list[dict[str, float]]]) -> None:
    """Each stack's median figures over the rounds, and the ratios of the medians."""
    median = {kind: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
              for kind, runs in rounds.items()}
    for kind, figures in median.items():
        print(f"median of {len(rounds[kind])}: {kind}: /healthz {figures['healthz']:.0f}/s, "
              f"remember {figures['remember']:.0f}/s ({figures['cpu']:.2f} ms of server CPU "
              f"a call), idle {figures['idle']:.2f} %; at half load p99 {figures['tail']:.1f}x "
              f"p50, /healthz at half of its own maximum {figures['queueing']:.1f}x")
    for stock in STOCK:
        for kind in median.keys() - set(STOCK):
            if stock in median:
                ratio = median[stock]["remember"] / median[kind]["remember"]
                by_cpu = median[kind]["cpu"] / median[stock]["cpu"]
                print(f"stock {stock} remember / {kind} remember (medians): {ratio:.2f}x; "
                      f"by server CPU a call: {by_cpu:.2f}x")


if __name__ == "__main__":
    main()
