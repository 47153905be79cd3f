"""The remote side of the sync round tests: a file as the bare remote's main branch holds it,
and native hosts that win the race to push."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.sync.helpers import at


def show(bare: Path, path: str) -> str | None:
    out = subprocess.run(["git", "show", f"main:{path}"], cwd=bare, capture_output=True,
                         text=True)
    return out.stdout if out.returncode == 0 else None


def rivals_push_first(instance, host, times: int) -> list[str]:
    """Make the native `host` push a new entry between each of `instance`'s fetches and its
    push, `times` times over; returns the rival commits, in order."""
    real_push = instance.transport.push
    raced: list[str] = []

    def push_after_a_rival(sha: str, branch: str):
        if len(raced) < times:
            host.remember(f"pushed in between {len(raced)}", at(11, 1 + len(raced)))
            raced.append(host.commit())
            host.push()
        return real_push(sha, branch)

    instance.transport.push = push_after_a_rival
    return raced
