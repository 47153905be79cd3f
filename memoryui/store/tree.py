"""The read model of the working tree: every file with its size and last commit.

Cost grows with what changed, not with the workspace:
- The first listing reads git's index (`listing.py`, 0.3 s at 200k files) instead of
  walking; `git status` then names what differs from the index, in a background thread
  (`checking` is true meanwhile, and pages say so).
- After that nothing is re-walked. Paths this process writes, paths in new commits (from
  HEAD's advance) and paths a file-system watcher reports (`watch.py`, inotify) are
  re-stated one by one. Without a watcher, `git status` re-checks every TREE_TTL seconds,
  and only when a page asks.
- Every change bumps `version` and is logged, so a consumer (the overview) can patch what
  it derived with `changed_since(version)` instead of rebuilding.
- The last-change map (path -> last commit) follows HEAD incrementally and is saved, so
  a restart catches up from where it was. A repository seen for the first time (a clone,
  an import) has it computed from the whole history in the background (`history_pending`).
"""

from __future__ import annotations

import binascii
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import pygit2

from . import gitindex, history, lastmap, listing, memory, walk
from .gitrepo import GitRepo
from .layered import Layered
from .layout import Layout
from .locks import ProcessLock
from .threadnames import named

log = logging.getLogger("memoryui.store")

TREE_TTL = 60.0  # seconds between `git status` re-checks when no watcher runs
LASTCHANGE_SAVE_EVERY = 300.0  # seconds between saves of the last-change cache file
SYNC_HISTORY_BELOW = 5_000  # files; smaller workspaces are listed and read at once
CHANGE_LOG = 5_000  # changed paths remembered for consumers; older ones mean "rebuild"
COMMIT_CACHE = 20_000  # commits whose author and subject are kept (for pages)


class LastChange:
    """The last commit of a path: sha and time kept, the rest read from git when shown.

    Reads like the dict it replaces (`last["time"]`, `last.get("actor")`): 200k paths of
    full commit details cost ~140 MB; two fields cost a third of that, and the sha kept as
    its 20 bytes rather than 40 hex digits another 7 MB.
    """

    __slots__ = ("oid", "time", "_model", "path")

    def __init__(self, sha: str | bytes, time: int, model: TreeModel | None = None,
                 path: str = ""):
        self.oid = sha if isinstance(sha, bytes) else binascii.unhexlify(sha)
        self.time, self._model = time, model
        self.path = path  # the map's own key: the tree takes it rather than a copy

    @property
    def sha(self) -> str:
        return self.oid.hex()

    def get(self, key: str, default: object = None) -> object:
        if key == "sha":
            return self.sha
        if key == "time":
            return self.time
        if self._model is None:
            return default
        return self._model.commit_info(self.sha).get(key, default)

    def __getitem__(self, key: str) -> object:
        value = self.get(key, KeyError)
        if value is KeyError:
            raise KeyError(key)
        return value

    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LastChange):
            return (self.oid, self.time) == (other.oid, other.time)
        if isinstance(other, dict):
            return other.get("sha") == self.sha
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


@dataclass(slots=True)
class FileInfo:
    """A file as the tree keeps it (its layout address is derived where needed: keeping
    200k of them cost 20 MB)."""

    path: str
    size: int
    mtime: float
    last: LastChange | None = None  # sha, time (author, actor, subject on demand)


