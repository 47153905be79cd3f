"""Locks that hold across threads and processes: the workspace's write lock (shared or
exclusive) and the commit, journal and per-path locks, all `flock` on files under
`.git/memoryui/`."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path


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
        if self._owner == threading.get_ident() or getattr(self._local, "shared", 0) > 0:
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
