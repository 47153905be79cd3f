"""Room on the workspace's disk: refusing a write that could not be committed, and the
committer's back-off while the disk stays full.

A write the disk has no room for must be answered as refused (507) with nothing changed,
so `ensure_room` checks before a file is touched. A commit that finds the disk full waits
with an exponential back-off, logged once when the disk fills and once when commits go
through again: retrying at every tick only filled the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

from .errors import CommitRaceError, DiskFull
from .files import FULL_ERRNOS, ROOM_MARGIN, free_bytes, says_full

log = logging.getLogger("memoryui.store")

BACKOFF_FIRST = 1.0  # seconds before the first retry of a commit on a full disk
BACKOFF_CAP = 30.0  # the longest wait between two retries


def ensure_room(where: Path, needed: int) -> None:
    """DiskFull unless the file system of `where` has `needed` bytes free, and the margin
    a commit needs besides (its objects, git's index, the ref's lock file)."""
    if free_bytes(where) < needed + ROOM_MARGIN:
        raise DiskFull()


def disk_is_full(where: Path, exc: BaseException | str) -> bool:
    """Whether a failure (an exception, or a git command's error text) came from a full
    disk: it says so, or the file system of `where` has less than the margin free."""
    if isinstance(exc, DiskFull):
        return True
    if getattr(exc, "errno", None) in FULL_ERRNOS or says_full(str(exc)):
        return True
    if isinstance(exc, str | OSError | pygit2.GitError):
        return free_bytes(where) < ROOM_MARGIN
    return False


def branch_not_moved(where: Path, stderr: str) -> DiskFull | CommitRaceError:
    """Why `git update-ref` refused to move the branch (its error text `stderr`): a full
    disk (no room for the ref's lock file), or another writer moved it first (logged: a
    lost race is worth an operator's look; a full disk is logged by the back-off)."""
    msg = stderr.strip()
    if disk_is_full(where, msg):
        return DiskFull()
    log.error("HEAD moved while committing (%s); batch kept for retry", msg)
    return CommitRaceError(f"the branch moved while committing: {msg}")


class FullDiskBackoff:
    """How long a periodic commit waits after failing on a full disk.

    `failed()` doubles the wait from `first` up to `cap` and logs only the first failure
    of an episode; `succeeded()` ends the episode (logged when there was one). The caller
    keeps its own cadence while there is no episode.
    """

    def __init__(self, first: float = BACKOFF_FIRST, cap: float = BACKOFF_CAP,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.first, self.cap, self.clock = first, cap, clock
        self.failures = 0  # in the current episode
        self.since: float | None = None  # when the episode began

    @property
    def active(self) -> bool:
        return self.failures > 0

    def failed(self, where: str) -> float:
        """Seconds to wait before the next attempt, after one that found the disk full."""
        if not self.failures:
            self.since = self.clock()
            log.error("the disk of %s is full: writes wait uncommitted in the journal, and "
                      "commits are retried with a back-off of up to %g s", where, self.cap)
        self.failures += 1
        return min(self.cap, self.first * 2 ** (self.failures - 1))

    def succeeded(self) -> None:
        """An attempt went through: the episode, if any, is over."""
        if self.failures:
            log.warning("the disk has room again: commits go through after %d failed "
                        "attempts in %.0f s", self.failures, self.clock() - (self.since or 0))
        self.failures, self.since = 0, None