class TreeModel:
    """The cached tree and last-change map of one workspace (shared by its threads)."""

    def __init__(self, root: Path, layout: Layout, git: GitRepo, *, watch: bool = False):
        self.root, self.layout, self.git = root, layout, git
        self._tree: Layered[str, FileInfo] | None = None  # changed copy-on-write
        self._checked = 0.0  # time.monotonic() of the last `git status` check
        self._dirty: set[str] = set()
        # `touch` is called by writers holding the workspace's write lock: it takes only
        # this lock, never `_lock` (held while a page lists or re-states the tree).
        self._dirty_lock = threading.Lock()
        self._catch_up_lock = threading.Lock()  # one `git log` catch-up at a time
        self._last: Mapping[str, LastChange] = {}  # a dict, or a Layered once changed
        self._last_head: str | None = None
        self._last_saved = time.monotonic()  # a map loaded or read in full was just saved
        self._saving = False
        self._commits: dict[str, dict] = {}  # sha -> author, actor, subject (bounded)
        self._lock = threading.RLock()
        self.version = 0
        self._log: list[tuple[int, str]] = []  # (version, path) of recent changes
        self._reset_at = 0  # a version before which changed_since cannot answer
        self.checking = False  # a `git status` pass is under way
        self._check_again = False  # ... and another must follow it
        self._check_lock = threading.Lock()
        self.history_pending = False  # the last-change map is being computed
        self._history_thread: threading.Thread | None = None
        self._listing_thread: threading.Thread | None = None
        # numbered events (a path touched, a background pass ended): `wait_for` sleeps on them
        self._events = threading.Condition(threading.Lock())
        self._event_count = 0
        # one process of a server reads the whole history; the others load what it saved
        self._history_lock = ProcessLock(git.state_dir / "lastchange.lock")
        self._want_watch = watch
        self.watcher = None

    # -- changes ------------------------------------------------------------
    def touch(self, *paths: str) -> None:
        """Mark paths that changed, so the cached tree re-stats just those."""
        with self._dirty_lock:
            self._dirty.update(paths)
        self._notify()

    def _notify(self) -> None:
        with self._events:
            self._event_count += 1
            self._events.notify_all()

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Wait until `condition()` holds, re-asked after each change or background pass
        (a watcher's report, a `git status` check, a listing, a history read): no polling.

        The condition is asked outside the model's locks, so it may read the tree."""
        deadline = time.monotonic() + timeout
        while True:
            with self._events:
                seen = self._event_count
            if condition():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            with self._events:
                if self._event_count == seen:  # nothing happened since it was asked
                    self._events.wait(left)

    def invalidate(self) -> None:
        """Forget the cached tree: the next `tree()` lists the workspace again."""
        with self._lock:
            self._tree = None
            self._reset_at = self.version = self.version + 1

    def changed_since(self, version: int) -> set[str] | None:
        """Paths changed after `version`, or None when that is too old to say (rebuild)."""
        with self._lock:
            if version < self._reset_at:
                return None
            return {p for v, p in self._log if v > version}

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

    # -- last changes -------------------------------------------------------
    def commit_info(self, sha: str) -> dict:
        """Author, actor and subject of a commit (cached; read with libgit2)."""
        info = self._commits.get(sha)
        if info is None:
            try:
                c = self.git.repo[sha]
                info = history.summary(c.author.name, c.message)
            except (KeyError, ValueError, pygit2.GitError):
                info = {"author": "", "actor": "", "subject": ""}
            if len(self._commits) > COMMIT_CACHE:
                self._commits.clear()
            self._commits[sha] = info
        return info

    def read_commits(self, shas: Iterable[str]) -> None:
        """Read many commits' author and subject at once, by git (a page about to show a
        few thousand, e.g. the overview saved for the next start)."""
        missing = {s for s in shas if s and s not in self._commits}
        if not missing:
            return
        found = history.commit_summaries(self.root, missing)
        if len(self._commits) + len(found) > COMMIT_CACHE:
            self._commits.clear()
        self._commits.update(found)

    def last_changes(self) -> Mapping[str, LastChange]:
        """path -> the last commit that touched it, kept current incrementally by HEAD.

        On a large repository without a saved map this returns at once with what is known
        (nothing) and computes the map in the background (`history_pending`).
        """
        head = self.git.head()
        with self._lock:
            if head == self._last_head:
                return self._last
            if (self._last_head is None and not self._load_saved() and head is not None
                    and gitindex.index_size(self.git.git_dir) > SYNC_HISTORY_BELOW):
                self._start_history(head)
                return self._last
            if head is None:
                self._last, self._last_head = {}, None
                return self._last
            if head == self._last_head or self.history_pending:
                return self._last
        self._catch_up(head)
        return self._last

    def _load_saved(self) -> bool:
        saved = lastmap.load(self.git.state_dir,
                             lambda p, oid, t: LastChange(oid, t, self, p))
        if saved is None:
            return False
        self._take(*saved)
        return True

    def _take(self, head: str, last: dict[str, LastChange]) -> None:
        """Make `last` (as of `head`) the map; the caller holds `_lock`. A tree listed
        before it gets its last changes filled in, and the map the tree's path strings. It
        used to be listed again instead: at a first start on 200k files the worker that
        loaded the map another had read listed everything a second time while the first
        listing and its overview were still held, and stayed 85-140 MB larger."""
        if self._tree is not None:
            last = self._share_paths(last)
            self._tree = self._tree.copy()
        self._last, self._last_head = last, head
        if self._tree is not None:
            self._changed(list(last))

    def _start_history(self, head: str) -> None:
        if self._history_thread is not None:
            return
        self.history_pending = True

        def work() -> None:
            try:
                with self._history_lock:
                    with self._lock:
                        if self._load_saved():  # another worker read it meanwhile:
                            return  # the next last_changes() catches up from its head
                    last = self._read_history(None, head)
                    with self._lock:
                        self._take(head, last)
                        self._save(force=True)
                    del last
                memory.release()  # the read's temporaries: 100+ MB of `git log` at 200k
            except Exception:  # noqa: BLE001 - the next request tries again
                log.exception("reading the last change of every file failed")
            finally:
                with self._lock:
                    self.history_pending = False
                    self._history_thread = None
                self._notify()

        self._history_thread = threading.Thread(target=named(work), name="memoryui-lastchange",
                                                daemon=True)
        self._history_thread.start()

    def _share_paths(self, last: dict[str, LastChange]) -> dict[str, LastChange]:
        """Give the listed tree its last changes, and the map the tree's path strings (the
        history's own copies are 17 MB at 200k files; a map loaded before the listing is
        shared the other way round, in `tree()`)."""
        shared: dict[str, LastChange] = {}
        for p, info in self._tree.items():
            change = info.last = last.get(p)
            if change is not None:
                change.path = info.path
                shared[info.path] = change
        for p, change in last.items():  # paths gone from the tree keep their own
            if p not in shared:
                shared[p] = change
        return shared

    def wait_for_history(self, timeout: float | None = None) -> None:
        """Block until the background last-change computation (if any) ends (tests, CLI)."""
        t = self._history_thread
        if t is not None:
            t.join(timeout)

    def _read_history(self, since: str | None, head: str) -> dict[str, LastChange]:
        fresh: dict[str, LastChange] = {}
        changes = None
        if since is not None:
            try:
                changes = history.recent_changes(self.git.repo, since, head)
            except (KeyError, ValueError, pygit2.GitError):
                changes = None
        if changes is None:
            changes = history.last_changes(self.root, since, head)
        for path, info in changes:
            if path not in fresh:
                fresh[path] = LastChange(info["sha"], info["time"], self, path)
                if info["sha"] not in self._commits and since is not None:
                    self._commits[info["sha"]] = {k: info[k] for k in
                                                  ("author", "actor", "subject")}
        return fresh

    def _catch_up(self, head: str) -> None:
        """Take in the commits since the map's head. `git log` runs outside `_lock`, so
        pages and writers of this process go on meanwhile; the map is swapped whole."""
        with self._catch_up_lock:
            with self._lock:
                since = self._last_head
            if since == head:
                return  # another thread caught up meanwhile
            if since and not self._is_ancestor(since, head):
                since = None
            fresh = self._read_history(since, head)
            with self._lock:
                if since != self._last_head:  # reset meanwhile (a saved map was loaded)
                    return
                # Since a head: a new map on top of the old one's entries (layered.py); the
                # whole history: taken as it is, not copied (10 MB at 200k).
                merged = Layered.of(self._last).changed(fresh) if since else fresh
                self._last, self._last_head = merged, head
                if since is None:  # listed again, whole
                    self._tree = None
                    self._reset_at = self.version = self.version + 1
                    self._notify()
                else:
                    self.touch(*fresh)  # other processes' commits: re-stat these
                self._save(force=since is None)
            if since is None:
                del fresh
                memory.release()

    def _save(self, force: bool = False) -> None:
        """Write the map for a restart to catch up from, off the request path.

        A restart only needs some recent head and the paths as of it: saving 200k paths
        costs about a second, so it runs in a thread at most every LASTCHANGE_SAVE_EVERY s.
        """
        now = time.monotonic()
        if self._saving or (not force and now - self._last_saved < LASTCHANGE_SAVE_EVERY):
            return
        self._saving, self._last_saved = True, now
        head, last = self._last_head, self._last  # the map is replaced, never changed

        def work() -> None:
            try:
                lastmap.save(self.git.state_dir, head, last)
            except OSError:  # a full disk: the map is only a restart's head start
                pass
            finally:
                self._saving = False

        if force:
            work()
        else:
            threading.Thread(target=named(work), name="memoryui-lastchange-save", daemon=True).start()

    def _is_ancestor(self, a: str, b: str) -> bool:
        try:
            return a == b or self.git.repo.descendant_of(b, a)
        except (KeyError, ValueError, pygit2.GitError):
            return False

    # -- the tree -----------------------------------------------------------
    def tree(self) -> Mapping[str, FileInfo]:
        """Every file with size and last change (a changed tree is a new dict, so callers
        may cache by identity; `version` says what changed). Paths first listed are in
        byte order; paths added later are not: sort if you need order."""
        last = self.last_changes()
        with self._lock:
            small = self._tree is not None or \
                gitindex.index_size(self.git.git_dir) < SYNC_HISTORY_BELOW
            if self._want_watch and self.watcher is None:
                # A large tree's watches take a while (0.6 s at 200k files): set up in the
                # background, then one `git status` covers what changed before they were.
                self._start_watcher(wait=5.0 if small else 0.0)
            now = time.monotonic()
            if self._tree is None:
                # Small workspaces are listed exactly at once; large ones from the index,
                # with `git status` correcting it in the background (pages say so).
                with self._dirty_lock:  # touched during the listing: re-stated after
                    self._dirty.clear()
                entries = (listing.listing if small else listing.indexed)(
                    self.root, self.git.git_dir)
                tree = {}
                for p in sorted(entries):
                    size, mtime = entries[p]
                    change = last.get(p)
                    if change is not None:  # one string for the path in both maps (17 MB
                        p = change.path or p  # at 200k files)
                    tree[p] = FileInfo(p, size, mtime, change)
                self._tree = Layered(tree)
                del entries, tree
                memory.release()
                self._reset_at = self.version = self.version + 1
                if small:
                    self._checked = now
                else:
                    self._check_in_background()
            elif not self.watching and now - self._checked > TREE_TTL:
                self._check_in_background()
            if self._dirty:
                self._tree = self._restat(self._tree, last)
            return self._tree

    @property
    def large(self) -> bool:
        """Listed from git's index and checked in the background (not listed at once)."""
        return gitindex.index_size(self.git.git_dir) >= SYNC_HISTORY_BELOW

    @property
    def listed(self) -> bool:
        """The tree is held (listed once since the start or the last reset)."""
        return self._tree is not None

    def list_in_background(self) -> None:
        """List the tree in a thread (once at a time): pages about one file or scope must
        not wait for it, but they re-list their folders on every request until it is held."""
        with self._check_lock:
            if self._listing_thread is not None or self._tree is not None:
                return

            def work() -> None:
                try:
                    self.tree()
                except Exception:  # noqa: BLE001 - the next page asks again
                    log.exception("listing the tree in the background failed")
                finally:
                    self._listing_thread = None
                    self._notify()

            self._listing_thread = threading.Thread(target=named(work), name="memoryui-listing",
                                                    daemon=True)
            self._listing_thread.start()

    @property
    def watching(self) -> bool:
        """A file-system watcher reports outside edits (else `git status` must be asked)."""
        return self.watcher is not None and self.watcher.alive

    def _start_watcher(self, wait: float) -> None:
        from .watch import Watcher  # watchfiles is loaded only by servers that watch

        self.watcher = Watcher(self.root, self.touch,
                               on_ready=None if wait else lambda: self._check_in_background(
                                   again=True))
        self.watcher.start(wait)

    def _check_in_background(self, again: bool = False) -> None:
        """Run `git status` off the request path; what it names is re-stated. `again`: a
        check already running may have looked too early, so one more follows it."""
        with self._check_lock:
            if self.checking:
                self._check_again = self._check_again or again
                return
            self.checking = True
        self._checked = time.monotonic()

        def work() -> None:
            while True:
                try:
                    paths = [c.path for c in history.status(self.root)]
                    self.touch(*paths)
                except Exception:  # noqa: BLE001 - the next check tries again
                    log.exception("git status check failed")
                with self._check_lock:
                    done = not self._check_again
                    self.checking = not done
                    self._check_again = False
                if done:
                    self._notify()
                    return

        threading.Thread(target=named(work), name="memoryui-status", daemon=True).start()

    def check_now(self) -> None:
        """Run the `git status` check in this thread (tests, commands)."""
        self.touch(*(c.path for c in history.status(self.root)))
        self._checked = time.monotonic()

    def _restat(self, old: Layered[str, FileInfo], last: Mapping[str, LastChange]
                ) -> Layered[str, FileInfo]:
        """The tree with the dirty paths looked at again: a new map when one changed (on
        top of the old one's entries, `layered.py`), the same one when none did (the
        watcher's echo of a write this process already took in)."""
        with self._dirty_lock:
            dirty, self._dirty = self._dirty, set()
        put: dict[str, FileInfo] = {}
        gone: set[str] = set()

        def now(q: str) -> FileInfo | None:
            if q in put:
                return put[q]
            return None if q in gone else old.get(q)

        changed: list[str] = []
        for p in dirty:
            if not p or any(walk.hidden(part) for part in p.split("/")):
                continue
            entry = listing.entry_for(self.root, p)
            held = now(p)
            if entry is not None:
                change = last.get(p)
                if held is not None and (held.size, held.mtime) == (entry.size, entry.mtime) \
                        and held.last is change:
                    continue
                put[p] = FileInfo(p, entry.size, entry.mtime, change)
                gone.discard(p)
                changed.append(p)
                continue
            if held is not None:
                put.pop(p, None)
                gone.add(p)
                changed.append(p)
                continue
            # Not a file: a folder that appeared, moved or went away (a watcher reports
            # the folder alone). Re-list what is below it.
            prefix = p + "/"
            below = [q for q in dict.fromkeys(chain(old, put))
                     if q.startswith(prefix) and now(q) is not None]
            found = {e.path: e for e in walk.walk(self.root, p)}
            for q in below:
                put.pop(q, None)
                gone.add(q)
            for q, e in found.items():
                put[q] = FileInfo(q, e.size, e.mtime, last.get(q))
                gone.discard(q)
            changed.extend(set(below) | set(found))
        self._changed(changed)
        if not put and not gone:
            return old
        return old.changed(put, gone)

    def _changed(self, paths: Iterable[str]) -> None:
        paths = list(paths)
        if not paths:
            return
        self.version += 1
        if len(paths) > CHANGE_LOG:
            self._log.clear()
            self._reset_at = self.version
            return
        self._log.extend((self.version, p) for p in paths)
        if len(self._log) > CHANGE_LOG:
            drop = len(self._log) - CHANGE_LOG
            self._reset_at = max(self._reset_at, self._log[drop - 1][0])  # partly forgotten
            del self._log[:drop]
