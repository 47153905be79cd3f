"""The write path: store appends + commits vs the git CLI, in one and four processes.

Each write is what `remember` does: append an entry to a scope's daily log under the workspace
lock, attributed to that scope. Measured on a copy of the corpus:

- one process, deferred commits (`Store(root, commit_delay=0.2)`: append, return, and a
  committer thread makes one commit per author every 0.2 s);
- one process, synchronous commits (`commit_delay=0`: the commit happens before the call returns);
- four processes together, each with its own Store on the same workspace (deferred);
- the floor, in the same repository and run: append with Python + `git add` + `git commit`;
- an entry appended to a 1 MB log against the same to a 1 KB log (an append's
  cost should follow the entry, not the log).

After each run the benchmark checks what a user would check: every entry is in its file exactly
once, every commit's author is the scope whose file it touched, the journal is empty and
`git status` is clean (memoryui refreshed the index entries it committed).

Goals: >= 300 writes/s in one process, >= 200/s from 4 processes.
"""

from __future__ import annotations

import multiprocessing
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.floors import git_cli_floor
from bench.run import percentile
from memoryui.store import Actor, Store

DATE = "2026-11-21"  # the day after the corpus ends: new daily logs that grow with each write
FLOOR_DATE = "2026-11-22"
N_DEFERRED = 3000
N_SYNC = 300
N_PER_PROC = 1000
PROCS = 4
N_FLOOR = 100
N_BIG = 400
BIG_DATES = ("2026-11-23", "2026-11-24")
ENTRY_RE = re.compile(r"bench-[a-z]+-\d+-\d+")


def _entry(marker: str, i: int) -> str:
    return (f"\n## {9 + i // 60 % 12:02d}:{i % 60:02d}\n\n{marker}: deployed payments-api "
            f"v{i % 7}.{i % 13}.{i % 17} to eu-west-1; canary healthy.\n")


def _write_many(store: Store, scopes: list[str], tag: str, worker: int, n: int,
                stride: int = 1) -> tuple[list[float], list[str]]:
    lat, markers = [], []
    for i in range(n):
        scope = scopes[(i * stride + worker) % len(scopes)]
        marker = f"bench-{tag}-{worker}-{i}"
        path = store.path_for("daily", scope, DATE)
        t = time.perf_counter()
        store.append(path, _entry(marker, i), header=f"# {DATE}\n", actor=Actor.agent(scope),
                     tool="remember")
        lat.append((time.perf_counter() - t) * 1000)
        markers.append(marker)
    return lat, markers


def _proc_main(root: str, scopes: list[str], worker: int, n: int, start, out) -> None:
    store = Store(root, commit_delay=0.2)
    start.wait()
    lat, markers = _write_many(store, scopes, "multi", worker, n, stride=PROCS)
    store.flush()
    out.put((worker, lat, markers, time.perf_counter()))
    store.close()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def verify(root: Path, markers: list[str], since: str) -> str:
    """Raise if an entry is lost or doubled, a commit has the wrong author, or status lies."""
    seen: dict[str, int] = {}
    for f in (root / "agents").glob(f"*/memory/daily/{DATE}.md"):
        for m in ENTRY_RE.findall(f.read_text()):
            seen[m] = seen.get(m, 0) + 1
    missing = [m for m in markers if m not in seen]
    doubled = [m for m in markers if seen.get(m, 0) > 1]
    if missing or doubled:
        raise AssertionError(f"{len(missing)} entries missing, {len(doubled)} doubled")
    status = _git(root, "status", "--porcelain")
    if status.strip():
        raise AssertionError(f"git status is not clean after flush:\n{status[:500]}")
    if any((root / ".git" / "memoryui").glob("batch-*.jsonl")) or (
            (root / ".git/memoryui/journal.jsonl").exists()
            and (root / ".git/memoryui/journal.jsonl").stat().st_size):
        raise AssertionError("journal not empty after flush")
    commits, wrong = 0, 0
    for block in _git(root, "log", "--format=%x01%an", "--name-only",
                      f"{since}..HEAD").split("\x01")[1:]:
        author, *files = [x for x in block.split("\n") if x.strip()]
        commits += 1
        for f in files:
            if f.split("/")[1] != author:
                wrong += 1
    if wrong:
        raise AssertionError(f"{wrong} files committed under another author")
    return f"verified: {len(markers)} entries once each, {commits} commits, authors right, " \
           "git status clean"




