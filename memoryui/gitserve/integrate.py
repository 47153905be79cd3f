"""A push to the workspace branch, integrated as a sync round integrates a fast-forward.

Run by the `proc-receive` hook (procreceive.py) once pre-receive has checked the push and
its objects are in the store. Under the store's commit lock and write lock: the agents'
journaled writes are committed, HEAD is checked against the push's old value again (an
agent's write that came in since pre-receive makes the push `fetch first`), the working
tree is brought to the pushed commit, the branch moves by a compare-and-swap and git's
index is refreshed, and the pushed commits are recorded with their pusher. Then the served
mirror follows HEAD (served.py), and credentials in the pushed files are flagged.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from memoryui.gitserve.pushlog import PushedLog
from memoryui.gitserve.served import mirror_ref
from memoryui.store.errors import InvalidName
from memoryui.store.gitobjects import ZERO

if TYPE_CHECKING:
    from memoryui.store import Store

MOVED = ("fetch first: the workspace has moved on since your last fetch (agents wrote "
         "meanwhile); fetch, merge and push again")


class Moved(Exception):
    """The workspace's HEAD is no longer the commit the push builds on."""


def integrate(store: Store, old: str, new: str) -> None:
    """Make `new` (a fast-forward of `old`) the workspace's HEAD; Moved when HEAD is not
    `old` any more, and then nothing has changed."""
    from memoryui.store.gitcli import run_git
    from memoryui.store.sync.worktree import checkout, refresh_index, undo
    git = store.git
    with git.commit_lock, git.write_lock:
        git.flush()
        head = git.head()
        if (head or ZERO) != old:
            raise Moved(MOVED)
        done = checkout(git.repo, store.root, head, new, git.state_dir)
        try:
            run_git(store.root, "update-ref", "-m", "memoryui git push", git.branch_ref(), new,
                    head or ZERO)
        except subprocess.CalledProcessError:
            undo(store.root, done)
            raise Moved(MOVED) from None
        refresh_index(git.repo, store.root, new, done.paths)
        args = ["rev-list", "--reverse", new] + ([f"^{head}"] if head else [])
        shas = run_git(store.root, *args).decode().split()
        PushedLog(git.state_dir).add(shas, int(os.environ.get("MEMORYUI_PUSH_TOKEN_ID", "0")),
                                     os.environ.get("MEMORYUI_PUSH_TOKEN_NAME", ""))
        git.count_commits(len(shas))
    try:  # a request may have refreshed the mirror already (to this HEAD or a newer one)
        run_git(store.root, "update-ref", "--no-deref", mirror_ref(git.branch_ref()), new,
                head or ZERO)
    except subprocess.CalledProcessError:
        pass
    _flag_secrets(store, done.changed)
    tell_server({"old": head, "new": new, "paths": done.paths, "commits": shas,
                 "kept": done.kept})


def tell_server(done: dict) -> None:
    """Hand the server what this push did, with its pusher (app.py `_pushed` reads it): the
    hook's stdout is git's protocol and its stderr goes to the pushing host."""
    result = os.environ.get("MEMORYUI_PUSH_RESULT")
    if result:
        Path(result).write_text(json.dumps(
            {**done, "pusher": os.environ.get("MEMORYUI_PUSH_TOKEN_NAME", "")}))


def _flag_secrets(store: Store, paths: list[str]) -> None:
    """Flag (never refuse: they are in the host's history already) credentials in the pushed
    files, as for a sync's arrivals; scanned outside the write lock (a large file takes
    seconds), recorded under it (the record has one writer across processes)."""
    if not store.secrets.enabled:
        return
    found: dict[str, list] = {}
    for path in paths:
        try:
            text = store.read(path)
        except (OSError, InvalidName):
            continue
        found[path] = store.secrets.scan(text) if text is not None else []
    with store.git.write_lock:
        for path, findings in found.items():
            store.secrets.record.set(path, findings)
