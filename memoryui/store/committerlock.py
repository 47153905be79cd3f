"""Which process is a workspace's committer: the one holding `committer.lock`.

The committer process (`manage.py committer`) holds an exclusive `flock` on this file in
the workspace's state folder for as long as it lives; the kernel lets go of it the moment
that process ends, however it ends (SIGKILL included), so a second committer waiting on it
takes over at once and no stale pid or heartbeat is ever believed. Every other process asks
"is a committer alive?" with a shared, non-blocking try on its own descriptor: it fails
while the committer holds the lock, and is let go again at once when it succeeds.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from .locks import ProcessLock

LOCK_NAME = "committer.lock"


class CommitterLock:
    """The committer lock of the workspace whose state folder is `state_dir`."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_NAME
        self._holder = ProcessLock(self.path)
        self.held = False  # this process is the committer
        self._probe: int | None = None
        self._probe_pid = 0

    def hold(self, blocking: bool = True) -> bool:
        """Become the committer: wait for the lock (or, not blocking, try it once)."""
        if self.held:
            return True
        self.held = self._holder.acquire(blocking)
        return self.held

    def release(self) -> None:
        if self.held:
            self.held = False
            self._holder.release()

    def alive(self) -> bool:
        """Another process holds the lock: a committer is running on this workspace."""
        if self.held:
            return False
        try:
            fd = self._probe_fd()
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False  # no lock file to be had: nobody can hold it either
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False

    def _probe_fd(self) -> int:
        # Its own open file description (a flock belongs to one), reopened after a fork.
        if self._probe is None or self._probe_pid != os.getpid():
            self._probe = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                                  | os.O_CLOEXEC, 0o644)
            self._probe_pid = os.getpid()
        return self._probe

    def close(self) -> None:
        self.release()
        if self._probe is not None and self._probe_pid == os.getpid():
            os.close(self._probe)
        self._probe = None
