"""Finding a local PostgreSQL installation (tests and benchmarks start their own server)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def pg_bindir() -> Path | None:
    """The folder with initdb/pg_ctl: from pg_config, else Debian's newest version."""
    found = shutil.which("pg_config")
    if found:
        out = subprocess.run([found, "--bindir"], capture_output=True, text=True).stdout.strip()
        if out and (Path(out) / "initdb").exists():
            return Path(out)
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None
