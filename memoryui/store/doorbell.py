"""The idle committer's doorbell: a FIFO in `.git/memoryui/` that a write rings when its
record is the first in an empty journal.

An idle committer process would otherwise have to look at the journal several times a
second to commit a write within the design's second, and each look costs a wakeup. Here it
sleeps until a write rings (or HOST_IDLE_EVERY passes), then groups what follows for its
delay and commits. Ringing is a non-blocking open and a one-byte write, made only by the
record that starts a journal (about once per commit); with no committer listening the open
fails at once (no reader) and a full pipe means it was rung already, so a write never
waits on it. The path is never followed as a link, and anything there that is not a FIFO
is never written to.
"""

from __future__ import annotations

import errno
import math
import os
import select
import stat
from pathlib import Path

NAME = "committer.bell"


class Doorbell:
    """One workspace's bell: `ring` from any process; `listen`, `wait` and `close` in the
    committer process that holds the committer lock."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / NAME
        self._read: int | None = None
        self._keep: int | None = None  # a writer of its own: no end-of-file while none rings
        self._poll: select.poll | None = None  # (not select(): a busy process has fds > 1023)

    def ring(self) -> None:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return  # no bell (no committer yet) or no one listening: nothing waits to hear
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"!")
        except OSError:
            pass  # the pipe is full: the committer has been rung already
        finally:
            os.close(fd)

    def listen(self) -> bool:
        """Open the bell for reading (made first when missing); False where this file
        system has no FIFOs: the committer then looks at the journal on its own."""
        if self._read is not None:
            return True
        for _attempt in range(2):
            try:
                os.mkfifo(self.path, 0o600)
            except FileExistsError:
                pass
            except OSError:
                return False
            flags = os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                fd = os.open(self.path, os.O_RDONLY | flags)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    return False
                fd = -1
            if fd >= 0 and stat.S_ISFIFO(os.fstat(fd).st_mode):
                self._read = fd
                self._keep = os.open(self.path, os.O_WRONLY | flags)
                self._poll = select.poll()
                self._poll.register(fd, select.POLLIN)
                return True
            if fd >= 0:
                os.close(fd)
            try:
                self.path.unlink(missing_ok=True)  # a link or a plain file in its place
            except OSError:
                return False  # a folder: left alone
        return False

    def wait(self, seconds: float) -> bool:
        """Sleep until the bell rings or `seconds` pass; True if it rang (the rings are
        taken, so the next wait sleeps again)."""
        if self._read is None or self._poll is None:
            return False
        if not self._poll.poll(max(0, math.ceil(seconds * 1000))):
            return False
        try:
            while os.read(self._read, 512):
                pass
        except BlockingIOError:
            pass
        return True

    def close(self) -> None:
        for fd in (self._read, self._keep):
            if fd is not None:
                os.close(fd)
        self._read = self._keep = self._poll = None
