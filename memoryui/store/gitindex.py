"""git's index: kept by the git CLI in its split form, read here, never loaded by libgit2.

Why (docs/architecture.md): libgit2 rewrites the whole index at every change (2 MB at 20k
files, 21 MB at 200k), so every commit tick would write it whole, and under ext4's ordered
mode every agent's fsync waits behind that data (a `remember` p99 at half load of 21x its
p50 on 200k files). git's split index (`core.splitIndex`) writes only
the entries changed since its shared part. libgit2 cannot read it ('link' is a mandatory
extension) and loads the index for every diff and blame (to look up attributes), so:

- every libgit2 handle memoryui opens gets an empty in-memory index (`open_repo`): libgit2
  never reads `.git/index` (nor holds its 200k entries in each worker's memory);
- the index is refreshed by `git update-index` (`stage`); `GitRepo.split_index` turns on
  `core.splitIndex` once the index is large, and only when the handles can be kept off it
  (`DETACHED`);
- the listing reads the index here (`index_files`), in either form.
"""

from __future__ import annotations

import ctypes
import logging
import struct
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pygit2

from .gitcli import run_git

log = logging.getLogger("memoryui.store")

_HEAD = struct.Struct(">4sII")
_NO_SHA = "0" * 40


class IndexBusy(Exception):
    """git could not write the index (another git process holds its lock): retry later."""


# -- libgit2 kept off the index ---------------------------------------------------------
def _set_index_function():
    """libgit2's `git_repository_set_index` (not in pygit2's API), from the library pygit2
    itself loaded (looked up through its cffi module, so never another libgit2)."""
    try:
        fn = ctypes.CDLL(pygit2._libgit2.__file__).git_repository_set_index
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


_SET_INDEX = _set_index_function()
# Every handle open_repo makes has its own empty index (pygit2's pointers as 1.15-1.21 name them)
DETACHED = _SET_INDEX is not None and hasattr(pygit2.Index(), "_index")


class _Handle(pygit2.Repository):
    """A repository handle that holds the in-memory index it was given."""

    _memoryui_index: pygit2.Index


def open_repo(root: Path | str) -> pygit2.Repository:
    """A libgit2 handle on the workspace that never reads `.git/index` (see above)."""
    repo = _Handle(str(root))
    if DETACHED:
        index = pygit2.Index()  # in memory: no file behind it
        ptr = int(pygit2.ffi.cast("uintptr_t", repo._repo))
        if _SET_INDEX(ptr, int(pygit2.ffi.cast("uintptr_t", index._index))) == 0:
            repo._memoryui_index = index  # libgit2 holds its own reference too
        else:
            log.error("libgit2 could not be given its own index: %s", root)
    return repo


# -- writing: the git CLI ---------------------------------------------------------------
def stage(root: Path, files: Iterable[str] = (), entries: Iterable[tuple[int, str, str]] = (),
          remove: Iterable[str] = ()) -> None:
    """Stage `files` as they are on disk (with their stat data, so `git status` stays fast;
    a file gone is taken out), `entries` as given (mode, blob id, path), and take `remove`
    out of the index. The caller has checked every path against the walker's rules.
    IndexBusy when git could not take the index's lock."""
    enc = lambda p: p.encode("utf-8", "surrogateescape")  # noqa: E731
    info = b"".join(b"%o %s\t%s\0" % (mode, sha.encode(), enc(path))
                    for mode, sha, path in entries)
    info += b"".join(b"0 %s\t%s\0" % (_NO_SHA.encode(), enc(path)) for path in remove)
    listed = b"".join(enc(path) + b"\0" for path in files)
    try:
        if info:
            run_git(root, "update-index", "-z", "--index-info", input=info)
        if listed:
            run_git(root, "update-index", "--add", "--remove", "-z", "--stdin", input=listed)
    except subprocess.CalledProcessError as exc:
        raise IndexBusy(exc.stderr.decode("utf-8", "replace").strip()) from None


# -- reading ----------------------------------------------------------------------------
def index_size(git_dir: Path) -> int:
    """About how many entries git's index has, from headers alone (an estimate, for
    thresholds): the larger of the index's own count and, for a split index, its largest
    shared part's, which holds all but the latest changes."""
    shared = [_count(p) for p in git_dir.glob("sharedindex.*")]
    return max([_count(git_dir / "index"), *shared])


def _count(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return 0
    if len(head) < 12:
        return 0
    sig, _version, count = _HEAD.unpack(head)
    return count if sig == b"DIRC" else 0
