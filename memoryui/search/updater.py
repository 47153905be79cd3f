"""Keeping an index current, when each pass runs: the Store listener, the write queue and its
background drain, and the throttled catch-up. What a pass does (indexing files, the catch-up
scan, the full rebuild) is `indexer.Indexer`'s; storage is the backend's (`sqlite.py`,
`postgres.py`).

- Every write through memoryui calls `enqueue(paths)`; a thread indexes them within ~0.3 s
  (indexing in the write path cost a third of an agent's `remember`), and every search
  first indexes what was written lately in any process and is not in the index yet
  (`drain_for_reader`, recent.py), so an agent finds what it just wrote whichever worker
  answers.
- `maybe_catch_up()` runs `catch_up()` before a search, throttled across processes by the
  stored `checked_at`, in a background thread so no search waits for it (the first use of an
  empty index builds it before answering).
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memoryui.store.committer import yield_cpu
from memoryui.store.threadnames import named

from .indexer import Indexer
from .passages import DailyMemo
from .recent import RecentWrites, behind

if TYPE_CHECKING:
    from memoryui.store import Store

log = logging.getLogger("memoryui.search")

DRAIN_EVERY = 0.3  # seconds between background drains of the write queue
# ... in a worker whose agent writes the committer process commits and indexes (Store.hosted):
# only what the worker committed itself (a UI edit, a sync) is indexed then. Its writes left
# to the committer (`Store.host_indexes`) stay queued for a search this worker answers,
# which drains the whole queue first, for LEFT_TO_HOST_FOR seconds (the committer has long
# committed and indexed them by then). Skipping them only when the index already held the
# file's current size and stamp was not enough: under agent traffic a daily log has changed
# again by then, so every worker re-tokenized every log it wrote every 2 s (12-19 ms of CPU
# a drain at 570 writes/s, the four workers' drains within 150 ms of each other).
DRAIN_EVERY_HOSTED = 2.0
LEFT_TO_HOST_FOR = 30.0
# The background drain re-indexes a big file (a daily log late in a busy day) at most every
# REINDEX_EVERY seconds; a search still drains everything first. Each index of a log is
# the whole log, so under steady agent writes the committing process re-tokenized five 330 KB
# logs after every commit tick (60 ms, once a second): a third of the calls that came back
# slow at half load fell into one. A search in another process may so miss a busy log's
# last few seconds of entries; small files (notes, MEMORY.md) are indexed at once.
REINDEX_EVERY = 5.0
REINDEX_BIG = 64 * 1024


class Updater(Indexer):
    """The keeping-current half of an index; subclasses provide the storage primitives."""

    def __init__(self, *, catch_up_interval: float = 5.0, background: bool = True) -> None:
        super().__init__()
        self.catch_up_interval = catch_up_interval
        self.background = background
        self._queue: dict[str, float] = {}  # path -> when it changed
        self._exact: set[str] = set()  # queued paths whose time is their commit's
        self._queue_lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self._drainer: threading.Thread | None = None
        self._drain_at_exit = False
        self._big: dict[str, float] = {}  # big file -> when the background drain indexed it
        self._logs = DailyMemo()
        self._recent = RecentWrites()

    # -- wiring to a store -----------------------------------------------------------------
    def attach(self, store: Store) -> None:
        """Follow a store: its writes update the index; a different workspace starts afresh."""
        self.store = store
        self.catalogue.attach(store)
        if self.enqueue not in store.listeners:
            store.listeners.append(self.enqueue)
        identity = self._identity(store)
        if self._meta("identity") != identity:
            self._reset(identity)

    # -- the write queue --------------------------------------------------------------------
    def enqueue(self, paths: Sequence[str], when: float | None = None) -> None:
        """The Store listener: note changed paths for the background drain. `when` is the
        time they are committed with, if the store knows it (its own writes): then indexing
        them asks git nothing, which otherwise means catching up with every new commit (a
        fifth of a busy server's CPU, every worker doing it for every write)."""
        now = time.time() if when is None else float(int(when))  # commits keep whole seconds
        with self._queue_lock:
            for p in paths:
                self._queue.pop(p, None)
                self._queue[p] = now
                if when is None:
                    self._exact.discard(p)
                else:
                    self._exact.add(p)
            if not self._drain_at_exit:
                self._drain_at_exit = True
                atexit.register(self._drain_quietly)
            if self._drainer is None or not self._drainer.is_alive():
                self._drainer = threading.Thread(target=named(self._drain_loop), daemon=True,
                                                 name="memoryui-search-indexer")
                self._drainer.start()

    def _left_to_host(self) -> frozenset[str]:
        store = self.store
        return frozenset(store.host_indexes) if store is not None else frozenset()

    def _hosted(self) -> bool:
        store = self.store
        return store is not None and store.hosted

    def _daily_memo(self) -> DailyMemo | None:
        """The last parse of the busy daily logs, where every write is indexed (the committer
        process, a process without one); a worker whose agents' writes the committer indexes
        keeps none: its few indexings of a log (for a search) do not pay for the memory."""
        if self._hosted():
            self._logs.clear()
            return None
        return self._logs

    def drain(self, leave_to_host: bool = False, hold_busy: bool = False) -> int:
        """Index every queued path now; with `leave_to_host`, not those the store's host
        commits and indexes (they stay queued for a search this process answers); with
        `hold_busy` (the background drain), not a big file indexed in the last
        REINDEX_EVERY seconds (it stays queued).

        One drain at a time: the exit hook must wait for a drain the background thread has
        begun, or paths it took from the queue would die with it at interpreter exit.
        """
        with self._drain_lock:
            with self._queue_lock:
                # read under the queue's lock: a write marks its path before it enqueues it
                leave = self._left_to_host() if leave_to_host else frozenset()
                if leave:
                    changed = {p: w for p, w in self._queue.items() if p not in leave}
                    since = time.time() - LEFT_TO_HOST_FOR
                    self._queue = {p: w for p, w in self._queue.items()
                                   if p in leave and w > since}
                else:
                    changed, self._queue = self._queue, {}
                if hold_busy:
                    for p in self._held(changed):
                        self._queue[p] = changed.pop(p)
                exact = self._exact & changed.keys()
                self._exact &= self._queue.keys()
                if leave and self.store is not None:
                    self.store.host_indexes.difference_update(leave - self._queue.keys())
            if not changed:
                return 0
            sizes: dict[str, int] = {}
            done = self._index_at(changed, exact=exact, fresh=True, sizes=sizes)
            if hold_busy:
                now = time.monotonic()
                self._big.update((p, now) for p, n in sizes.items() if n >= REINDEX_BIG)
            return done

    def drain_for_reader(self) -> int:
        """Before a search answers: what was written lately in any process and is not in the
        index yet is queued (recent.py), then everything queued is indexed."""
        store = self.store
        if store is not None:
            try:
                paths = self._recent.written(store, LEFT_TO_HOST_FOR)
                with self._queue_lock:  # queued already: drained next, as the writer had it
                    paths -= self._queue.keys()
                late = behind(store.root, paths, self._stamps(sorted(paths))) if paths else []
                if late:
                    self.enqueue(late)
            except Exception:  # noqa: BLE001 - the search still answers from the index
                log.exception("looking for recent writes to index failed")
        return self.drain()

    def _held(self, changed: dict[str, float]) -> list[str]:
        """The big files among `changed` the background drain indexed too recently."""
        now = time.monotonic()
        self._big = {p: t for p, t in self._big.items() if now - t < REINDEX_EVERY}
        return [p for p in changed if p in self._big]

    def _drain_quietly(self) -> None:
        try:
            self.drain()
        except Exception:  # noqa: BLE001 - exiting; the next catch-up scan repairs it
            log.exception("search index update at exit failed")

    def _drain_loop(self) -> None:
        if self.store is not None and self.store.committer.hosting:
            yield_cpu()  # the committer: its indexing yields to the workers' requests
        while True:
            hosted = self._hosted()
            time.sleep(DRAIN_EVERY_HOSTED if hosted else DRAIN_EVERY)
            with self._queue_lock:
                leave = self._left_to_host() if hosted else frozenset()
                if not self._queue.keys() - leave:  # (what is left waits for a search)
                    self._drainer = None
                    return
            try:
                self.drain(leave_to_host=hosted, hold_busy=True)
            except Exception:  # noqa: BLE001 - the next catch-up scan repairs the index
                log.exception("search index update failed")

    def maybe_catch_up(self) -> None:
        """Throttled catch_up before a search: at most once per interval across processes."""
        if self.store is None:
            return
        now = time.monotonic()
        if now - self._last_check < self.catch_up_interval:
            return
        self._last_check = now
        try:
            checked = float(self._meta("checked_at") or 0)
        except ValueError:
            checked = 0.0
        if checked and time.time() - checked < self.catch_up_interval:
            return
        if self.background and checked:
            if self._catching_up.locked():
                return
            threading.Thread(target=named(self._catch_up_quietly), name="memoryui-search-catch-up",
                             daemon=True).start()
        else:
            self._catch_up_quietly()  # first use: build before answering

    def _catch_up_quietly(self) -> None:
        try:
            self.catch_up()
        except Exception:  # noqa: BLE001 - a failed scan must not fail a search
            log.exception("search index catch-up failed")
