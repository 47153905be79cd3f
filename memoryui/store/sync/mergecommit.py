"""The commit an integration makes, and the record of what it left out of the remote's tree.

Both the round (syncer.py) and the first clone (bootstrap.py) bring a remote commit in
this way: a fast-forward where nothing is refused, else a commit by the sync actor whose
message lists each file merged, kept as a conflict or left out (refuse.py).
"""

from __future__ import annotations

import time

import pygit2

from .merging import Plan, last_commit
from .model import SYNC_ACTOR
from .state import RefusedEntry, StateFile


def merge_commit(repo: pygit2.Repository, plan: Plan, branch: str) -> str:
    """Write the plan's commit (no ref moves): a merge, or the remote's commit less what
    memoryui refuses (its only parent is the remote's commit, so history stays whole)."""
    sig = pygit2.Signature(SYNC_ACTOR.name, SYNC_ACTOR.email, int(time.time()), 0)
    short = plan.theirs[:8]
    merge = plan.ours is not None and plan.base != plan.ours
    subject = (f"sync: merge the remote's {branch} at {short}" if merge else
               f"sync: take the remote's {branch} at {short}, less what memoryui refuses")
    lines = [subject, ""]
    if plan.merged:
        lines += ["Merged files both sides changed:", *[f"- {p}" for p in plan.merged], ""]
    if plan.conflicts:
        lines += ["Kept the local version (sync conflict, a curator resolves it):",
                  *[f"- {p}" for p in plan.conflicts], ""]
    if plan.refused:
        lines += ["Left out of the remote's tree (memoryui refuses them; never checked out):",
                  *[f"- {r.path!r}: {r.reason}" for r in plan.refused], ""]
    lines += [f"Memoryui-Actor: {SYNC_ACTOR.trailer}", "Memoryui-Tool: sync",
              f"Sync-Remote-Tip: {plan.theirs}"]
    parents = [plan.ours, plan.theirs] if merge else [plan.theirs]
    oid = repo.create_commit(None, sig, sig, "\n".join(lines) + "\n",
                             pygit2.Oid(hex=plan.tree),
                             [pygit2.Oid(hex=p) for p in parents if p is not None])
    return str(oid)


def record_refused(repo: pygit2.Repository, states: StateFile, plan: Plan) -> None:
    """Remember what the plan left out, each with the remote commit that brought it."""
    if not plan.refused:
        return
    known = {(e.path, e.object) for e in states.read().refused}
    now = time.time()
    base = plan.base if plan.base != plan.theirs else None
    fresh = [RefusedEntry(r.path, r.reason, r.object,
                          last_commit(repo, base, plan.theirs, r.path), now)
             for r in plan.refused if (r.path, r.object) not in known]
    if fresh:
        states.update(lambda s: s.add_refused(fresh))
