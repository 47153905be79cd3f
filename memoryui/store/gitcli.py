"""The git command line, as every module of the store runs it.

`GIT_ENV` goes into the environment of every git memoryui starts. Besides a fixed locale and
no terminal prompts, it carries configuration (`GIT_CONFIG_COUNT`, which git reads before
running any command) that keeps git from acting on what a remote can put into a commit:
no submodule is read, fetched or recursed into (a hostile `.gitmodules` once made every
fetch fail), no hook runs, no file-system monitor or external transport is started. The
operator's own `GIT_CONFIG_COUNT` settings are replaced, their config files still apply.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HARDENING = (
    ("core.quotepath", "off"),
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.protectNTFS", "true"),
    ("core.protectHFS", "true"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("protocol.file.allow", "user"),
    ("protocol.ext.allow", "never"),
)


def _config_env(settings: tuple[tuple[str, str], ...]) -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(settings))}
    for i, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
    return env


GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **_config_env(HARDENING)}


def git_env() -> dict[str, str]:
    """The environment for a git command: the process's, with `GIT_ENV` over it."""
    return {**os.environ, **GIT_ENV}


def run_git(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
    """Run the git CLI in the workspace; errors carry git's own message."""
    with subprocess.Popen(["git", *args], cwd=root, env=git_env(),
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
