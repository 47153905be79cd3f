"""The git command line, as every module of the store runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def run_git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    """Run the git CLI in the workspace; errors carry git's own message."""
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args], cwd=root, input=input,
        capture_output=True, env=env,
    )
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return proc.stdout
