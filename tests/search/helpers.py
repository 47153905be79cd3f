"""Writing memory the way agents do, for the search tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from memoryui.store import Actor, Store

BOT = Actor.agent("ops-bot")
OTHER = Actor.agent("billing-agent")
ALICE = Actor.user("alice")

FILLER = ("The weekly sync covered roadmap items, hiring, on-call rotation and the budget. "
          "Nothing else stood out this week apart from routine maintenance. ")


def paths(results) -> list[str]:
    return [h.path for h in results.hits]


def note(store: Store, scope: str, name: str, text: str, actor: Actor | None = None,
         when: float | None = None) -> str:
    path = store.path_for("note", scope, name)
    store.write(path, text, actor=actor or Actor.agent(scope), tool="test", when=when)
    return path


def daily(store: Store, scope: str, date: str, *entries: tuple[str, str]) -> str:
    path = store.path_for("daily", scope, date)
    for hhmm, body in entries:
        store.append(path, f"\n## {hhmm}\n\n{body}\n", header=f"# {date}\n",
                     actor=Actor.agent(scope), tool="remember")
    return path


def git_as(root: Path, *args: str, when: int | None = None, who: str = "native") -> None:
    """Run git in `root` as someone other than memoryui (a native agent host, a sync), at
    `when` (seconds since the epoch) when given."""
    env = {**os.environ, "GIT_AUTHOR_NAME": who, "GIT_AUTHOR_EMAIL": f"{who}@example.org",
           "GIT_COMMITTER_NAME": who, "GIT_COMMITTER_EMAIL": f"{who}@example.org"}
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
