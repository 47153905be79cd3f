"""Run every benchmark of the project on one corpus and print one table.

    python -m bench.run --preset small|large|huge [--imported] [--only NAME] [--dir DIR]
                        [--idle-seconds S]

The corpus is built once (or reused from --dir when it is the same preset and untouched) and
each `bench/bench_*.py` module that has `run(corpus, report)` gets its own fresh copy, so a
benchmark that writes cannot skew the next one. `--imported` runs on the same history without
a commit-graph (a team's existing repository as it arrives; see bench/corpus/). A module that is missing, fails to import or
fails while running is skipped with a printed note; the others still run.

`report(operation, samples_ms=None, *, ops_per_s=None, floor=None, floor_ms=None, note="",
unit="ms")` records one row: latencies in milliseconds (or values in `unit`, e.g. "%" of a
core; median and p95 are computed here), an optional throughput, and the floor it is measured against in the same run (a git CLI call, ripgrep,
the store call alone, ...). `ratio` is our median divided by the floor's median.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import pkgutil
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import bench
from bench.corpus import PRESETS, build_corpus
from bench.options import OPTIONS, load_text

STAMP = "memoryui-bench.json"  # kept inside .git so the workspace itself stays clean


@dataclass
class Row:
    module: str
    operation: str
    samples: list[float] = field(default_factory=list)
    ops_per_s: float | None = None
    floor: str | None = None
    floor_ms: list[float] = field(default_factory=list)
    note: str = ""
    unit: str = "ms"  # another unit (e.g. "%") is printed as is, without ops/s


def percentile(samples: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    s = sorted(samples)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def summarize(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {}
    return {"n": len(samples), "median": statistics.median(samples),
            "p95": percentile(samples, 95), "p99": percentile(samples, 99),
            "mean": statistics.fmean(samples)}


class Recorder:
    """The `report` callable handed to every module."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.module = ""

    def __call__(self, operation: str, samples_ms: list[float] | None = None, *,
                 ops_per_s: float | None = None, floor: str | None = None,
                 floor_ms: list[float] | None = None, note: str = "", unit: str = "ms") -> None:
        row = Row(self.module, operation, list(samples_ms or []), ops_per_s, floor,
                  list(floor_ms or []), note, unit)
        self.rows.append(row)
        print(f"  {format_row(row)}", flush=True)


def _ms(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 10_000:
        return f"{v / 1000:.1f} s"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 1:
        return f"{v:.1f} ms"
    return f"{v:.3f} ms"


def _rate(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.0f}" if v >= 10 else f"{v:.2f}"


def _value(v: float | None, unit: str) -> str:
    if unit == "ms" or v is None:
        return _ms(v)
    return f"{v:.2f} {unit}"


def row_cells(row: Row) -> list[str]:
    s, f = summarize(row.samples), summarize(row.floor_ms)
    ops = row.ops_per_s
    if ops is None and s and s["mean"] > 0 and row.unit == "ms":
        ops = 1000.0 / s["mean"]
    ratio = "-"
    if s and f and f["median"] > 0:
        r = s["median"] / f["median"]
        ratio = f"{r:.2f}x" if r < 10 else f"{r:.0f}x"
    u = row.unit
    return [row.operation, str(s.get("n", "-") if s else "-"), _value(s.get("median"), u),
            _value(s.get("p95"), u), _rate(ops), row.floor or "-", _value(f.get("median"), u),
            ratio]


def format_row(row: Row) -> str:
    c = row_cells(row)
    text = f"{c[0]}: n={c[1]} median={c[2]} p95={c[3]} ops/s={c[4]}"
    if row.floor:
        text += f" | floor {c[5]}: median={c[6]} ratio={c[7]}"
    if row.note:
        text += f" ({row.note})"
    return text


HEADERS = ["operation", "n", "median", "p95", "ops/s", "floor", "floor median", "ratio"]


def print_table(rows: list[Row], out=sys.stdout) -> None:
    cells = [row_cells(r) for r in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, h in enumerate(HEADERS)]
    right = {1, 2, 3, 4, 6, 7}

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if i in right else v.ljust(w)
                         for i, (v, w) in enumerate(zip(values, widths, strict=True)))

    print(line(HEADERS), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    module = None
    for r, c in zip(rows, cells, strict=True):
        if r.module != module:
            module = r.module
            print(f"[{module}]", file=out)
        print(line(c), file=out)
    notes = [(r.operation, r.note) for r in rows if r.note]
    if notes:
        print("\nnotes:", file=out)
        for op, note in notes:
            print(f"  - {op}: {note}", file=out)


# -- machine and corpus ----------------------------------------------------------------------

def machine_facts() -> dict[str, str]:
    model = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    rg = shutil.which("rg")
    rg_v = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split(
        "\n")[0] if rg else "ripgrep not installed"
    return {
        "cores": str(os.cpu_count()), "cpu": model, "memory": mem,
        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
        "git": git, "ripgrep": rg_v, "os": platform.platform(),
    }


def _default_dir(preset: str, imported: bool) -> Path:
    suffix = "-imported" if imported else ""
    return Path(tempfile.gettempdir()) / f"memoryui-bench-{preset}{suffix}"


def _reusable(path: Path, preset: str, imported: bool) -> dict | None:
    """The stamp's stats when `path` holds this corpus, untouched; else None."""
    stamp = path / ".git" / STAMP
    if not stamp.is_file():
        return None
    try:
        stats = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return None
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True,
                          text=True).stdout.strip()
    graph = (path / ".git" / "objects" / "info" / "commit-graph").exists() or (
        path / ".git" / "objects" / "info" / "commit-graphs").exists()
    if (stats.get("preset") != preset or stats.get("head") != head
            or bool(stats.get("imported")) != imported or graph == imported
            or (path / ".git" / "memoryui").exists()):
        return None
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=path,
                           capture_output=True, text=True).stdout.strip()
    return None if dirty else stats


