"""Starting with a remote: clone into an empty workspace, or check the two histories relate.

Runs before the store is used (every process calls it; the first does the work under the
sync lock, the others find it done). An empty workspace (no commits, no files) becomes a
clone (less what memoryui refuses from a remote, see refuse.py); a workspace whose history
shares no commit with the remote's is refused with the two ways out; a remote with no
branch yet receives the workspace's history.
"""

from __future__ import annotations

import time
from pathlib import Path

import pygit2

from .. import walk
from ..gitcli import run_git
from ..gitindex import open_repo
from ..locks import ProcessLock
from .config import RemoteConfig, SyncError
from .mergecommit import merge_commit, record_refused
from .merging import UNRELATED, make_plan
from .state import ArrivedLog, StateFile
from .transport import Transport, TransportError

NO_HISTORY = (
    "the workspace has files but no commits, and the remote has history: memoryui will not "
    "mix them. Either point MEMORYUI_WORKSPACE at an empty folder to start from a clone of "
    "the remote, or commit this workspace and push it to an empty remote repository (or unset "
    "MEMORYUI_REMOTE to keep working without sync)"
)


def bootstrap(root: Path | str, config: RemoteConfig) -> str:
    """"cloned", "pushed" (the remote was empty) or "ready"; SyncError when refused."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        pygit2.init_repository(str(root), initial_head=config.branch or "main")
    state_dir = root / ".git" / "memoryui"
    state_dir.mkdir(exist_ok=True)
    with ProcessLock(state_dir / "sync.lock"):
        return check(root, config)


def check(root: Path, config: RemoteConfig) -> str:
    """The work of `bootstrap`; the caller holds the clone's sync lock."""
    state_dir = root / ".git" / "memoryui"
    states = StateFile(state_dir)
    url = config.display_url()
    repo = open_repo(root)
    head = None if repo.head_is_unborn else str(repo.head.target)
    if head is not None and states.read().bootstrapped == url:
        return "ready"
    transport = Transport(root, config)
    branch = config.branch or transport.default_branch() or "main"
    tip = transport.fetch(branch)
    outcome = "ready"
    if head is None and tip is not None:
        if next(walk.walk(root), None) is not None:
            raise SyncError(NO_HISTORY)
        # The remote's tree less what memoryui refuses (refuse.py): git's own checkout
        # would create its links and `.gitmodules`, and fail on a `.git` entry.
        plan = make_plan(repo, None, None, tip, {}, state_dir, time.time())
        first = tip if plan.fast_forward else merge_commit(repo, plan, branch)
        run_git(root, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
        run_git(root, "update-ref", f"refs/heads/{branch}", first)
        run_git(root, "read-tree", "--reset", "-u", "HEAD")
        record_refused(repo, states, plan)
        ArrivedLog(state_dir).add(run_git(root, "rev-list", tip).decode().split())
        outcome = "cloned"
    elif head is not None and tip is None:
        pushed = transport.push(head, branch)
        if not pushed.ok:
            raise TransportError(pushed.message)
        run_git(root, "update-ref", transport.tracking_ref(branch), head)
        outcome = "pushed"
    elif head is not None and tip is not None and repo.merge_base(head, tip) is None:
        raise SyncError(UNRELATED)
    now = time.time()

    def done(s) -> None:
        s.bootstrapped, s.branch, s.remote, s.last_fetch = url, branch, url, now
        if outcome == "pushed":
            s.last_push = now
    states.update(done)
    return outcome
