"""Durable file primitives: atomic replace and a lock that holds across processes."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2

from .errors import DiskFull

TMP_SUFFIX = ".memoryui-tmp"
PAGE = mmap.PAGESIZE


def temp_name(name: str) -> str:
    """A hidden, unique name for a file being written beside `name` (git ignores the
    suffix: `GitRepo._ensure_excludes`), so concurrent writers never share one."""
    return f".{name}.{os.getpid()}.{secrets.token_hex(4)}{TMP_SUFFIX}"


def _in_one_page(size: int, tail: bytes) -> bool:
    """`tail`, appended at `size`, ends in the memory page its first byte goes to."""
    return size % PAGE + len(tail) <= PAGE


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
        _write_all(fd, data)
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


def append_in_place(path: Path, size: int, tail: bytes) -> int | None:
    """Append `tail` to the file at `path`, if the file still is the one of `size` bytes the
    caller read (a regular file with no other name) and `tail` ends in the memory page its
    first byte goes to; returns the open descriptor, for `sync_appended` to make durable
    once the caller has let go of the file's lock. None, with nothing written, otherwise
    (the caller then writes the whole file atomically).

    A daily log's entry so costs its own bytes and one sync: rewriting the whole log was
    a new file of its full size, two syncs (file and folder) and, late in a busy day,
    most of an agent write's disk time. Within one page the kernel copies the bytes and
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
            _write_all(fd, tail)
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
    journal commit instead of each waiting behind the other's (waiting for that lock was
    the largest item of a profile of the workers at half load). A write is acknowledged
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
    so a reader or a killed writer sees the old log or the new one. Returns the new file's descriptor (the caller syncs `folder` once
    it lets go of the lock), or None with nothing changed when `name` no longer is the
    file `src` is (the caller then takes the whole-file path).

    The whole-file path decoded, checked, hashed and re-encoded the whole log in Python and
    made the next entry read it again: on a log of 350-920 KB, 2.7 ms of CPU against 0.2 ms
    for an entry in place, for one entry in 40. Here it is 0.8 ms, mostly the kernel's copy.
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
            _write_all(fd, tail)
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


def _write_all(fd: int, data: bytes) -> None:
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


class ProcessLock:
    """A re-entrant lock that excludes other threads and other processes.

    `flock` belongs to the open file description, so the descriptor is reopened after
    a fork (gunicorn workers) and guarded by a thread lock inside one process.
    """

    def __init__(self, path: Path):
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._pid = 0

    def _open(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._pid = os.getpid()
        return self._fd

    def acquire(self, blocking: bool = True) -> bool:
        if not self._thread_lock.acquire(blocking):
            return False
        if self._depth == 0:
            try:
                flags = fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB)
                fcntl.flock(self._open(), flags)
            except BlockingIOError:
                self._thread_lock.release()
                return False
            except BaseException:
                self._thread_lock.release()
                raise
        self._depth += 1
        return True

    def release(self) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._thread_lock.release()

    def note(self, size: int) -> bytes:
        """What the last holder left in the lock's file (read while holding the lock):
        a few bytes of state that belong with what the lock guards."""
        return os.pread(self._open(), size, 0)

    def set_note(self, data: bytes) -> None:
        os.pwrite(self._open(), data, 0)

    def __enter__(self) -> ProcessLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class SharedProcessLock(ProcessLock):
    """The workspace's write lock: `with lock:` is exclusive, as a ProcessLock;
    `with lock.shared():` may be held by many threads and processes at once.

    One-file writes hold it shared (each with its own path lock), so an agent's fsync
    never makes writers of other files wait; what rewrites the tree or the journal as a
    whole (sync, pending commits, renames, deletes) holds it exclusive. A gate taken by
    both sides and released once the lock is held keeps a steady stream of shared holders
    from starving an exclusive one. The shared side uses its own descriptor (flock
    locks belong to the open file description), so the kernel orders it against this
    process's exclusive holders too. A thread holding it exclusive may take it shared
    (a no-op); never the other way round.
    """

    def __init__(self, path: Path):
        super().__init__(path)
        self._gate = ProcessLock(path.with_name(path.name + ".gate"))
        self._owner: int | None = None
        self._shared_fd: int | None = None
        self._shared_pid = 0
        self._shared_count = 0
        self._shared_mutex = threading.Lock()
        self._local = threading.local()

    def acquire(self, blocking: bool = True) -> bool:
        me = threading.get_ident()
        if self._owner == me:
            return super().acquire(blocking)  # re-entered: depth only
        if getattr(self._local, "shared", 0):
            raise RuntimeError("the write lock is held shared by this thread: no upgrade")
        if not self._gate.acquire(blocking):
            return False
        try:
            if not super().acquire(blocking):
                return False
        finally:
            self._gate.release()
        self._owner = me
        return True

    def release(self) -> None:
        if self._depth == 1:
            self._owner = None
        super().release()

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        if self._owner == threading.get_ident() or getattr(self._local, "shared", 0):
            self._local.shared = getattr(self._local, "shared", 0) + 1
            try:
                yield
            finally:
                self._local.shared -= 1
            return
        with self._gate, self._shared_mutex:
            if self._shared_count == 0:
                fcntl.flock(self._open_shared(), fcntl.LOCK_SH)
            self._shared_count += 1
        self._local.shared = 1
        try:
            yield
        finally:
            self._local.shared = 0
            with self._shared_mutex:
                self._shared_count -= 1
                if self._shared_count == 0 and self._shared_fd is not None:
                    fcntl.flock(self._shared_fd, fcntl.LOCK_UN)

    def _open_shared(self) -> int:
        if self._shared_fd is None or self._shared_pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._shared_fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._shared_pid = os.getpid()
            self._shared_count = 0
        return self._shared_fd