def _strip_to_imported(source: Path, path: Path, stats: dict) -> dict:
    """The imported variant from a built corpus: a copy without the commit-graph (the only
    thing the builder adds), much faster than building the history again."""
    started = time.perf_counter()
    if path.exists():
        shutil.rmtree(path)
    subprocess.run(["cp", "-a", "--reflink=auto", str(source), str(path)], check=True)
    info = path / ".git" / "objects" / "info"
    (info / "commit-graph").unlink(missing_ok=True)
    shutil.rmtree(info / "commit-graphs", ignore_errors=True)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=path, capture_output=True)
    return {**stats, "imported": True, "seconds": round(time.perf_counter() - started, 3),
            "derived_from": str(source)}


def corpus_for(preset: str, directory: Path | None, imported: bool = False
               ) -> tuple[Path, dict]:
    """Build the corpus, or reuse it when the stamp matches and the workspace is untouched."""
    path = Path(directory or _default_dir(preset, imported))
    variant = f"{preset}{' imported' if imported else ''}"
    stats = _reusable(path, preset, imported)
    if stats is not None:
        print(f"reusing the {variant} corpus at {path}", flush=True)
        return path, stats
    source = _default_dir(preset, False)
    built = _reusable(source, preset, False) if imported and source != path else None
    if built is not None:
        print(f"making the {variant} corpus at {path} from {source} ...", flush=True)
        stats = _strip_to_imported(source, path, built)
    else:
        print(f"building the {variant} corpus at {path} ...", flush=True)
        stats = build_corpus(path, preset, force=True, imported=imported)
    stats["preset"] = preset
    (path / ".git" / STAMP).write_text(json.dumps(stats))
    print(f"  {stats['files']} files, {stats['commits']} commits in {stats['seconds']:.1f} s",
          flush=True)
    return path, stats


def fresh_copy(corpus: Path, into: Path) -> Path:
    """A copy that looks to git as the original does: a copy changes every file's inode and
    ctime, so the index is refreshed here (once, untimed) rather than by the first `git status`
    a benchmark happens to time."""
    dest = into / "ws"
    subprocess.run(["cp", "-a", "--reflink=auto", str(corpus), str(dest)], check=True)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=dest, capture_output=True)
    # The copy's pages reach the disk now, not 30 s later (the kernel's dirty expiry) in the
    # middle of a timed run, where every fsync waited 100-200 ms behind them (110 MB at
    # large): a stall of the machine, not of the code measured.
    os.sync()
    return dest


def discover(only: str | None) -> list[str]:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__)
                   if m.name.startswith("bench_"))
    if only:
        want = only if only.startswith("bench_") else f"bench_{only}"
        names = [n for n in names if n == want]
        if not names:
            print(f"note: no module bench/{want}.py", flush=True)
    return names


