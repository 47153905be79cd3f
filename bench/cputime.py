"""CPU per call by who spent it: a server's threads by name, its git children, the bench's
clients, the machine.

A ratio of throughputs on a saturated machine is a ratio of CPU per call, so that is what
the API bench prints beside it. Sampling profilers answer another question: py-spy counts a
thread that waits inside C (SQLite's busy handler, a `flock`, a `fdatasync`) as active, and
it showed the supervisor's indexer "busy" 90 ms a second where `/proc` said 3 ms. Here each
thread's user and system time is read from `/proc/<pid>/task/<tid>/stat` before and after
a round (memoryui names its threads: `memoryui/store/threadnames.py`), the git commands the
supervisor ran from its children's times, and the whole machine from `/proc/stat`. A thread
that ends inside the round takes its time with it (the pools here live as long as the
server). Linux only; elsewhere every figure is empty.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
PROC = Path("/proc")
# Thread names (as the kernel keeps them) and what the bench calls them.
GROUPS = (("request", "request threads"), ("committer", "commit tick"),
          ("search-", "search index"))


def stat_fields(stat_text: str) -> list[str]:
    """The fields of a `/proc/.../stat` line after the command name (which may hold spaces
    and parentheses): state is [0], ppid [1], session [3], utime [11], stime [12],
    cutime [13], cstime [14]."""
    return stat_text.rsplit(")", 1)[1].split()


def _children(pid: int) -> list[int]:
    try:
        out = []
        for tid in os.listdir(PROC / str(pid) / "task"):
            text = (PROC / str(pid) / "task" / tid / "children").read_text()
            out += [int(c) for c in text.split()]
        return out
    except OSError:
        return []


def _group(pid: int, tid: int, name: str, supervisor: int) -> str:
    who = "supervisor" if pid == supervisor else "workers"
    for prefix, label in GROUPS:
        if name.startswith(prefix):
            return f"{who}: {label}"
    return f"{who}: event loop" if tid == pid and who == "workers" else f"{who}: other"


def snapshot(supervisor: int) -> Counter:
    """CPU seconds so far by group, for the server whose supervisor is `supervisor`
    (its workers are its children), plus 'git commands' and the machine's busy time."""
    out: Counter = Counter()
    for pid in [supervisor, *_children(supervisor)]:
        try:
            tids = os.listdir(PROC / str(pid) / "task")
        except OSError:
            continue
        for tid in tids:
            try:
                text = (PROC / str(pid) / "task" / tid / "stat").read_text()
            except OSError:
                continue
            name = text[text.index("(") + 1:text.rindex(")")]
            f = stat_fields(text)
            out[_group(pid, int(tid), name, supervisor)] += (int(f[11]) + int(f[12])) / HZ
    try:
        f = stat_fields((PROC / str(supervisor) / "stat").read_text())
        out["git commands"] = (int(f[13]) + int(f[14])) / HZ  # waited-for children
    except OSError:
        pass
    if supervisor != os.getpid():  # the bench's own clients (ended threads included)
        me = os.times()
        out["the clients"] = me.user + me.system
    cpu = cpu_ticks()
    if sum(cpu):
        out["machine busy"] = (sum(cpu) - cpu[3] - cpu[4]) / HZ
        out["machine all"] = sum(cpu) / HZ
    return out


def cpu_ticks(cpus: str | None = None) -> list[int]:
    """The `/proc/stat` counters (user, nice, system, idle, iowait, irq, softirq, steal,
    guest, guest_nice) of the whole machine, or summed over `cpus` ("0", "0,1", "0-3");
    zeros where there is no `/proc`."""
    wanted = {"cpu"} if cpus is None else {f"cpu{c}" for c in _cpu_list(cpus)}
    total = [0] * 10
    try:
        lines = (PROC / "stat").read_text().splitlines()
    except OSError:
        return total
    for line in lines:
        name, *values = line.split() or [""]
        if name in wanted:
            total = [a + int(b) for a, b in zip(total, values[:10], strict=False)]
    return total


def steal_share(before: list[int], after: list[int]) -> float:
    """% of those CPUs' time the hypervisor gave to other guests (steal, field 8)."""
    spent = [b - a for a, b in zip(before, after, strict=True)]
    return 100 * spent[7] / sum(spent) if sum(spent) else 0.0


def _cpu_list(cpus: str) -> list[int]:
    """The CPUs of a list as taskset writes it."""
    out: list[int] = []
    for part in cpus.split(","):
        first, _, last = part.partition("-")
        out += range(int(first), int(last or first) + 1)
    return out


def core_waits(supervisor: int) -> float:
    """Seconds the workers' event loops and request threads have spent ready to run but
    waiting for a core (the second field of `/proc/<pid>/task/<tid>/schedstat`): what a
    paced run's slow calls wait for when the cores, not the disk, hold them up."""
    return thread_waits(_children(supervisor))


def thread_waits(pids: list[int]) -> float:
    """`core_waits` of these processes: their first threads' and request threads'."""
    total = 0
    for pid in pids:
        try:
            tids = os.listdir(PROC / str(pid) / "task")
        except OSError:
            continue
        for tid in tids:
            task = PROC / str(pid) / "task" / tid
            try:
                name = (task / "comm").read_text().strip()
                if _serves(pid, tid, name):
                    total += int((task / "schedstat").read_text().split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return total / 1e9


def _serves(pid: int, tid: int | str, name: str) -> bool:
    """A worker's thread that serves requests: its first (the event loop's), or one of the
    threads Django runs a request's synchronous code in (no memoryui background name)."""
    return str(tid) == str(pid) or not name.startswith(BACKGROUND)


BACKGROUND = ("committer", "search-", "sync", "watch", "hierarchy", "lastchange", "listing",
              "overview-", "status")


def spent(before: Counter, after: Counter) -> Counter:
    """What was spent between two snapshots, by group (rounds' add up with `update`)."""
    return Counter({k: after[k] - before.get(k, 0.0) for k in after})


def per_call(used: Counter, calls: int) -> dict[str, float]:
    """Milliseconds of CPU per call by group, of what `calls` calls used (see `spent`), and
    the share of the machine's cores that was busy meanwhile ('cores busy %')."""
    if calls <= 0:
        return {}
    out = {k: v * 1000 / calls for k, v in used.items()
           if k not in ("machine all", "machine busy") and v > 0}
    if used.get("machine all", 0) > 0:
        out["machine"] = used["machine busy"] * 1000 / calls
        # (tick counts turned into seconds: a saturated machine can come out a hair over)
        out["cores busy %"] = min(100.0, 100 * used["machine busy"] / used["machine all"])
    return out


def describe(split: dict[str, float]) -> str:
    """'machine 1.44 ms (98 % of the cores busy); workers: request threads 0.76, …' (the
    groups largest first)."""
    if not split:
        return "not measured (no /proc)"
    parts = [f"{k} {v:.2f}" for k, v in sorted(split.items(), key=lambda kv: -kv[1])
             if k not in ("machine", "cores busy %") and v >= 0.005]
    head = ""
    if "machine" in split:
        head = f"machine {split['machine']:.2f} ms ({split['cores busy %']:.0f} % of the cores busy); "
    return head + ", ".join(parts)
