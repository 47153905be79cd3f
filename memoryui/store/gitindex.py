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
_STAT = struct.Struct(">IIIIIIIIII20sH")  # ctime, mtime, dev, ino, mode, uid, gid, size, sha, flags
_REGULAR = (0o100644, 0o100755)
_NO_SHA = "0" * 40
Link = tuple[bytes, set[int], set[int]]  # the split index's: shared part's hash, delete, replace


class IndexUnreadable(Exception):
    """The index is not in a form this reader knows; the caller walks instead."""


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
    """How many entries git's index has: its header, or for a split index the shared
    part's header plus what the split part adds (an estimate: deletions are not counted)."""
    try:
        with open(git_dir / "index", "rb") as fh:
            head = fh.read(12)
    except OSError:
        return 0
    if len(head) < 12:
        return 0
    count = _HEAD.unpack(head)[2]
    if not any(git_dir.glob("sharedindex.*")):
        return count
    try:
        _files, _order, link = _parse((git_dir / "index").read_bytes(), order=False)
        shared = _shared_path(git_dir, link)
        if shared is not None:
            with open(shared, "rb") as fh:
                count += _HEAD.unpack(fh.read(12))[2]
    except (OSError, IndexUnreadable, struct.error, ValueError, IndexError):
        pass
    return count


def index_files(git_dir: Path) -> dict[str, tuple[int, float]]:
    """path -> (size, mtime) of the regular files in git's index (stage 0 or conflicted).

    Reads index versions 2, 3 and 4 (4 is what `feature.manyFiles` writes), whole or split
    (`core.splitIndex`). A missing index is an empty listing (nothing checked out).
    """
    try:
        data = (git_dir / "index").read_bytes()
    except FileNotFoundError:
        return {}
    # A whole index (the usual case, and a large one) is read straight into the listing;
    # only a split one (small: its shared part is another file) keeps every entry in order.
    split = any(git_dir.glob("sharedindex.*"))
    files, entries, link = _parse(data, order=split)
    shared = _shared_path(git_dir, link)
    if shared is None or link is None:
        return files
    out, names, _link = _parse(shared.read_bytes(), order=True, detail=False)
    delete, replace = link[1], link[2]
    for n, pos in enumerate(sorted(replace)):  # the first entries replace, keeping the path
        _raw, mode, size, mtime = entries[n]
        _put(out, names[pos], mode, size, mtime)
    for pos in delete:
        out.pop(names[pos], None)
    for raw, mode, size, mtime in entries[len(replace):]:  # the rest are added
        _put(out, raw.decode("utf-8", "surrogateescape"), mode, size, mtime)
    return out


def _put(out: dict, path: str, mode: int, size: int, mtime: float) -> None:
    if mode in _REGULAR:
        out[path] = (size, mtime)
    else:
        out.pop(path, None)


def _shared_path(git_dir: Path, link: Link | None) -> Path | None:
    if link is None or not any(link[0]):
        return None
    path = git_dir / f"sharedindex.{link[0].hex()}"
    if not path.exists():
        raise IndexUnreadable(f"missing {path.name}")
    return path


def _parse(data: bytes, order: bool,
           detail: bool = True) -> tuple[dict[str, tuple[int, float]], list, Link | None]:
    """The regular files (path -> (size, mtime)); with `order`, also every entry in the index's
    order too: its (raw path, mode, size, mtime) with `detail`, else its decoded path; and
    the split index's link extension as (shared part's hash, delete bits, replace bits)."""
    if len(data) < 12:
        raise IndexUnreadable("short index")
    sig, version, count = _HEAD.unpack_from(data, 0)
    if sig != b"DIRC" or version not in (2, 3, 4):
        raise IndexUnreadable(f"index version {version}")
    files: dict[str, tuple[int, float]] = {}
    ordered: list = []
    pos, prev = 12, b""
    unpack, find, append = _STAT.unpack_from, data.index, ordered.append
    for _ in range(count):
        (_cs, _cn, ms, mn, _dev, _ino, mode, _uid, _gid, size, _sha, flags) = unpack(data, pos)
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
            end = find(b"\0", pos)
            raw = (prev[: len(prev) - strip] if strip else prev) + data[pos:end]
            pos = end + 1
            prev = raw
        else:
            end = find(b"\0", pos)
            raw = data[pos:end]
            pos = start + ((end - start + 8) // 8) * 8
        mtime = ms + mn * 1e-9  # CPython's st_mtime, bit for bit
        path = raw.decode("utf-8", "surrogateescape")
        if mode in _REGULAR:
            files[path] = (size, mtime)
        if order:
            append((raw, mode, size, mtime) if detail else path)
    return files, ordered, _link(data, pos)


def _link(data: bytes, pos: int) -> Link | None:
    """The split index's 'link' extension, among the extensions after the entries."""
    end = len(data) - 20  # the checksum
    while pos + 8 <= end:
        sig, size = struct.unpack_from(">4sI", data, pos)
        body = data[pos + 8:pos + 8 + size]
        if sig == b"link":
            if len(body) == 20:
                return body, set(), set()
            delete, used = _ewah(body, 20)
            replace, _ = _ewah(body, 20 + used)
            return body[:20], delete, replace
        pos += 8 + size
    return None


def _ewah(data: bytes, pos: int) -> tuple[set[int], int]:
    """The set bits of one EWAH bitmap as git serializes it (ewah/ewah_io.c), and its length
    in bytes: bit count, word count, 64-bit words (marker words of a run bit, a 32-bit run
    length and a 31-bit count of literal words that follow), then the last marker's place."""
    _bits, words = struct.unpack_from(">II", data, pos)
    values = struct.unpack_from(f">{words}Q", data, pos + 8)
    out: set[int] = set()
    bit, i = 0, 0
    while i < words:
        marker = values[i]
        run, literals = (marker >> 1) & 0xFFFFFFFF, marker >> 33
        if marker & 1:
            out.update(range(bit, bit + run * 64))
        bit += run * 64
        for word in values[i + 1:i + 1 + literals]:
            while word:
                low = word & -word
                out.add(bit + low.bit_length() - 1)
                word ^= low
            bit += 64
        i += 1 + literals
    return out, 8 + words * 8 + 4
