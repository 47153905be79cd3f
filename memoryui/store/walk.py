"""The one walker of the workspace tree, and the one way to read a file in it.

Every reader of the working tree (hierarchy, pending changes, search catch-up, review,
layouts, Claude's `view`) lists files through `walk` and opens them through `read_nofollow`,
so the rules "never follow a symbolic link", "never read a hard-linked file" and "skip
hidden names" live here once. A symbolic link is never followed or read, and a regular
file with more than one name (a hard link: its other name may be a server secret or
another scope's memory) is never read or listed: `walk(..., links=True)` reports either
as an entry with `link=True` so a caller can show it as refused.
"""

from __future__ import annotations

import ctypes
import enum
import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import InvalidName


@dataclass(frozen=True, slots=True)
class Entry:
    """One item of the tree: a regular file, or (when asked for) a refused symbolic link."""

    path: str  # workspace-relative, '/'-separated
    size: int
    mtime: float
    link: bool = False  # a symbolic or hard link: listed, never followed or read
    folder: bool = False  # a real folder (only with `folders=True`)


HARD_LINK_REASON = ("a hard link (the file has another name, maybe outside its scope "
                    "or the workspace): memoryui never reads or commits it; discard it")


def single(st: os.stat_result) -> bool:
    """A regular file with exactly one name: the only kind memoryui reads or lists."""
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def hard_linked(st: os.stat_result) -> bool:
    """A regular file that other names share (`ln`): never read, listed or committed."""
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def hidden(name: str) -> bool:
    """Names memoryui never lists: `.git`, its own temp files, dotfiles."""
    return name.startswith(".")


def walk(root: Path | str, prefix: str = "", *, links: bool = False,
         depth: int | None = None, folders: bool = False) -> Iterator[Entry]:
    """Regular files below `root/prefix` (one stat each), depth first.

    Hidden names are skipped; symbolic links (to files or folders) are never entered and
    hard-linked files are not listed; with `links=True` both are yielded as
    `Entry(link=True)`; with `folders=True` each real folder is yielded as
    `Entry(folder=True)` just before its contents. `depth=1`
    lists only the folder itself (its subfolders are yielded, not entered). Order is by
    name within each folder (`a/x` before `a-b/x`): sort the paths if you need
    byte order. Paths are relative to `root`.
    """
    root = Path(root)
    base = root / prefix if prefix.strip("/") else root
    rel0 = prefix.strip("/")
    if rel0 and link_in_path(root, rel0):
        return  # the folder is (or is inside) a symbolic link: nothing to list
    yield from _walk(base, rel0, links, depth, folders)


def _walk(base: Path, rel: str, links: bool, depth: int | None,
          folders: bool = False) -> Iterator[Entry]:
    try:
        with os.scandir(base) as it:
            entries = sorted(it, key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return
    for e in entries:
        if hidden(e.name):
            continue
        path = f"{rel}/{e.name}" if rel else e.name
        try:
            st = e.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode) or hard_linked(st):
            if links:
                yield Entry(path, st.st_size, st.st_mtime, link=True)
        elif stat.S_ISDIR(st.st_mode):
            if folders:
                yield Entry(path, 0, st.st_mtime, folder=True)
            if depth is None or depth > 1:
                yield from _walk(Path(e.path), path, links,
                                 None if depth is None else depth - 1, folders)
        elif stat.S_ISREG(st.st_mode):
            yield Entry(path, st.st_size, st.st_mtime)