def run(corpus: Path, report: Callable[..., None]) -> None:
    root = Path(corpus)
    probe = Store(root)
    scopes = probe.scopes()
    probe.close()
    start_head = _git(root, "rev-parse", "HEAD").strip()

    # The floor first, on the untouched corpus: the git CLI pays for the 20k-entry index.
    floor = git_cli_floor(root, scopes[-1], N_FLOOR, FLOOR_DATE)
    floor_name = "git CLI append+add+commit"
    start_head = _git(root, "rev-parse", "HEAD").strip()

    # 1. one process, deferred group commits
    store = Store(root, commit_delay=0.2)
    t0 = time.perf_counter()
    lat, markers = _write_many(store, scopes, "deferred", 0, N_DEFERRED)
    returned = time.perf_counter()
    while store.git.has_uncommitted() and time.perf_counter() - returned < 10:
        time.sleep(0.005)
    drain = time.perf_counter() - returned
    store.flush()
    wall = time.perf_counter() - t0
    note = verify(root, markers, start_head)
    store.close()
    report(f"store append+commit, deferred 0.2 s, 1 process ({N_DEFERRED} writes)", lat,
           ops_per_s=N_DEFERRED / wall, floor=floor_name, floor_ms=floor,
           note=f"p50 {percentile(lat, 50):.2f} ms, p99 {percentile(lat, 99):.2f} ms per write; last write "
                f"committed {drain * 1000:.0f} ms after it returned; {note}")

    # 2. one process, a commit inside every call
    head = _git(root, "rev-parse", "HEAD").strip()
    store = Store(root, commit_delay=0)
    t0 = time.perf_counter()
    lat2, markers2 = _write_many(store, scopes, "sync", 0, N_SYNC)
    wall = time.perf_counter() - t0
    note = verify(root, markers + markers2, start_head)
    commits = int(_git(root, "rev-list", "--count", f"{head}..HEAD"))
    store.close()
    report(f"store append+commit, synchronous, 1 process ({N_SYNC} writes)", lat2,
           ops_per_s=N_SYNC / wall, floor=floor_name, floor_ms=floor,
           note=f"p50 {percentile(lat2, 50):.2f} ms, p99 {percentile(lat2, 99):.2f} ms; {commits} commits "
                f"for {N_SYNC} writes; {note}")

    # 3. four processes together, each its own Store on the same workspace
    ctx = multiprocessing.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_proc_main, args=(str(root), scopes, k, N_PER_PROC, start, out))
             for k in range(PROCS)]
    for p in procs:
        p.start()
    time.sleep(1.0)  # let every process import and open its store
    t0 = time.perf_counter()
    start.set()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
    wall = max(r[3] for r in results) - t0
    lat3 = [x for r in results for x in r[1]]
    markers3 = [m for r in results for m in r[2]]
    total = PROCS * N_PER_PROC
    note = verify(root, markers + markers2 + markers3, start_head)
    report(f"store append+commit, deferred, {PROCS} processes ({total} writes)", lat3,
           ops_per_s=total / wall, floor=floor_name, floor_ms=floor,
           note=f"p50 {percentile(lat3, 50):.2f} ms, p99 {percentile(lat3, 99):.2f} ms per write; {note}")

    # 4. what an entry costs as its log grows: the same appends to a 1 KB and a 1 MB log
    store = Store(root, commit_delay=0.2)
    sizes = {}
    for size, day in ((1_000, BIG_DATES[0]), (1_000_000, BIG_DATES[1])):
        path = store.path_for("daily", scopes[0], day)
        line = "- an earlier entry of a long day, kept as the agent wrote it\n"
        store.write(path, f"# {day}\n" + line * (size // len(line)), actor=Actor.agent(scopes[0]),
                    tool="remember")
        lat = []
        for i in range(N_BIG):
            t = time.perf_counter()
            store.append(path, _entry(f"bench-big-{size}-{i}", i), actor=Actor.agent(scopes[0]),
                         tool="remember")
            lat.append((time.perf_counter() - t) * 1000)
        sizes[size] = lat
    store.flush()
    store.close()
    report(f"Store.append to a 1 MB daily log ({N_BIG} entries)", sizes[1_000_000],
           floor="the same entries to a 1 KB log", floor_ms=sizes[1_000],
           note="what an entry costs as its log grows (the log is never read, decoded or "
                "re-encoded; 1 entry in ~40 crosses a memory page and goes in by a new file, "
                "the log copied by the kernel); mean per entry, which counts those: "
                f"{statistics.fmean(sizes[1_000_000]):.3f} ms against "
                f"{statistics.fmean(sizes[1_000]):.3f} ms")

    report(f"floor: {floor_name} ({N_FLOOR} writes)", floor,
           note=f"p50 {percentile(floor, 50):.1f} ms, p99 {percentile(floor, 99):.1f} ms")


if __name__ == "__main__":
    from bench.run import standalone

    sys.exit(standalone(run, sys.argv[1:], "store"))
