"""Floors shared by several benchmarks: what a script would do with the git CLI."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import time
from pathlib import Path


def git_cli_floor(root: Path, scope: str, n: int, date: str = "2026-11-23") -> list[float]:
    """Append one daily entry + `git add` + `git commit` per write; ms per write."""
    rel = f"agents/{scope}/memory/daily/{date}.md"
    full = root / rel
    full.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": scope, "GIT_AUTHOR_EMAIL": f"{scope}@agents",
           "GIT_COMMITTER_NAME": scope, "GIT_COMMITTER_EMAIL": f"{scope}@agents"}
    lat = []
    for i in range(n):
        t = time.perf_counter()
        with open(full, "a") as fh:
            if i == 0:
                fh.write(f"# {date}\n")
            fh.write(f"\n## 10:{i % 60:02d}\n\nfloor entry {i}\n")
        subprocess.run(["git", "add", "--", rel], cwd=root, check=True, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", f"remember: {rel}", "--", rel], cwd=root,
                       check=True, capture_output=True, env=env)
        lat.append((time.perf_counter() - t) * 1000)
    return lat


def durable_write_floor(folder: Path, n: int, processes: int, rate: float,
                        size: int) -> list[float]:
    """`n` whole-file writes of `size` bytes as the store makes them (temporary file, fsync,
    rename, fsync of the folder) on a fixed schedule of `rate` per second over `processes`
    processes, in five folders; ms from each scheduled time. What the disk alone allows a
    durable write's latency spread to be."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    start = time.time() + 1.0  # after every process has started
    procs = [ctx.Process(target=_durable_writes, args=(folder, k, n, processes, rate, size,
                                                        start, results))
             for k in range(processes)]
    for proc in procs:
        proc.start()
    lat = [ms for _ in procs for ms in results.get()]
    for proc in procs:
        proc.join()
    return lat


def _durable_writes(folder: Path, k: int, n: int, processes: int, rate: float, size: int,
                    start: float, results) -> None:
    data, lat = b"x" * size, []
    for i in range(k, n, processes):
        due = start + i / rate
        wait = due - time.time()  # (read once: it may pass zero between two reads)
        if wait > 0:
            time.sleep(wait)
        sub = folder / f"s{i % 5}"
        sub.mkdir(parents=True, exist_ok=True)
        tmp = sub / f".f.{k}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        os.replace(tmp, sub / "f.md")
        fd = os.open(sub, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        lat.append((time.time() - due) * 1000)
    results.put(lat)
