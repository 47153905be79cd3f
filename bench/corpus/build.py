"""Building a corpus: the directory, the fast-import run, the finishing git commands, and the
command line."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.corpus.documents import Importer
from bench.corpus.presets import PRESETS
from bench.corpus.simulation import Corpus


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def _prepare_dir(path: Path, force: bool) -> None:
    """Refuse to build over existing content unless forced, and never wipe something vital."""
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a directory")
    if path.is_dir() and any(path.iterdir()):
        if not force:
            raise FileExistsError(f"{path} is not empty (use --force to wipe it)")
        resolved = path.resolve()
        cwd = Path.cwd().resolve()
        if (resolved == Path(resolved.anchor) or resolved == Path.home().resolve()
                or cwd == resolved or resolved in cwd.parents):
            raise PermissionError(f"refusing to wipe {resolved}")
        shutil.rmtree(resolved)
    path.mkdir(parents=True, exist_ok=True)


def build_corpus(path: Path, preset: str = "small", *, seed: int = 7,
                 force: bool = False, imported: bool = False) -> dict[str, Any]:
    """Build the workspace repository at `path` and return its stats.

    Benchmarks import this so that every figure is measured on the same, reproducible workspace.
    The stats hold `files`, `commits`, `seconds`, `scopes`, `world_topics`, plus `kinds`
    (final file count per logical kind), `head` (the commit sha) and `imported`.

    `imported=True` leaves the repository as `git fast-import` and a checkout leave it: the
    same commits (same HEAD), but no commit-graph, as a team's existing history would arrive.
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    path = Path(path)
    _prepare_dir(path, force)
    started = time.perf_counter()  # the build only, not wiping an old corpus
    _git(path, "init", "-q", "-b", "main")
    importer = Importer(path)
    try:
        corpus = Corpus(PRESETS[preset], seed, importer)
        corpus.run()
    except BaseException:
        try:
            importer.close()
        except RuntimeError:
            pass
        raise
    importer.close()
    _git(path, "reset", "-q", "--hard", "HEAD")
    if not imported:  # what memoryui's housekeeping keeps on a workspace it writes
        _git(path, "commit-graph", "write", "--reachable", "--changed-paths")
    head = _git(path, "rev-parse", "HEAD").strip()
    return {
        "files": len(corpus.files),
        "commits": importer.commits,
        "seconds": round(time.perf_counter() - started, 3),
        "scopes": [s.name for s in corpus.scopes],
        "world_topics": list(corpus.topics),
        "kinds": dict(sorted(corpus.kinds.items())),
        "head": head,
        "imported": imported,
    }


def main(argv: list[str] | None = None) -> int:
    """CLI: build a preset corpus and print a one-line summary."""
    parser = argparse.ArgumentParser(prog="python -m bench.corpus", description="Build a deterministic benchmark corpus: a memoryui workspace with months of history.")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="small")
    parser.add_argument("--dir", required=True, type=Path, help="workspace directory to create")
    parser.add_argument("--force", action="store_true", help="wipe DIR if it is not empty")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--imported", action="store_true",
                        help="no commit-graph: history as a team's own repository arrives")
    args = parser.parse_args(argv)
    try:
        stats = build_corpus(args.dir, args.preset, seed=args.seed, force=args.force,
                             imported=args.imported)
    except (FileExistsError, PermissionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    variant = " imported" if args.imported else ""
    print(f"corpus {args.preset}{variant} (seed {args.seed}) at {os.fspath(args.dir)}: "
          f"{stats['files']} files, {stats['commits']} commits, {stats['seconds']:.1f}s")
    return 0
