"""Concurrent HTTP clients for the benchmarks: every client opens its connection, then all
start together, and the wall time counts from that moment."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

PSI_CPU = Path("/proc/pressure/cpu")


def run_clients(client: Callable[[int, threading.Barrier], None], clients: int,
                on_go: Callable[[], None] | None = None) -> float:
    """Run `client(i, barrier)` in `clients` threads; each calls `barrier.wait()` once it is
    ready. `on_go` runs just before the start. Returns the wall seconds from the start."""
    barrier = threading.Barrier(clients + 1)
    threads = [threading.Thread(target=client, args=(i, barrier)) for i in range(clients)]
    for th in threads:
        th.start()
    if on_go is not None:
        on_go()
    barrier.wait()
    started = time.perf_counter()
    for th in threads:
        th.join()
    return time.perf_counter() - started


def drive(server, items: list, clients: int, send: Callable[[object, object], tuple],
          rate: float | None = None, starts: list[float] | None = None
          ) -> tuple[list[float], float, list[str]]:
    """`send(conn, item)` for every item from `clients` keep-alive threads; returns the
    latencies of the 200 answers, the wall time and the errors.

    Without `rate` every client sends as fast as it can (the server's ceiling, latency is
    mostly queueing). With `rate` calls are sent on a fixed schedule (calls/s over all
    clients) and latency counts from the scheduled time, so a server falling behind shows
    up as latency instead of being hidden by the clients slowing down. `starts`, when given,
    gets each answered call's start (scheduled or sent), in the order of the latencies.
    """
    work: queue.Queue = queue.Queue()
    for item in items:
        work.put(item)
    lat: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    schedule = iter(range(len(items)))
    start: list[float] = []

    def client(_i: int, barrier: threading.Barrier) -> None:
        conn = server.connection()
        barrier.wait()
        while True:
            try:
                item = work.get_nowait()
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
                status, body = send(conn, item)
            except Exception as exc:  # noqa: BLE001 - counted as lost
                conn.close()
                conn = server.connection()
                status, body = 0, {"error": repr(exc)}
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if status == 200:
                    lat.append(ms)
                    if starts is not None:
                        starts.append(t)
                else:
                    errors.append(f"{status} {body}")
        conn.close()

    wall = run_clients(client, clients, on_go=lambda: start.append(time.perf_counter() + 0.05))
    return lat, wall, errors


def paced_healthz(server, n: int, clients: int, rate: float,
                  starts: list[float] | None = None) -> list[float]:
    """GET /healthz on the schedule of a paced remember run: the serving stack's own spread."""
    lat, _, _ = drive(server, list(range(n)), clients,
                      lambda conn, _i: server.request("GET", "/healthz", conn=conn), rate,
                      starts)
    return lat


def http_healthz(server, n: int, clients: int) -> tuple[list[float], float]:
    """`n` GET /healthz from `clients` keep-alive threads: the server's own ceiling."""
    left = [n]
    lat: list[float] = []
    lock = threading.Lock()

    def client(_i: int, barrier: threading.Barrier) -> None:
        conn = server.connection()
        barrier.wait()
        while True:
            with lock:
                if left[0] <= 0:
                    break
                left[0] -= 1
            t = time.perf_counter()
            server.request("GET", "/healthz", conn=conn)
            with lock:
                lat.append((time.perf_counter() - t) * 1000)
        conn.close()

    return lat, run_clients(client, clients)


class CpuPressure:
    """The share of a `with` block's wall time in which some runnable task waited for a
    core (Linux's pressure stall information; `percent` None where there is none): how
    oversubscribed the machine was while a latency was measured."""

    def __enter__(self) -> CpuPressure:
        self.percent: float | None = None
        self._start = _stalled_us(), time.monotonic()
        return self

    def __exit__(self, *_exc: object) -> None:
        end = _stalled_us()
        if end is not None and self._start[0] is not None:
            wall = time.monotonic() - self._start[1]
            self.percent = (end - self._start[0]) / 1e6 / wall * 100 if wall else 0.0


def _stalled_us() -> int | None:
    try:
        first = PSI_CPU.read_text().splitlines()[0]  # "some avg10=.. avg60=.. avg300=.. total=N"
        return int(first.rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


def stall_share(starts: list[float], lat: list[float], slow: float, within: float = 0.015,
                together: int = 5) -> float:
    """The share of the calls slower than `slow` ms that came in a stall: at least `together`
    such calls sent within `within` s of the one before (a pause of the machine or of the
    whole server, as against one call's own slowness)."""
    sent = sorted(t for t, ms in zip(starts, lat, strict=True) if ms > slow)
    if not sent:
        return 0.0
    in_stalls, run = 0, 1
    for a, b in zip(sent, sent[1:], strict=False):
        if b - a < within:
            run += 1
            continue
        in_stalls += run if run >= together else 0
        run = 1
    in_stalls += run if run >= together else 0
    return in_stalls / len(sent)