def run_all(preset: str, only: str | None = None, directory: Path | None = None,
            out=sys.stdout, imported: bool = False) -> list[Row]:
    facts = machine_facts()
    OPTIONS.preset, OPTIONS.imported = preset, imported
    corpus, stats = corpus_for(preset, directory, imported)
    loads = [load_text()]
    recorder = Recorder()
    skipped: list[str] = []
    for name in discover(only):
        try:
            module = importlib.import_module(f"bench.{name}")
        except Exception as exc:  # noqa: BLE001 - a broken module must not stop the others
            print(f"note: skipped {name}: import failed: {exc!r}", flush=True)
            skipped.append(f"{name} (import failed)")
            continue
        fn: Callable | None = getattr(module, "run", None)
        if not callable(fn):
            print(f"note: skipped {name}: it has no run(corpus, report)", flush=True)
            skipped.append(f"{name} (no run)")
            continue
        print(f"\n== {name} == ({load_text()})", flush=True)
        recorder.module = name.removeprefix("bench_")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"memoryui-{name}-") as tmp:
            try:
                fn(fresh_copy(corpus, Path(tmp)), recorder)
            except Exception:  # noqa: BLE001
                print(f"note: {name} failed:\n{traceback.format_exc()}", flush=True)
                skipped.append(f"{name} (failed)")
        loads.append(load_text())
        print(f"   ({name} took {time.perf_counter() - started:.0f} s; {loads[-1]})", flush=True)
    for want in ("bench_store", "bench_search", "bench_api", "bench_pages", "bench_history",
                 "bench_review", "bench_serve", "bench_sync", "bench_secrets"):
        if not only and want not in discover(None):
            print(f"note: bench/{want}.py is not there (yet); skipped", flush=True)
    print("", file=out)
    graph = ("imported: no commit-graph, as a team's repository arrives" if imported
             else "commit-graph with Bloom filters, as memoryui keeps it")
    print(f"memoryui benchmarks · preset {preset}: {stats['files']} files, "
          f"{stats['commits']} commits ({graph})", file=out)
    print(f"machine: {facts['cores']} cores, {facts['cpu']}, {facts['memory']} RAM; "
          f"Python {facts['python']}, SQLite {facts['sqlite']}, {facts['git']}, "
          f"{facts['ripgrep']}", file=out)
    print(f"load during the run: {loads[0]} at the start, then after each module: "
          f"{'; '.join(x.split(' on ')[0].removeprefix('load ') for x in loads[1:])}",
          file=out)
    print("", file=out)
    print_table(recorder.rows, out)
    if skipped:
        print(f"\nskipped: {', '.join(skipped)}", file=out)
    return recorder.rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--imported", action="store_true",
                        help="the same history without a commit-graph (an existing repository)")
    parser.add_argument("--only", help="run one module, e.g. search or bench_store")
    parser.add_argument("--dir", type=Path, help="where the corpus is built or reused")
    parser.add_argument("--idle-seconds", type=float, default=OPTIONS.idle_seconds,
                        help="idle window of the idle-CPU figure (default 300)")
    args = parser.parse_args(argv)
    OPTIONS.idle_seconds = args.idle_seconds
    run_all(args.preset, args.only, args.dir, imported=args.imported)
    return 0


def standalone(fn: Callable, argv: list[str] | None = None, name: str = "") -> int:
    """`__main__` of a bench module: corpus (built or reused), a fresh copy, one table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--imported", action="store_true")
    parser.add_argument("--dir", type=Path, help="where the corpus is built or reused")
    parser.add_argument("--idle-seconds", type=float, default=OPTIONS.idle_seconds)
    args = parser.parse_args(argv)
    OPTIONS.preset, OPTIONS.imported = args.preset, args.imported
    OPTIONS.idle_seconds = args.idle_seconds
    corpus, stats = corpus_for(args.preset, args.dir, args.imported)
    recorder = Recorder()
    recorder.module = name
    with tempfile.TemporaryDirectory(prefix="memoryui-bench-") as tmp:
        fn(fresh_copy(corpus, Path(tmp)), recorder)
    facts = machine_facts()
    print(f"\npreset {args.preset}{' (imported)' if args.imported else ''}: {stats['files']} "
          f"files, {stats['commits']} commits; {facts['cores']} cores, {facts['cpu']}; "
          f"{load_text()}")
    print_table(recorder.rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
