"""A file as the bare remote's main branch holds it, for the sync round tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def show(bare: Path, path: str) -> str | None:
    out = subprocess.run(["git", "show", f"main:{path}"], cwd=bare, capture_output=True,
                         text=True)
    return out.stdout if out.returncode == 0 else None
