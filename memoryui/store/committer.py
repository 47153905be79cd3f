"""When journaled writes become commits: at once, or grouped by a background thread.

`delay=0` commits before each write returns; a positive delay lets one daemon thread
turn the journal into commits every `delay` seconds (what the server uses for agent
traffic: one commit per author per tick), and an exit hook commits what is left. The
journal is shared by every process on the workspace, and so is the tick: a worker whose
tick comes less than `delay` after another's commits nothing (each commit rewrites git's
whole index, 2 MB at 20k files and 21 MB at 200k; four workers ticking apart made four
times the commits and index writes for the same writes).
The ticks run in the committer process (`manage.py committer`, which holds the workspace's
committer lock, `committerlock.py`): a tick holds the GIL of the process it runs in for its
index read and write (tens of milliseconds at 200k files), and in a worker every request
of that worker waited for it. Workers then only stand in when no committer is alive, or
when the live one lets writes wait.
A git failure never loses a write: the record stays journaled and the next attempt
commits it.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
import weakref

from .committerlock import CommitterLock
from .gitrepo import GitRepo
from .room import FullDiskBackoff, disk_is_full
from .threadnames import named

log = logging.getLogger("memoryui.store")

STAND_IN_AFTER = 2.0  # seconds journaled writes may wait on a live committer before a worker ticks
# A tick that committed at least BUSY_RECORDS writes makes the next come after BUSY_DELAY
# instead of `delay`: 0.8 s, so that with the tick's own time a write is committed within
# the design's second. A tick's cost is per author (trees, commits, git's whole index
# rewritten), not per write: under 330 agent writes a second, ticks every 0.2 s take a
# fifth of a core in bursts, and the writes that meet a burst wait (a tick a second halves
# remember's p90 at half load). A lone write still waits only `delay`.
BUSY_RECORDS = 50
BUSY_DELAY = 0.8
# An idle server should cost almost nothing: each wakeup of a waiting thread costs about
# 0.3 ms of CPU on a small VM, five times a second forever at the busy cadence.
# Once nothing was journaled for IDLE_AFTER seconds the committer ticks every IDLE_EVERY
# seconds (a write then still becomes a commit within the design's second), and a worker
# that only stands in for a live committer looks every STANDBY_EVERY seconds (it stands in
# after STAND_IN_AFTER anyway).
IDLE_AFTER = 10.0
IDLE_EVERY = 0.5
STANDBY_EVERY = 1.0
# The committer process, once idle, sleeps until a write rings its doorbell (doorbell.py) and
# looks on its own only every HOST_IDLE_EVERY seconds: for what rings no bell (commits a
# stand-in, a push or a person made, which its search index then takes in).
HOST_IDLE_EVERY = 5.0
# The committer's ticks and its search indexing run at this niceness (the thread's own, on
# Linux): at half load most of the slow `remember` calls fall inside a tick or an index
# drain of the committing process, which runs a fifth of the time; niced, those wait for
# the requests instead (docs/benchmarks.md).
HOST_NICE = 19
# A committer in a session of its own runs the session at this niceness (weight 15 against
# a server's 1024), as the systemd unit's CPUWeight=1: while requests keep a core busy they
# go first, and the commits and search indexing wait for a quieter moment, as they do inside
# `serve`'s session. Writes that wait STAND_IN_AFTER are committed by the workers, which
# leave the indexing of those commits to the committer (`standing_in`, `GitRepo.follow`).
SESSION_NICE = 19


def yield_cpu() -> None:
    """Run the calling thread at the lowest CPU priority, so the workers' requests go first
    when both want a core (Linux gives each thread its own nice value; elsewhere nothing)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), HOST_NICE)
    except (OSError, AttributeError):
        pass


