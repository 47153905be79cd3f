"""Every file of the workspace without walking it: git's index, corrected by `git status`.

A walk stats every file (4 s at 200k files). Git already keeps each tracked file's size
and mtime in its index, and `git status` (fast with the untracked cache that
`GitRepo.prepare` turns on) names every path that differs from it: modified, deleted,
untracked. So the listing is the index's regular files, and the paths status names are
looked at one by one with the walker's rules (hidden names skipped, never through a
symbolic link, regular files only). The result equals `walk.walk(root)`; the tests check
that on trees with planted links, hidden files, untracked, changed and deleted files.

Anything unexpected in the index (an unknown version, a SHA-256 repository, a short
read) falls back to the walker itself.
"""

from __future__ import annotations

import logging
import os
import stat
import struct
from pathlib import Path

from . import history, walk

log = logging.getLogger("memoryui.store")

_HEAD = struct.Struct(">4sII")
_STAT = struct.Struct(">IIIIIIIIII20sH")  # ctime, mtime, dev, ino, mode, uid, gid, size, sha, flags
_REGULAR = (0o100644, 0o100755)


class IndexUnreadable(Exception):
    """The index is not in a form this reader knows; the caller walks instead."""


def index_size(git_dir: Path) -> int:
    """How many entries git's index has (its header alone is read)."""
    try:
        with open(git_dir / "index", "rb") as fh:
            head = fh.read(12)
        return _HEAD.unpack(head)[2] if len(head) == 12 else 0
    except OSError:
        return 0


def index_files(git_dir: Path) -> dict[str, tuple[int, float]]:
    """path -> (size, mtime) of the regular files in git's index (stage 0 or conflicted).

    Reads index versions 2, 3 and 4 (4 is what `feature.manyFiles` writes). A missing
    index is an empty listing (a repository with nothing checked out).
    """
    try:
        data = (git_dir / "index").read_bytes()
    except FileNotFoundError:
        return {}
    if len(data) < 12:
        raise IndexUnreadable("short index")
    sig, version, count = _HEAD.unpack_from(data, 0)
    if sig != b"DIRC" or version not in (2, 3, 4):
        raise IndexUnreadable(f"index version {version}")
    out: dict[str, tuple[int, float]] = {}
    pos, prev = 12, b""
    unpack = _STAT.unpack_from
    for _ in range(count):
        (_cs, _cn, ms, mn, _dev, _ino, mode, _uid, _gid, size, _sha,
         flags) = unpack(data, pos + 0)
        start = pos
        pos += 62
        if flags & 0x4000:  # extended flags (v3+)
            pos += 2
        if version == 4:
            b = data[pos]  # git's offset varint: bytes to drop from the previous path
            pos += 1
            strip = b & 0x7F
            while b & 0x80:
                b = data[pos]
                pos += 1
                strip = ((strip + 1) << 7) | (b & 0x7F)
            end = data.index(b"\0", pos)
            raw = (prev[: len(prev) - strip] if strip else prev) + data[pos:end]
            pos = end + 1
            prev = raw
        else:
            end = data.index(b"\0", pos)
            raw = data[pos:end]
            pos = start + ((end - start + 8) // 8) * 8
        if mode in _REGULAR:
            out[raw.decode("utf-8", "surrogateescape")] = (size, ms + mn * 1e-9)  # CPython's st_mtime, bit for bit
    return out


def indexed(root: Path, git_dir: Path) -> dict[str, walk.Entry]:
    """The index's regular, non-hidden files: the listing before `git status` corrects it.

    An index this reader does not know gives the walker's listing instead (exact already).
    """
    try:
        files = index_files(git_dir)
    except (IndexUnreadable, struct.error, ValueError, IndexError) as exc:
        log.info("index not readable (%s): walking the workspace", exc)
        return {e.path: e for e in walk.walk(root)}
    # `walk.hidden` is "starts with a dot", so "/." anywhere in "/"+path is a hidden part.
    return {p: walk.Entry(p, size, mtime) for p, (size, mtime) in files.items()
            if "/." not in "/" + p}


def listing(root: Path, git_dir: Path) -> dict[str, walk.Entry]:
    """Every regular, non-hidden file not behind a symbolic link (what `walk` yields)."""
    out = indexed(root, git_dir)
    for change in history.status(root):
        entry = entry_for(root, change.path)
        if entry is None:
            out.pop(change.path, None)
        else:
            out[change.path] = entry
    return out


def entry_for(root: Path, path: str) -> walk.Entry | None:
    """The walker's view of one path: a regular file not behind a link, or None."""
    if any(walk.hidden(part) for part in path.split("/")):
        return None
    try:
        st = os.lstat(root / path)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return None
    if not stat.S_ISREG(st.st_mode) or walk.link_in_path(root, path) is not None:
        return None
    return walk.Entry(path, st.st_size, st.st_mtime)
