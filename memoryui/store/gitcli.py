"""The git command line, as every module of the store runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def run_git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    """Run the git CLI in the workspace; errors carry git's own message."""
    env = {**os.environ, **GIT_ENV}
    with subprocess.Popen(["git", "-c", "core.quotepath=off", *args], cwd=root, env=env,
                          stdin=subprocess.PIPE if input is not None else None,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            out, err = proc.communicate(input)
        except BaseException:  # as subprocess.run does: no git left running behind
            proc.kill()
            raise
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, proc.args, out, err)
    return out