def yield_session() -> bool:
    """Give the calling process's session a low CPU weight (SESSION_NICE), when the process
    leads a session of its own (started by `setsid`, a process manager, a container's init);
    True if it did.

    Linux shares a core between sessions (autogroups, sched(7)) before it weighs the nice
    values of their threads, so a committer in a session apart from the server's would take
    half a busy core from the requests whatever its threads' niceness. Started by `serve`,
    the committer shares serve's session, whose weight it must leave alone (the workers are
    in it too): its threads' niceness does the work there. Under systemd or a container
    runtime each service has a control group of its own and this changes nothing: the unit's
    `CPUWeight=` or compose's `cpu_shares` does it (docs/deployment.md)."""
    try:
        if os.getsid(0) != os.getpid():
            return False
        with open("/proc/self/autogroup", "w") as weight:
            weight.write(f"{SESSION_NICE}\n")
    except OSError:
        return False  # no autogroups here (another kernel, or a container's /proc)
    return True


class Committer:
    """The commit cadence of one Store."""

    def __init__(self, git: GitRepo, delay: float = 0.0):
        self.git = git
        self.delay = delay
        self.lock = CommitterLock(git.state_dir)  # held: this process is the committer
        self.hosting = False  # this process ticks for the others (the committer process)
        self._missing_said = False  # "no committer" logged since one was last seen
        self._waiting_since: float | None = None  # hosted: first tick that saw writes wait
        self._quiet_since: float | None = None  # first tick that found nothing journaled
        self.resting = False  # idle: the next wait is a long one, cut short by the doorbell
        self.listening = False  # hosting, with the doorbell open
        self.stop = threading.Event()  # set: the background thread ends, no more ticks
        self.gone = threading.Event()  # set: hosting, the workspace was removed under it
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._ticked = git.state_dir / "ticked"  # its mtime: the last tick that committed
        self.backoff = FullDiskBackoff()  # the ticks' waits while the disk is full

    def after_write(self, record_id: str) -> str | None:
        """The commit of a write just journaled (None while it waits for the next tick)."""
        if self.delay <= 0:
            return self.safe_flush().get(record_id)
        self._ensure_thread()
        return None

    def safe_flush(self) -> dict[str, str]:
        """Commit now; a git failure leaves the write pending for the next attempt."""
        try:
            return self.git.flush()
        except Exception:  # noqa: BLE001 - the file write already succeeded
            log.exception("commit failed; the change stays pending and is retried")
            return {}

    def sync(self) -> None:
        """Make history current before reading it (deferred writes get committed)."""
        if self.git.has_uncommitted():
            self.safe_flush()

    def close(self) -> None:
        self.stop.set()
        if self.listening:
            self.git.bell.ring()  # a resting tick wakes to see the stop
        if not self.gone.is_set():
            self.safe_flush()
        self.lock.close()

    @property
    def hosted(self) -> bool:
        """Another live process (the committer) ticks for this one."""
        return self.delay > 0 and not self.hosting and self.lock.alive()

    @property
    def standing_in(self) -> bool:
        """The calling thread is this worker's tick, committing for a live committer that
        lets writes wait (its core busy with requests)."""
        return threading.current_thread() is self._thread and self.hosted

    @property
    def running(self) -> bool:
        """A committer process is alive on this workspace (this one or another)."""
        return self.hosting or self.lock.alive()

    def start(self, wait: bool = True) -> bool:
        """Become the workspace's committer and begin ticking now, not at the first write:
        hold the committer lock (waiting for a live committer to end, or, not waiting,
        False when one holds it). Ticks every `delay` seconds, or IDLE_EVERY with 0."""
        if not self.lock.hold(wait):
            return False
        if self.delay <= 0:
            self.delay = IDLE_EVERY
        self.hosting = True
        self._ensure_thread()
        return True

    def _ensure_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            ref = weakref.ref(self)
            stop, delay, hosting, backoff = self.stop, self.delay, self.hosting, self.backoff
            bell = self.git.bell if hosting and self.git.bell.listen() else None
            self.listening = bell is not None

            def pause(seconds: float, resting: bool) -> bool:
                """Wait for the next tick (resting: or a ring, then `delay` for the writes
                that follow it); True once the committer stops."""
                if bell is not None and resting:
                    if not bell.wait(seconds):
                        return stop.is_set()
                    seconds = delay
                return stop.wait(seconds)

            def loop() -> None:
                if hosting:
                    yield_cpu()
                wait, resting = delay, False
                try:
                    while not pause(wait, resting):
                        committer = ref()
                        if committer is None:
                            return
                        wait = delay
                        try:
                            committed = committer._tick()
                            if committed or not committer.git.has_uncommitted():
                                backoff.succeeded()
                            wait = committer._next_wait(len(committed))
                        except Exception as exc:  # noqa: BLE001
                            if disk_is_full(committer.git.git_dir, exc):
                                wait = max(delay, backoff.failed(str(committer.git.root)))
                            else:
                                log.exception("deferred commit failed; retrying next tick")
                        resting = committer.resting
                        del committer
                finally:
                    if bell is not None:
                        bell.close()

            self._thread = threading.Thread(target=named(loop), name="memoryui-committer",
                                            daemon=True)
            self._thread.start()
            atexit.register(_flush_at_exit, weakref.ref(self))

    def _tick(self) -> dict[str, str]:
        """Commit what is journaled when this process's turn has come; what it committed."""
        if not self.git.has_uncommitted():
            self._waiting_since = None
            if self._quiet_since is None:
                self._quiet_since = time.monotonic()
            if self.hosting:
                if self.git.gone:
                    self._lost()
                    return {}
                self.git.follow()  # what a stand-in committed, indexed here
            return {}
        self._quiet_since = None
        if self._due():
            return self.git.flush(blocking=False)
        return {}

    def _lost(self) -> None:
        """The workspace's git directory is gone (deleted, unmounted): nothing more can be
        committed here, and a committer left waiting on it would run for nobody. The ticks
        stop and the process that hosts them is told (`gone`)."""
        log.error("the workspace %s is gone: this committer stops", self.git.root)
        self.gone.set()
        self.stop.set()

    def _next_wait(self, committed: int) -> float:
        """Seconds until the next tick, after one that committed `committed` writes."""
        self.resting = False
        if committed >= BUSY_RECORDS:
            return max(self.delay, BUSY_DELAY)
        if self.hosted:
            return max(self.delay, STANDBY_EVERY)
        if self._quiet_since is not None and time.monotonic() - self._quiet_since >= IDLE_AFTER:
            self.resting = True
            return max(self.delay, HOST_IDLE_EVERY if self.listening else IDLE_EVERY)
        return self.delay

    def _due(self) -> bool:
        """No process of this workspace has begun a tick's commits within the delay; this
        one begins now (the stamp is set before the commit lock is tried).

        A hosted process waits longer: writes must have waited STAND_IN_AFTER seconds (or
        no committer be alive) and no tick have begun for as long.
        """
        now = time.time()
        quiet = self.delay * 0.9
        self._say_missing(hosted := self.hosted)
        if hosted:
            quiet = max(STAND_IN_AFTER, 10 * self.delay)
            if self._waiting_since is None:
                self._waiting_since = now
            if now - self._waiting_since < quiet:
                return False
        try:
            if now - self._ticked.stat().st_mtime < quiet:
                return False
        except FileNotFoundError:
            pass
        try:
            self._ticked.touch()  # an existing stamp gets the current time
        except OSError:
            pass  # a stamp that cannot be set only means more commits
        return True

    def _say_missing(self, hosted: bool) -> None:
        """Log once that this process commits because no committer is alive (and again
        after one was seen since)."""
        if hosted or self.hosting:
            self._missing_said = False
        elif not self._missing_said:
            self._missing_said = True
            log.warning("no committer process is running on %s: this process commits its "
                        "own writes (start `manage.py committer` beside the server)",
                        self.git.root)


def _flush_at_exit(ref: weakref.ref) -> None:
    committer = ref()
    if committer is not None and not committer.stop.is_set():
        committer.close()
