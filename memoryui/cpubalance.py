"""`serve`'s workers kept spread over the CPUs by what they do, not only by their number.

Each worker's event loop and request threads keep to one CPU (`memoryui/serving.py`), so the
kernel no longer moves a busy worker off a busy core. Agents' keep-alive connections stay
with the worker that accepted them, and sixteen connections opened at once land unevenly
(2 / 4 / 3 / 7, 8 / 3 / 1 / 4 over four workers): with two workers a core, one core could
get two thirds of the calls while the other idled (a round of the API bench at 1,013
`remember` calls a second against 1,350-1,480 in the others, the cores 90 % busy). So the
supervisor looks at its workers' CPU once a second while they work (every HEALTH_EVERY
seconds while they idle) and, when one CPU's workers used over a quarter of a core more
than another's, moves the one worker whose move evens them out best.
"""

from __future__ import annotations

import os
from pathlib import Path

from memoryui.store import affinity

BALANCE_EVERY = 1.0  # seconds between looks while the workers are busy
MIN_GAP = 0.25  # cores of difference between two CPUs' workers worth a move
BUSY = 0.1  # cores the workers used, all together, for the server to count as busy
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float | None:
    """The CPU a process has used (all its threads), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _HZ
    except (OSError, ValueError, IndexError):
        return None


def move(loads: dict[int, float], placed: dict[int, int], cpus: list[int]
         ) -> tuple[int, int] | None:
    """(worker, new CPU) for the one move that best evens out the CPUs' loads (cores used
    by the workers kept to each), when the busiest and the idlest differ by over MIN_GAP
    and the move narrows that by a tenth of a core or more; None otherwise."""
    per_cpu = {cpu: 0.0 for cpu in cpus}
    for worker, cpu in placed.items():
        if cpu in per_cpu:
            per_cpu[cpu] += loads.get(worker, 0.0)
    hot = max(cpus, key=lambda c: per_cpu[c])
    cold = min(cpus, key=lambda c: per_cpu[c])
    gap = per_cpu[hot] - per_cpu[cold]
    if gap <= MIN_GAP:
        return None
    best, best_gap = None, gap - 0.1
    for worker, cpu in sorted(placed.items()):
        if cpu != hot:
            continue
        load = loads.get(worker, 0.0)
        after = abs((per_cpu[hot] - load) - (per_cpu[cold] + load))
        if after < best_gap:
            best, best_gap = worker, after
    return None if best is None else (best, cold)


def keep(pid: int, cpu: int) -> None:
    """Keep a worker's first thread (its event loop) and its request threads to `cpu`;
    threads it starts later take its loop's CPU, background ones let go of it."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return
    for task in tasks:
        try:
            if affinity.kept(pid, task.name, (task / "comm").read_text()):
                os.sched_setaffinity(int(task.name), {cpu})
        except (OSError, ValueError):  # the thread ended meanwhile
            continue


class Balancer:
    """The supervisor's looks: `look(workers)` with {pid: cpu} after each wait; `busy`
    says whether the next look should come in BALANCE_EVERY seconds."""

    def __init__(self, cpus: list[int]) -> None:
        self.cpus = cpus
        self.busy = False
        self._seen: dict[int, tuple[float, float]] = {}  # pid -> (cpu seconds, when)

    def look(self, placed: dict[int, int], now: float) -> tuple[int, int] | None:
        """Measure each worker's cores used since the last look; make the move `move`
        picks (returns it, or None)."""
        loads: dict[int, float] = {}
        for pid in placed:
            used = cpu_seconds(pid)
            if used is None:
                continue
            before = self._seen.get(pid)
            self._seen[pid] = (used, now)
            if before is not None and now > before[1]:
                loads[pid] = (used - before[0]) / (now - before[1])
        self._seen = {pid: v for pid, v in self._seen.items() if pid in placed}
        self.busy = sum(loads.values()) >= BUSY
        if not self.busy or len(loads) < len(placed):
            return None
        chosen = move(loads, placed, self.cpus)
        if chosen is not None:
            keep(*chosen)
        return chosen
