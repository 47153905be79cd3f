"""Floors shared by several benchmarks: what a script would do with the git CLI."""

from __future__ import annotations

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
