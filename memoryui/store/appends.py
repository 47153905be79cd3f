"""Appends to a log without rewriting it: in place when the entry ends in the memory page
it starts in (`append_in_place`, `append_at`), else by a new file the kernel copies the log
into (`append_by_copy`); the caller syncs each once it lets go of the file's lock."""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .files import disk_errors, temp_name, write_all

PAGE = mmap.PAGESIZE


def _in_one_page(size: int, tail: bytes) -> bool:
    """`tail`, appended at `size`, ends in the memory page its first byte goes to."""
    return size % PAGE + len(tail) <= PAGE


def append_in_place(path: Path, size: int, tail: bytes) -> int | None:
    """Append `tail` to the file at `path`, if the file still is the one of `size` bytes the
    caller read (a regular file with no other name) and `tail` ends in the memory page its
    first byte goes to; returns the open descriptor, for `sync_appended` to make durable
    once the caller has let go of the file's lock. None, with nothing written, otherwise
    (the caller then writes the whole file atomically).

    A daily log's entry so costs its own bytes and one sync, not a new file of the log's
    full size and two syncs (file and folder). Within one page the kernel copies the bytes and
    then moves the file's end in one step, so a reader sees the entry whole or not at all,
    a killed writer leaves all of it or none (a write over pages can stop between two),
    and after a power cut ext4 has the old length or the page written (it orders data
    before the size). A full disk truncates the file back to `size` and raises DiskFull.
    A second name (a hard link, possibly outside the workspace) is never written through.
    """
    if not tail or not _in_one_page(size, tail):
        return None
    with disk_errors():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
    if append_at(fd, os.fstat(fd), size, tail):
        return fd
    os.close(fd)
    return None


def append_at(fd: int, st: os.stat_result, size: int, tail: bytes) -> bool:
    """`append_in_place` on a descriptor opened for appending, whose stat `st` the caller
    took: False, with nothing written, unless it is a regular file of `size` bytes with no
    other name and `tail` ends in the page its first byte goes to. The descriptor stays
    open either way (True: for `sync_appended`)."""
    if not _appendable(st, size, tail) or not _in_one_page(size, tail):
        return False
    with disk_errors():
        try:
            write_all(fd, tail)
        except BaseException:
            if os.fstat(fd).st_size != size:
                os.ftruncate(fd, size)
            raise
    return True


def crosses_page(st: os.stat_result, size: int, tail: bytes) -> bool:
    """Whether `append_at` refused `tail` only because it crosses a memory page."""
    return _appendable(st, size, tail) and not _in_one_page(size, tail)


def _appendable(st: os.stat_result, size: int, tail: bytes) -> bool:
    """A regular file of `size` bytes with no other name, and something to append."""
    return bool(tail) and stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_size == size


def sync_appended(fd: int) -> None:
    """Make an in-place append durable, then close it. Called after the file's lock is let
    go: the next writer of the same log appends meanwhile, and their syncs share one
    journal commit instead of each waiting behind the other's. A write is acknowledged
    only after its own sync, which covers everything appended to the file before it."""
    try:
        with disk_errors():
            os.fdatasync(fd)
    finally:
        os.close(fd)


def append_by_copy(folder: int, name: str, src: int, st: os.stat_result, tail: bytes,
                   before_replace: Callable[[], None] | None = None) -> int | None:
    """`tail` appended to the log `name` in the open `folder` as a new file, for an entry that
    crosses a memory page (`append_at` refuses it: a write over two pages can stop between
    them): the log's `st.st_size` bytes copied from `src` by the kernel, the entry after
    them, synced, then renamed over the log (after `before_replace`, as in `atomic_write`),
    so a reader or a killed writer sees the old log or the new one. Returns the new file's
    descriptor (the caller syncs `folder` once it lets go of the lock), or None with nothing
    changed when `name` no longer is the file `src` is (the caller then takes the whole-file
    path). The log's bytes never pass through Python: the kernel copies them.
    """
    try:
        now = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        return None
    tmp = temp_name(name)
    with disk_errors():
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=folder)
        try:
            _copy(src, fd, st.st_size)
            write_all(fd, tail)
            os.fsync(fd)
            if before_replace is not None:
                before_replace()
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            os.close(fd)
            try:
                os.unlink(tmp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
    return fd


def _copy(src: int, dst: int, size: int) -> None:
    """The first `size` bytes of `src` to `dst` (at its start), in the kernel where it can."""
    done = 0
    copy_range = getattr(os, "copy_file_range", None)  # (Linux only)
    try:
        while copy_range is not None and done < size:
            n = copy_range(src, dst, size - done, done, done)
            if n == 0:
                raise OSError(errno.EIO, "the log got shorter while it was copied")
            done += n
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP):
            raise
    while done < size:  # no copy_file_range here (or a file system that refuses it)
        chunk = os.pread(src, min(size - done, 1 << 20), done)
        if not chunk:
            raise OSError(errno.EIO, "the log got shorter while it was copied")
        os.pwrite(dst, chunk, done)
        done += len(chunk)
    os.lseek(dst, size, os.SEEK_SET)


def sync_replaced(fd: int, folder: int) -> None:
    """Make a log `append_by_copy` replaced last through a power cut (its content was synced
    before the rename; the folder holds the rename), then close both."""
    try:
        with disk_errors():
            os.fsync(folder)
    finally:
        os.close(fd)
        os.close(folder)


