"""Every file of the workspace without walking it: git's index, corrected by `git status`.

A walk stats every file (4 s at 200k files). Git already keeps each tracked file's size
and mtime in its index, and `git status` (fast with the untracked cache that
`GitRepo.prepare` turns on) names every path that differs from it: modified, deleted,
untracked. So the listing is the index's regular files, and the paths status names are
looked at one by one with the walker's rules (hidden names skipped, never through a
symbolic link, regular files with one name only). The result equals `walk.walk(root)`;
the tests check that on trees with planted links, hidden files, untracked, changed and
deleted files. (A tracked file that gains a second name, a hard link, without changing is
the exception: status does not name it, so it stays listed; the reader refuses it.)

Anything unexpected in the index (an unknown version, a SHA-256 repository, a short
read, a split index whose shared part is gone) falls back to the walker itself.
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path

from . import history, walk
from .gitindex import IndexUnreadable, index_files

log = logging.getLogger("memoryui.store")


def indexed(root: Path, git_dir: Path) -> dict[str, tuple[int, float]]:
    """path -> (size, mtime) of the index's regular, non-hidden files: the listing before
    `git status` corrects it. Plain tuples, as the index reader makes them: an object per
    file was a fifth of a 200k-file repository's first listing.

    An index this reader does not know gives the walker's listing instead (exact already).
    """
    try:
        files = index_files(git_dir)
    except (IndexUnreadable, struct.error, ValueError, IndexError) as exc:
        log.info("index not readable (%s): walking the workspace", exc)
        return {e.path: (e.size, e.mtime) for e in walk.walk(root)}
    # `walk.hidden` is "starts with a dot": a path with a hidden part starts with one or
    # has "/." in it (rare: those few are taken out, the dict is not copied)
    for p in [p for p in files if p[0] == "." or "/." in p]:
        del files[p]
    return files


def listing(root: Path, git_dir: Path) -> dict[str, tuple[int, float]]:
    """path -> (size, mtime) of every regular, non-hidden file not behind a symbolic link
    (what `walk` yields)."""
    out = indexed(root, git_dir)
    for change in history.status(root):
        entry = entry_for(root, change.path)
        if entry is None:
            out.pop(change.path, None)
        else:
            out[change.path] = (entry.size, entry.mtime)
    return out


def entry_for(root: Path, path: str) -> walk.Entry | None:
    """The walker's view of one path: a regular file not behind a link, or None."""
    if any(walk.hidden(part) for part in path.split("/")):
        return None
    try:
        st = os.lstat(root / path)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return None
    if not walk.single(st) or walk.link_in_path(root, path) is not None:
        return None
    return walk.Entry(path, st.st_size, st.st_mtime)
