"""Durable file primitives: atomic replace, folder syncs, and full-disk errors made DiskFull
(appends: `appends.py`; locks: `locks.py`)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2

from .errors import DiskFull

TMP_SUFFIX = ".memoryui-tmp"


def temp_name(name: str) -> str:
    """A hidden, unique name for a file being written beside `name` (git ignores the
    suffix: `GitObjects._ensure_excludes`), so concurrent writers never share one."""
    return f".{name}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"


def atomic_write(path: Path, data: bytes, *, sync_folder: bool = True,
                 before_replace: Callable[[], None] | None = None) -> None:
    """Unique temp file in the same folder, fsync, rename, fsync the folder.

    A crash leaves either the old or the new file, never a torn one; the temp name is
    hidden and unique so concurrent writers never share it (Duragent's fixed
    `MEMORY.md.tmp` races). A full disk raises DiskFull with the old file untouched.
    `sync_folder=False` leaves the folder's fsync (which makes the rename itself survive
    a power cut) to the caller: the store does it after releasing its lock, before it
    acknowledges the write, so writers to other files do not wait for it.
    `before_replace` runs just before the rename (journaled.write): when it fails, so
    does the write, with the old file untouched.
    """
    with disk_errors():
        _atomic_write(path, data, sync_folder, before_replace)


def _atomic_write(path: Path, data: bytes, sync_folder: bool = True,
                  before_replace: Callable[[], None] | None = None) -> None:
    tmp = path.parent / temp_name(path.name)
    for attempt in range(5):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileNotFoundError:
            # A deletion in the same folder pruned it as empty meanwhile (writers of
            # different files run at once): make it again.
            if attempt == 4:
                raise
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    os.close(fd)
    try:
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sync_folder:
        fsync_dir(path.parent)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def prune_empty_dirs(directory: Path, root: Path) -> None:
    """Remove folders left empty by a removal, up to (not including) the workspace root."""
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


ROOM_MARGIN = 1024 * 1024  # below this much free space, a failed write is a full disk


@contextlib.contextmanager
def disk_errors(where: Path | None = None, needed: int = 0) -> Iterator[None]:
    """Turn "no space left" / "quota exceeded" into DiskFull, a clear 507 for callers.

    libgit2 (through pygit2) reports it as an OSError or GitError without an errno,
    sometimes with the system's message ("failed to write out file: No space left on
    device"), sometimes only with a follow-up error ("failed to find pack entry"): so
    with `where`, a failure while that file system has less than `needed` bytes plus
    a margin free counts as a full disk too.
    """
    try:
        yield
    except (OSError, pygit2.GitError) as exc:
        if getattr(exc, "errno", None) in FULL_ERRNOS or says_full(str(exc)) \
                or (where is not None and free_bytes(where) < needed + ROOM_MARGIN):
            raise DiskFull() from exc
        raise


def free_bytes(where: Path) -> int:
    try:
        st = os.statvfs(where)
    except OSError:
        return 1 << 62
    return st.f_bavail * st.f_frsize


def says_full(text: str) -> bool:
    return any(os.strerror(code) in text for code in FULL_ERRNOS)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
