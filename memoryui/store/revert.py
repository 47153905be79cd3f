"""Revert one commit: undo every file it touched as one new commit (history never rewritten).

Each file is a three-way merge (`merge.merge3`): base = the file after the commit, ours = the
current text, theirs = the file before it. So later edits to other lines survive; a file that
cannot merge stops the whole revert (nothing written) and the caller shows the merged text
with markers for a person to resolve. An added file is deleted (when unchanged since), a
deleted file comes back. Merge commits are refused: which parent to go back to is a choice
this feature does not offer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from . import history, lookalike, names, walk
from .actors import Actor
from .errors import Conflicting, InvalidName, StoreError, TooLarge
from .files import atomic_write, prune_empty_dirs
from .merge import has_conflict_markers, merge3
from .records import Record
from .workspace import MAX_FILE_BYTES, Store

TOOL = "revert"
TRAILER = "Reverts"
LABELS = ("current file", "the reverted commit", "before the commit")


class MergeCommitRefused(InvalidName):
    """A merge commit has several parents: a revert would have to pick one."""


class StaleHead(Conflicting, StoreError):
    """The workspace moved on since the page showed the commit: look again first."""


class CannotMerge(Conflicting, StoreError):
    """Some files cannot be reverted cleanly; `files` carries every file's merge."""

    def __init__(self, message: str, files: list[RevertFile]):
        super().__init__(message)
        self.files = files


@dataclass
class RevertFile:
    path: str
    current: str | None  # the text now (None: no such file)
    text: str | None  # the reverted text (None: delete); with markers when conflicts > 0
    conflicts: int = 0
    after: str | None = None  # the text the reverted commit left (the merge's base)
    before: str | None = None  # the text before it (what the revert brings back)

    @property
    def changes(self) -> bool:
        return self.text != self.current


@dataclass
class RevertResult:
    sha: str  # the reverted commit
    commit: str | None  # the new commit (None: nothing needed changing)
    paths: list[str] = field(default_factory=list)


def _parent(store: Store, sha: str) -> str | None:
    commit = store.git.repo[sha].peel(pygit2.Commit)
    parents = [str(p) for p in commit.parent_ids]
    if len(parents) > 1:
        raise MergeCommitRefused("revert a merge: choose a parent — reverting a merge commit "
                                 "is not supported")
    return parents[0] if parents else None


def _read(store: Store, path: str) -> str | None:
    data = walk.read_nofollow(store.root, path)
    return None if data is None else data.decode("utf-8", "replace")


def plan(store: Store, sha: str) -> list[RevertFile]:
    """What reverting `sha` would do to each file it touched (no writes)."""
    store.sync()
    return _plan(store, store.resolve_commit(sha))


def _plan(store: Store, full: str) -> list[RevertFile]:
    # No store.sync() in here: it takes the commit lock, and `revert` holds the write lock
    # (a flush in another thread takes them in the other order).
    parent = _parent(store, full)
    detail = history.show(store.root, full, repo=store.git.repo)
    paths: list[str] = []
    for f in detail.files if detail else []:
        for p in (f.old_path, f.path):
            if p and p not in paths:
                paths.append(p)
    out = []
    for path in paths:
        after = store.file_at(path, full)
        before = store.file_at(path, parent) if parent else None
        current = _read(store, path)
        if current == before:
            out.append(RevertFile(path, current, current))
            continue
        merged = merge3(after or "", current or "", before or "", store.git.state_dir, LABELS)
        if merged is None:
            raise StoreError("git merge-file could not run; nothing was reverted")
        text: str | None = merged.text
        if not merged.conflicts and before is None and text == "":
            text = None  # the commit added the file and nobody changed it since: delete
        out.append(RevertFile(path, current, text, merged.conflicts, after, before))
    return out


def revert(store: Store, sha: str, *, actor: Actor, expect_head: str | None = None,
           resolved: dict[str, str] | None = None, message: str | None = None
           ) -> RevertResult:
    """Revert `sha` as one commit with trailer `Reverts: <sha>`.

    `expect_head`: the HEAD the person saw (StaleHead when it moved). `resolved`: texts a
    person edited for files that could not merge (markers left in them are refused).
    CannotMerge when a file still conflicts; then nothing is written.
    """
    resolved = resolved or {}
    store.sync()  # before the write lock: see _plan
    with store.git.write_lock:
        head = store.head()
        if expect_head is not None and head != expect_head:
            raise StaleHead("the workspace changed since you loaded the page; "
                            "look at the commit again and retry")
        full = store.resolve_commit(sha)
        files = _plan(store, full)
        for f in files:
            if f.path in resolved:
                text = resolved[f.path].replace("\r\n", "\n")
                if has_conflict_markers(text):
                    raise InvalidName(f"{f.path} still has conflict markers; resolve them "
                                      "first")
                f.text, f.conflicts = text, 0
        if any(f.conflicts for f in files):
            raise CannotMerge("some files cannot be reverted cleanly", files)
        changed = [f for f in files if f.changes]
        if not changed:
            return RevertResult(full, None)
        detail = history.show(store.root, full, repo=store.git.repo)
        subject = detail.subject if detail else full[:8]
        msg = message or f'Revert "{subject[:200]}"\n\nThis reverts commit {full}.'
        trailers = [(TRAILER, full)]
        blobs: dict[str, str | None] = {}
        for f in changed:  # every check before the first write: all files or none
            if f.text is None:
                blobs[f.path] = None
                continue
            lookalike.check_new(store.root, f.path, created=f.current is None)
            data = names.validate_text(f.text, f.current).encode()
            if len(data) > MAX_FILE_BYTES:
                raise TooLarge(f"{f.path} would be {len(data)} bytes; the limit is "
                               f"{MAX_FILE_BYTES} bytes")
            blobs[f.path] = store.git.create_blob(data)
        last = None
        for f in changed:
            full_path = store.abspath(f.path)
            if f.text is None:
                full_path.unlink(missing_ok=True)
                prune_empty_dirs(full_path.parent, store.root)
            else:
                atomic_write(full_path, f.text.encode())
            last = Record(f.path, blobs[f.path], actor, TOOL, msg, trailers)
            store.git.record(last)
        paths = [f.path for f in changed]
    done = store.flush()  # a revert is answered with its commit, made now
    store.notify(paths, when=last.time if last else None)
    rid = last.id if last else ""
    return RevertResult(full, done.get(rid) or store.commit_for(rid), paths)
