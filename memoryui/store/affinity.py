"""Where a `serve` worker's threads, and the programs they start, may run.

`serve` keeps each worker to one CPU (`memoryui/serving.py`): its event loop and request
threads hand Python's GIL to each other at every system call, and on one core that costs
no wakeup across cores. What a worker does beside its requests (building the hierarchy,
reading history, `git status`: the threads `threadnames.named` starts) and the programs a
request starts (git) need no GIL hand-over with the requests, so they may run on any CPU
the server may use: a first start's history read, or a `git log` for a history page, then
takes an idle core instead of the one its worker's requests wait for (the first request
of a first start on huge took 1.05 s instead of 0.58 s with the whole worker kept to one
CPU).
"""

from __future__ import annotations

import os

_wide: frozenset[int] | None = None  # the CPUs before keep_to, in a worker kept to one


def kept(pid: int, tid: int | str, name: str) -> bool:
    """Whether a worker's thread is one it keeps to its CPU: its first (the event loop's)
    or a request thread (`memoryui-request_N`, named `request_N` to the OS)."""
    return str(tid) == str(pid) or name.startswith("request")


def keep_to(cpu: int) -> None:
    """Keep the calling thread, and the threads it starts from now on, to `cpu`."""
    global _wide
    wide = frozenset(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    _wide = wide


def widen_thread() -> None:
    """Let the calling thread (and what it starts) run on every CPU the worker could."""
    if _wide is not None:
        try:
            os.sched_setaffinity(0, _wide)
        except OSError:  # a CPU taken away since (cgroups): it stays where it is
            pass


def widen(pid: int) -> None:
    """Let a program a kept thread just started run on every CPU the worker could (its
    threads made before this call keep the one CPU; git makes its own a little later)."""
    if _wide is not None:
        try:
            os.sched_setaffinity(pid, _wide)
        except OSError:  # it has exited already, or a CPU was taken away
            pass
