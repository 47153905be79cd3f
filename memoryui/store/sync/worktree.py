"""Bringing the working tree from one commit's tree to another's, without losing anything.

Runs under the store's write lock (no memoryui write can interleave). A file whose disk
content differs from the old tree is an outside change (a pending change, not committed
yet): it is three-way merged onto the new version when that merges cleanly, otherwise left
exactly as it is (it stays a pending change against the new HEAD). Nothing is ever written
through a symbolic link or into `.git`. A remote's links and submodules never get here
(refuse.py leaves them out of the tree); a link put back by `undo` is created as a link
(never followed), and a submodule is never checked out.
Deletions run first, deepest first, so a folder can become a file or a link and back.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from .. import gitindex, walk
from ..errors import InvalidName
from ..files import atomic_write, prune_empty_dirs, temp_name
from ..merge import merge3
from .merging import BLOB, EXEC, LABELS, Item, flat_changes, item_at

log = logging.getLogger("memoryui.sync")

LINK = int(pygit2.enums.FileMode.LINK)
Content = tuple[str, bytes]  # ("file" | "link", bytes or link target)


@dataclass
class Checkout:
    """What a checkout did, so it can be reported and undone."""

    paths: list[str] = field(default_factory=list)  # every path that differs between the trees
    changed: list[str] = field(default_factory=list)  # paths whose disk content changed
    kept: list[str] = field(default_factory=list)  # outside changes left as they were
    skipped: list[str] = field(default_factory=list)  # unsafe paths, submodules, failures
    undo: dict[str, Content | None] = field(default_factory=dict)  # what to put back


def safe_path(path: str) -> bool:
    """A path git stored that memoryui may create: no `.git`, `..`, empty or NUL parts."""
    parts = path.split("/")
    return all(p and p not in (".", "..") and p.lower() != ".git" and "\0" not in p
               for p in parts)


def _wanted(repo: pygit2.Repository, item: Item | None) -> Content | None:
    if item is None:
        return None
    if item[1] not in (BLOB, EXEC, LINK):
        return ("submodule", item[0].encode())  # never on disk as a file
    return ("link" if item[1] == LINK else "file", repo[item[0]].peel(pygit2.Blob).data)


def _on_disk(root: Path, path: str) -> Content | None:
    """What the path holds now (never following a link); OSError for a folder."""
    full = root / path
    try:
        st = os.lstat(full)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(st.st_mode):
        return ("link", os.fsencode(os.readlink(full)))
    if stat.S_ISREG(st.st_mode):
        data = walk.read_nofollow(root, path)
        return ("file", data) if data is not None else None
    raise IsADirectoryError(path)


def checkout(repo: pygit2.Repository, root: Path, old: str | None, new: str,
             workdir: Path) -> Checkout:
    """Make the files that differ between commits `old` and `new` look like `new`."""
    old_tree = repo[old].peel(pygit2.Tree) if old else None
    changes = flat_changes(repo, old_tree, repo[new].peel(pygit2.Tree))
    result = Checkout(paths=sorted(changes))
    deletions = sorted((p for p, i in changes.items() if i is None), reverse=True)
    writes = sorted(p for p, i in changes.items() if i is not None)
    for path in deletions + writes:
        item = changes[path]
        parent = path.rpartition("/")[0]
        if not safe_path(path) or (parent and walk.link_in_path(root, parent) is not None) \
                or (item is not None and item[1] not in (BLOB, EXEC, LINK)):
            result.skipped.append(path)
            log.warning("sync: not checking out %r (unsafe path, a link above it, or a "
                        "submodule)", path)
            continue
        try:
            disk = _on_disk(root, path)
            before = _wanted(repo, item_at(old_tree, path))
            target = _wanted(repo, item)
            if disk == target:
                continue
            if disk != before:
                merged = _merge_outside_change(before, disk, target, workdir)
                if merged is None:
                    result.kept.append(path)
                    continue
                target = merged
            _put(root, path, target)
        except (OSError, InvalidName) as exc:
            result.skipped.append(path)
            log.warning("sync: could not check out %r: %s", path, exc)
            continue
        result.undo[path] = disk
        result.changed.append(path)
    return result


def _merge_outside_change(base: Content | None, disk: Content | None, new: Content | None,
                          workdir: Path) -> Content | None:
    """An outside edit replayed onto the new version, or None to leave the disk alone."""
    if disk is None or new is None or disk[0] != "file" or new[0] != "file" or \
            (base is not None and base[0] != "file"):
        return None
    try:
        text = merge3((base[1] if base else b"").decode(), disk[1].decode(), new[1].decode(),
                      workdir, LABELS)
    except UnicodeDecodeError:
        return None
    if text is None or text.conflicts:
        return None
    return ("file", text.text.encode())


def _put(root: Path, path: str, content: Content | None) -> None:
    full = root / path
    if content is None:
        try:
            os.unlink(full)
        except FileNotFoundError:
            return
        prune_empty_dirs(full.parent, root)
    elif content[0] == "link":
        full.parent.mkdir(parents=True, exist_ok=True)
        tmp = full.parent / temp_name(full.name)
        os.symlink(os.fsdecode(content[1]), tmp)
        try:
            os.replace(tmp, full)  # replaces a link itself, never what it points to
        except BaseException:
            os.unlink(tmp)
            raise
    else:
        if os.path.islink(full):
            os.unlink(full)  # atomic_write must replace the link, not write through it
        atomic_write(full, content[1])


def undo(root: Path, done: Checkout) -> None:
    """Put back what a checkout changed (its commit could not be recorded)."""
    for path, content in done.undo.items():
        try:
            _put(root, path, content)
        except OSError:
            log.exception("sync: could not restore %s after a failed integration", path)


def refresh_index(repo: pygit2.Repository, root: Path, new: str, paths: list[str]) -> None:
    """Stage `paths` as commit `new` has them, so `git status` shows only real outside changes
    (gitindex.IndexBusy while another git process holds the index)."""
    if not paths:
        return
    tree = repo[new].peel(pygit2.Tree)
    files, entries, gone = [], [], []
    for path in paths:
        item: Item | None = item_at(tree, path)
        if item is None:
            gone.append(path)
            continue
        try:
            disk = _on_disk(root, path) if safe_path(path) else None
        except (OSError, InvalidName):
            disk = None
        if disk is not None and disk == _wanted(repo, item):
            files.append(path)  # with the file's stat data: status stays fast
        else:
            entries.append((item[1], item[0], path))
    gitindex.stage(root, files=files, entries=entries, remove=gone)