def subfolders(root: Path | str, prefix: str = "") -> list[str]:
    """Names of the real (not linked, not hidden) folders directly in `root/prefix`."""
    base = Path(root) / prefix if prefix.strip("/") else Path(root)
    if prefix.strip("/") and link_in_path(root, prefix.strip("/")):
        return []
    try:
        with os.scandir(base) as it:
            return sorted(e.name for e in it
                          if not hidden(e.name) and e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def link_in_path(root: Path | str, path: str) -> str | None:
    """The first component of `path` that is a symbolic link, or None (strings, not
    pathlib: every write asks, and pathlib was most of the cost)."""
    cur = str(root)
    parts = path.split("/")
    for i, part in enumerate(parts):
        cur = f"{cur}/{part}"
        try:
            if stat.S_ISLNK(os.lstat(cur).st_mode):
                return "/".join(parts[: i + 1])
        except (FileNotFoundError, NotADirectoryError):
            return None
    return None


def read_nofollow(root: Path | str, path: str) -> bytes | None:
    """The bytes of a regular file, opened so that no symbolic link is followed: one
    `openat2` call where Linux has it, else component by component with O_NOFOLLOW.

    None when it does not exist. InvalidName when any component is a symbolic link, the
    file has another name (a hard link) or the path names a folder: nothing outside the
    workspace can ever be read this way, even if a link is planted between a check and
    the open.
    """
    found = read_stat_nofollow(root, path)
    return None if found is None else found[0]


def read_plain(root: Path | str, path: str) -> bytes | None:
    """`read_nofollow`, with None also where it refuses (a link, a folder): for a caller
    that only asks whether the file still holds a version it knows."""
    try:
        return read_nofollow(root, path)
    except InvalidName:
        return None


def read_stat_nofollow(root: Path | str, path: str) -> tuple[bytes, os.stat_result] | None:
    """`read_nofollow`, with the file's stat taken from the open file before reading (a
    change racing the read leaves a newer stamp than the one returned).

    Linux's `openat2` refuses a link in any component in one call; a file where it opens
    is read at once. Anything else (a link, a missing or odd component, no `openat2`)
    goes component by component, which says exactly what is wrong.
    """
    if _openat2 is not None:
        found = _read_openat2(root, path)
        if found is not _SLOW:
            return found
    return _read_by_components(root, path)


def _read_by_components(root: Path | str, path: str
                        ) -> tuple[bytes, os.stat_result] | None:
    parts = path.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                return None
            except OSError as exc:
                # Linux answers ENOTDIR for a link opened with O_DIRECTORY | O_NOFOLLOW,
                # and for a file where a folder should be (then the path does not exist).
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                if _is_link(part, fd):
                    raise _refused(path) from None
                return None
            os.close(fd)
            fd = nfd
        try:
            ffd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refused(path) from None
            raise
        st = os.fstat(ffd)
        if not single(st):
            os.close(ffd)
            if hard_linked(st):
                raise hard_link_refused(path)
            if stat.S_ISDIR(st.st_mode):
                raise InvalidName(f"{path} is a folder, not a file")
            raise InvalidName(f"{path} is not a regular file")
        with os.fdopen(ffd, "rb") as fh:
            return fh.read(), st
    finally:
        os.close(fd)


# -- openat2 (Linux 5.6+): one call per file instead of one per path component ----------------
class _Slow(enum.Enum):
    SLOW = "ask component by component"


_SLOW = _Slow.SLOW
_RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH, _SYS_OPENAT2 = 0x04, 0x08, 437


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


def _find_openat2() -> Callable[..., int] | None:
    """libc's syscall() when this kernel has openat2 and lets us call it (x86-64 only: the
    number differs elsewhere, and seccomp may forbid it), else None."""
    if os.uname().machine != "x86_64":
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    syscall.restype = ctypes.c_long
    how = _OpenHow(os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, 0,
                   _RESOLVE_NO_SYMLINKS | _RESOLVE_BENEATH)
    fd = syscall(_SYS_OPENAT2, ctypes.c_int(-100), b".", ctypes.byref(how),
                 ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        return None
    os.close(fd)
    return syscall


_openat2 = _find_openat2()
_FILE_HOW = _OpenHow(os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0,
                     _RESOLVE_NO_SYMLINKS | _RESOLVE_BENEATH)


def _open_beneath(root: Path | str, path: str, how: _OpenHow) -> int:
    """`openat2` of `path` under `root` as `how` says: a descriptor, or -1 (errno set)."""
    assert _openat2 is not None  # its callers ask only where openat2 is there
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return _openat2(_SYS_OPENAT2, ctypes.c_int(dfd), os.fsencode(path),
                        ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    finally:
        os.close(dfd)


def _read_openat2(root: Path | str, path: str) -> tuple[bytes, os.stat_result] | None | _Slow:
    """(bytes, stat) of a regular file, None when it is simply missing, _SLOW otherwise."""
    if not path or path.startswith("/") or "\0" in path:
        return _SLOW
    fd = _open_beneath(root, path, _FILE_HOW)
    if fd < 0:
        return None if ctypes.get_errno() == errno.ENOENT else _SLOW
    try:
        st = os.fstat(fd)
        if not single(st):
            return _SLOW  # (component by component says what is wrong)
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, max(st.st_size - size, 0) + 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


_APPEND_HOW = _OpenHow(os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                       0, _RESOLVE_NO_SYMLINKS | _RESOLVE_BENEATH)


def open_append(root: Path | str, path: str) -> tuple[int, os.stat_result] | None:
    """A regular file opened to read and append, no symbolic link followed in any
    component, with its stat: the descriptor an entry is appended through. None (nothing
    opened) when the file is missing, odd, or `openat2` is not there: the caller then
    writes through `read_nofollow` and a whole new file, which say what is wrong (a
    hard-linked log is refused there: nothing is appended through another name)."""
    if _openat2 is None or not path or path.startswith("/") or "\0" in path:
        return None
    fd = _open_beneath(root, path, _APPEND_HOW)
    if fd < 0:
        return None
    st = os.fstat(fd)
    if not single(st):
        os.close(fd)
        return None
    return fd, st


_FOLDER_HOW = _OpenHow(os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, 0,
                       _RESOLVE_NO_SYMLINKS | _RESOLVE_BENEATH)


def open_folder(root: Path | str, path: str) -> tuple[int, str] | None:
    """The folder of `path` opened under `root` with no symbolic link followed, and the
    file's name in it: where a file is replaced by name (`appends.append_by_copy`). None
    when `openat2` is not there or the folder is not one."""
    if _openat2 is None or not path or path.startswith("/") or "\0" in path:
        return None
    parent, _, name = path.rpartition("/")
    if not name:
        return None
    fd = _open_beneath(root, parent or ".", _FOLDER_HOW)
    return None if fd < 0 else (fd, name)


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_at(dir_fd: int, name: str) -> bytes | None:
    """The bytes of the file `name` in the open folder `dir_fd`, or None when it is not a
    regular file with one name (missing, a symbolic link, a hard link, odd)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not single(os.fstat(fd)):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def hard_link_refused(path: str) -> InvalidName:
    return InvalidName(f"{path} is {HARD_LINK_REASON} on the pending page")


def _refused(path: str) -> InvalidName:
    return InvalidName(f"invalid path {path!r}: it goes through a symbolic link, "
                       "which memoryui never follows")
