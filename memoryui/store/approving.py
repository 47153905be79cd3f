"""Approving a proposal: a merge commit on the workspace branch that brings its file in.

The merge commit's parents are the workspace's tip and the proposal's tip, so the agent's
commits stay in history; its trailers `Proposed-by:` and `Approved-by:` name both people.
When the file moved on since the proposal's base, the file is merged three-way (base: the
file at the proposal's base; ours: the file now; theirs: the proposal). A merge that
conflicts raises `MergeConflict` with the three texts and nothing is written: a stale
proposal never overwrites a newer version. A file deleted since comes back only when the
caller confirms (`recreate=True`).

Like a revert, the merge is made at once under the commit lock and the workspace's write
lock held exclusive (journaled writes are committed first, so none is lost); the branch
moves by compare-and-swap and git's index is refreshed for the one path.
"""

from __future__ import annotations

import subprocess
import time

import pygit2

from . import walk
from .actors import Actor
from .errors import Conflicting, StoreError
from .files import atomic_write, prune_empty_dirs
from .gitcli import run_git
from .gitobjects import ZERO
from .merge import merge3
from .proposals import (
    BASE_TRAILER,
    ID_TRAILER,
    PATH_TRAILER,
    Proposal,
    ProposalClosed,
    _checked,
    _lock,
    amend,
    close_approved,
    get,
    proposed,
    text_at,
)
from .records import apply_changes
from .room import branch_not_moved
from .workspace import Store

TOOL = "approve"
LABELS = ("current file", "the proposal's base", "the proposal")


class MergeConflict(Conflicting, StoreError):
    """The proposal and the current file changed the same lines: the three texts, for a
    person to resolve (then approve with the resolved text)."""

    def __init__(self, message: str, *, base: str | None, ours: str | None,
                 theirs: str | None, merged: str = ""):
        super().__init__(message)
        self.base, self.ours, self.theirs, self.merged = base, ours, theirs, merged


class FileDeleted(Conflicting, StoreError):
    """The file was deleted since the proposal was made; approving would bring it back."""


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def merged_text(store: Store, p: Proposal, *, recreate: bool = False
                ) -> tuple[str | None, bool]:
    """(the file's text after approval, None to delete; True when the file changes)."""
    base = _text(text_at(store, p.base, p.path))
    theirs = _text(proposed(p, store))
    ours = _text(walk.read_nofollow(store.root, p.path))
    if ours is None and base is not None and not recreate:
        raise FileDeleted(f"{p.path} was deleted since this proposal was made; approve it "
                          "again confirming that the file comes back", )
    if ours == base or (ours is None and recreate):
        return theirs, theirs != ours
    if theirs in (base, ours):
        return ours, False
    if theirs is None:
        raise MergeConflict(f"the proposal deletes {p.path}, which changed since; resolve it "
                            "by hand", base=base, ours=ours, theirs=theirs)
    result = merge3(base or "", ours or "", theirs, store.git.state_dir, LABELS)
    if result is None:
        raise StoreError("git merge-file could not run; nothing was approved")
    if result.conflicts:
        raise MergeConflict(f"{p.path} changed since this proposal was made and the two "
                            "changes overlap; resolve the conflict, then approve the result",
                            base=base, ours=ours, theirs=theirs, merged=result.text)
    return result.text, result.text != ours


def merge(store: Store, pid: str, *, approver: Actor, edited_text: str | None = None,
          edited: bool = False, recreate: bool = False, scope: str | None = None) -> str:
    """Approve proposal `pid`: the merge commit's sha. `edited`: the curator's text
    (`edited_text`, None to delete) is committed on the proposal branch first and is the
    file's new version as it stands (no merge: the curator resolved it).

    ProposalClosed when it is decided already; MergeConflict, FileDeleted as above."""
    with _lock(store):
        p = get(store, pid, scope)
        if p.state != "open":
            raise ProposalClosed(f"proposal {pid} is {p.state} already", p.state)
        if edited:
            p = amend(store, p, edited_text, approver)
        store.sync()  # (the commit lock, before the write lock: see revert.py)
        git = store.git
        with git.commit_lock, git.write_lock:
            git.flush()
            head = git.head()
            old = _text(walk.read_nofollow(store.root, p.path))
            if edited:  # the curator's text is the result: they saw the file as it is
                text, changes = edited_text, edited_text != old
            else:
                text, changes = merged_text(store, p, recreate=recreate)
            blob: str | None = None
            data: bytes | None = None
            if text is not None:
                data = _checked(store, p.path, text, old, "user") if changes else text.encode()
                blob = git.create_blob(data)
            tree = apply_changes(git.repo, git.head_tree(), {p.path: blob})
            sha = _merge_commit(store, p, head, tree, approver)
            full = store.abspath(p.path)
            if changes:
                if data is None:
                    full.unlink(missing_ok=True)
                    prune_empty_dirs(full.parent, store.root)
                else:
                    atomic_write(full, data)
            try:
                run_git(store.root, "update-ref", "-m", "memoryui approve", git.branch_ref(),
                        sha, head or ZERO)
            except subprocess.CalledProcessError as exc:
                if changes:  # the file goes back to what the branch still holds
                    if old is None:
                        full.unlink(missing_ok=True)
                    else:
                        atomic_write(full, old.encode())
                raise branch_not_moved(git.git_dir,
                                       exc.stderr.decode(errors="replace")) from None
            git.refresh_index({p.path})
            if changes and text is not None:
                store.secrets.written(p.path, old, text, [])
        close_approved(store, p)
    store.notify([p.path], when=time.time())
    return sha


def _merge_commit(store: Store, p: Proposal, head: str | None, tree: pygit2.Oid,
                  approver: Actor) -> str:
    proposer = p.proposer
    trailers = [("Memoryui-Actor", approver.trailer), ("Memoryui-Tool", TOOL),
                (ID_TRAILER, p.id), (PATH_TRAILER, p.path), (BASE_TRAILER, p.base or ""),
                ("Proposed-by", f"{proposer.name} <{proposer.email}>"),
                ("Approved-by", f"{approver.name} <{approver.email}>")]
    message = (f"Approve proposal {p.id}: {p.path}\n\n"
               f"Merges the change {proposer.name} proposed ({len(p.commits)} commit"
               f"{'s' if len(p.commits) != 1 else ''}).\n\n"
               + "\n".join(f"{k}: {v}" for k, v in trailers) + "\n")
    sig = pygit2.Signature(approver.name, approver.email, int(time.time()), 0)
    parents = [pygit2.Oid(hex=s) for s in (head, p.tip) if s]
    return str(store.git.repo.create_commit(None, sig, sig, message, tree, parents))
