"""Concurrent HTTP clients for the benchmarks: every client opens its connection, then all
start together, and the wall time counts from that moment."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


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
