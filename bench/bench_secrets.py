"""The secrets scan beside the write it guards, on the corpus's real text sizes.

Every write runs `Guard.check`: the lines it adds (an append: just the tail) through the
detect-secrets plugins memoryui uses. Measured on a copy of the corpus, in one process:

- the scan alone for a `remember`-sized append to a growing daily log;
- the store append with the default policy (`block`) vs the same appends with
  `MEMORYUI_SECRETS=off` (the floor: the write's own cost);
- a whole-file scan of the largest files (a person's edit of a flagged file, a pending
  commit, a sync arrival re-check the whole text);
- rebuilding the flagged record from every file (a workspace from before this feature).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from bench.run import percentile
from memoryui.secrets import added_lines, scan_lines, scan_text
from memoryui.store import Actor, Store

DATE = "2026-11-23"
N_APPENDS = 600
N_BIG = 30


def _entry(i: int) -> str:
    return (f"\n## {9 + i // 60 % 12:02d}:{i % 60:02d}\n\nbench-secrets-{i}: deployed "
            f"payments-api v{i % 7}.{i % 13} to eu-west-1; canary healthy, p99 {i % 90} ms.\n")


def _appends(store: Store, scopes: list[str], tag: str) -> list[float]:
    lat = []
    for i in range(N_APPENDS):
        scope = scopes[i % len(scopes)]
        path = store.path_for("daily", scope, DATE).replace(".md", f"-{tag}.md")
        t = time.perf_counter()
        store.append(path, _entry(i), header=f"# {DATE}\n", actor=Actor.agent(scope),
                     tool="remember")
        lat.append((time.perf_counter() - t) * 1000)
    return lat


def run(corpus: Path, report: Callable[..., None]) -> None:
    root = Path(corpus)
    off = Store(root, commit_delay=0.2, secrets="off")
    scopes = off.scopes()[:20]
    floor = _appends(off, scopes, "off")
    off.flush()
    off.close()

    store = Store(root, commit_delay=0.2, secrets="block")
    guarded = _appends(store, scopes, "on")
    # The scan alone, on the same growing texts an append sees.
    scan_ms: list[float] = []
    texts = {s: f"# {DATE}\n" for s in scopes}
    for i in range(N_APPENDS):
        scope = scopes[i % len(scopes)]
        old = texts[scope]
        new = old + _entry(i)
        t = time.perf_counter()
        found = scan_lines(added_lines(old, new))
        scan_ms.append((time.perf_counter() - t) * 1000)
        assert not found
        texts[scope] = new
    store.flush()
    report(f"secrets scan of an append's added lines ({N_APPENDS} appends)", scan_ms,
           floor="store append, secrets off", floor_ms=floor,
           note=f"p50 {percentile(scan_ms, 50):.3f} ms of a write whose own p50 is "
                f"{percentile(floor, 50):.2f} ms")
    report("store append, MEMORYUI_SECRETS=block (agent)", guarded,
           floor="store append, secrets off", floor_ms=floor,
           note=f"p50 {percentile(guarded, 50):.2f} ms vs {percentile(floor, 50):.2f} ms off")

    # Whole-file scans of the largest files, against reading them.
    files = sorted(((p, (root / p).stat().st_size) for p in store.list_files()
                    if p.endswith(".md")), key=lambda x: -x[1])[:N_BIG]
    whole, reads = [], []
    for path, _size in files:
        t = time.perf_counter()
        text = store.read(path) or ""
        reads.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        scan_text(text)
        whole.append((time.perf_counter() - t) * 1000)
    sizes = sorted(s for _p, s in files)
    report(f"secrets scan of a whole file (the {N_BIG} largest)", whole,
           floor="store read of the same file", floor_ms=reads,
           note=f"sizes {sizes[0] // 1024}-{sizes[-1] // 1024} KiB")

    # Rebuilding the flagged record from every file.
    t = time.perf_counter()
    every = [(p, store.read(p) or "") for p in store.list_files()]
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    flagged = store.secrets.rebuild(every)
    scan_s = time.perf_counter() - t
    report(f"rebuild the flagged record ({len(every)} files)", [scan_s * 1000],
           floor="reading every file", floor_ms=[read_s * 1000],
           note=f"{flagged} file(s) flagged; {sum(len(x) for _p, x in every) // 1024} KiB")
    store.close()
