"""Pending changes: files changed outside memoryui, committed or discarded by a curator.

Agents writing natively, a person with an editor, `manage.py snapshot` from cron: all
meet here. Nothing is ever read through a symbolic link (at the file or any folder
above it) or from a file with another name (a hard link): such an item is listed as
refused, with the reason, is never committed, and discarding it removes the link itself
(never what it points to) and brings back HEAD's version. Paths come from
`git status -z`, so every name is exact, whatever it holds.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

import pygit2

from . import history, walk
from .actors import Actor
from .errors import InvalidName
from .files import atomic_write, prune_empty_dirs
from .gitrepo import GitRepo
from .history import StatusEntry
from .layout import Layout
from .records import Record

HARD_LINK_REASON = walk.HARD_LINK_REASON
LINK_REASON = "a symbolic link: memoryui never follows links; discard it"
INSIDE_LINK_REASON = ("inside {link}, a symbolic link: memoryui never follows links; "
                      "discard the link")
NOT_UTF8_REASON = "its name is not valid UTF-8: rename or discard it"
NOT_A_FILE_REASON = "not a regular file: discard it"
FOLDER_REASON = ("a folder git does not look into (a nested repository?): memoryui leaves "
                 "it alone; remove it by hand")


class Committed(list[str]):
    """The commits `commit_pending` made (a list of shas), and the items it refused."""

    def __init__(self, shas: Iterable[str] = (), refused: Iterable[StatusEntry] = ()):
        super().__init__(shas)
        self.refused: list[StatusEntry] = list(refused)


class Store(Protocol):
    """What of the workspace (`workspace.Store`) pending changes use."""

    root: Path
    layout: Layout
    git: GitRepo

    def sync(self) -> None: ...
    def notify(self, paths: list[str], when: float | None = None) -> None: ...


def refusal(root: Path, path: str) -> str | None:
    """Why a pending item cannot be committed, or None when it can."""
    try:
        path.encode()
    except UnicodeEncodeError:
        return NOT_UTF8_REASON
    link = walk.link_in_path(root, path)
    if link == path:
        return LINK_REASON
    if link is not None:
        return INSIDE_LINK_REASON.format(link=link)
    try:
        st = os.lstat(root / path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISDIR(st.st_mode):
        return FOLDER_REASON
    if walk.hard_linked(st):
        return HARD_LINK_REASON
    return None if stat.S_ISREG(st.st_mode) else NOT_A_FILE_REASON


def pending(store: Store) -> list[StatusEntry]:
    """Files changed outside memoryui (memoryui's own writes are committed first)."""
    store.sync()
    entries = history.status(store.root)
    for e in entries:
        e.refused = refusal(store.root, e.path)
    return entries


def owner_of(store: Store, path: str) -> Actor:
    """Who an outside change is attributed to: the scope owning the path, or `external`."""
    scope = store.layout.scope_of(path)
    return Actor.agent(scope) if scope else Actor.external()


def commit_pending(store: Store, paths: Iterable[str] | None = None, *,
                   actor: Actor | None = None, message: str | None = None,
                   tool: str = "snapshot") -> Committed:
    """Commit outside changes; each path is attributed to its owning scope by default.

    Refused items (symbolic and hard links, odd files) are skipped and returned in
    `.refused`; a file's bytes are read without following any link, nor from a file with
    another name, so nothing from outside the workspace can ever reach a commit.
    """
    current = {e.path: e for e in pending(store)}
    chosen = list(current) if paths is None else [p for p in paths if p in current]
    refused = [current[p] for p in chosen if current[p].refused]
    records = []
    with store.git.write_lock:
        for p in chosen:
            if current[p].refused:
                continue
            try:
                data = walk.read_nofollow(store.root, p)
            except InvalidName as exc:  # a link (symbolic or hard) planted meanwhile
                current[p].refused = str(exc)
                refused.append(current[p])
                continue
            blob = store.git.create_blob(data) if data is not None else None
            who = actor or owner_of(store, p)
            trailers = [("Committed-By", actor.trailer)] if actor else []
            rec = Record(p, blob, who, tool, message, trailers)
            store.git.record(rec)
            records.append(rec)
    if not records:
        return Committed((), refused)
    done = store.git.flush()
    store.notify([r.path for r in records], when=max(r.time for r in records))
    return Committed(sorted({done[r.id] for r in records if r.id in done}), refused)


def discard_pending(store: Store, paths: Iterable[str]) -> list[str]:
    """Put files back as HEAD has them (untracked files are removed).

    A symbolic link on the way is removed itself (unlinked, never followed); when HEAD
    has a file or a folder at the link's place, its version comes back. A nested
    repository is left alone (memoryui never deletes a folder it cannot see into).
    """
    current = {e.path for e in pending(store) if e.refused != FOLDER_REASON}
    tree = store.git.head_tree()
    done: list[str] = []
    touched: set[str] = set()
    with store.git.write_lock:
        for p in sorted(set(paths)):  # a file standing at a folder's place goes first
            if p not in current:
                continue
            while (link := walk.link_in_path(store.root, p)) is not None:
                os.unlink(store.root / link)
                touched.add(link)
                touched.update(_restore_tree(store, tree, link))
            try:
                _restore(store, tree, p)
            except (NotADirectoryError, FileExistsError):
                parent = p.rsplit("/", 1)[0]
                raise InvalidName(f"cannot bring back {p}: a file stands where its folder "
                                  f"{parent} should be; discard that file first") from None
            touched.add(p)
            done.append(p)
        store.git.refresh_index(touched)
    store.notify(sorted(touched))
    return done


def versions(store: Store, path: str) -> tuple[str | None, str | None]:
    """(HEAD's text, the working tree's text) of a pending item, for its diff.

    Takes the exact path git status gave (any name a native writer made), never reads
    through a link (InvalidName with the refusal reason), and None stands for absent.
    """
    reason = refusal(store.root, path)
    if reason:
        raise InvalidName(f"{path!r} is {reason}" if reason.startswith("a ")
                          else f"{path!r}: {reason}")
    old = _head_blob(store.git.head_tree(), path)
    new = walk.read_nofollow(store.root, path)
    return (None if old is None else old.decode("utf-8", "replace"),
            None if new is None else new.decode("utf-8", "replace"))


def _head_blob(tree: pygit2.Tree | None, path: str) -> bytes | None:
    """HEAD's bytes of a regular file (a committed link or a folder counts as none)."""
    if tree is None:
        return None
    try:
        entry = tree[path]
    except (KeyError, ValueError, UnicodeEncodeError):
        return None
    if not isinstance(entry, pygit2.Blob) or entry.filemode == pygit2.enums.FileMode.LINK:
        return None
    return entry.data


def _restore(store: Store, tree: pygit2.Tree | None, path: str) -> None:
    full = store.root / path
    data = _head_blob(tree, path)
    if data is not None:
        atomic_write(full, data)
        return
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISDIR(st.st_mode):
        full.unlink()
        prune_empty_dirs(full.parent, store.root)


def _restore_tree(store: Store, tree: pygit2.Tree | None, folder: str) -> list[str]:
    """A link that replaced a committed folder: bring the folder's files back."""
    if tree is None:
        return []
    try:
        sub = tree[folder]
    except (KeyError, ValueError, UnicodeEncodeError):
        return []
    if not isinstance(sub, pygit2.Tree):
        return []
    out = []
    stack = [(folder, sub)]
    while stack:
        prefix, node = stack.pop()
        for entry in node:
            path = f"{prefix}/{entry.name}"
            if isinstance(entry, pygit2.Tree):
                stack.append((path, entry))
            elif isinstance(entry, pygit2.Blob) and entry.filemode != pygit2.enums.FileMode.LINK:
                # (a submodule's entry is a commit, with no bytes to bring back)
                atomic_write(store.root / path, entry.data)
                out.append(path)
    return out
