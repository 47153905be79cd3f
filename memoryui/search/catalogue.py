"""The file catalogue: every file of the workspace with its place in the layout, its size and
its last commit, in the database, shared by every process of an instance.

It is the one read model of the pages (the overview, the sidebar, scope pages, the review
queue's daily logs and target names): each is a query over it, indexed by scope and kind.
How it stays current (docs/architecture.md, "The read model"):

- **Writes**: the committer process re-states the paths it commits. A write it has not
  committed yet is taken in by the next page that reads (`current`: the journaled paths
  whose rows differ from the disk), so a page never lags a write that was acknowledged,
  and the request that writes does no catalogue work. A write the worker commits itself
  (no committer runs, or a person's edit committed at once) is re-stated by the worker.
- **Commits** (the committer's, a sync's, a `git pull`, by hand): when HEAD moved from the
  commit it follows (`head`), the paths of the new commits, with their last commit.
- **Edits outside memoryui**: `scan` re-states what `git status` names (now and last time),
  in the background, at most every SCAN_EVERY seconds across processes.
- **A workspace seen for the first time**: filled once (`fill`, streamed: `catalogue_fill.py`)
  by the committer process, by a worker only when none runs; `filled` is false meanwhile.

A transaction that changes rows draws new `generations` for the scopes it touched (`""`:
shared files) and the whole catalogue (`ALL`): page memos keyed by them are never stale.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import pygit2

from memoryui.store import gitindex, history, walk
from memoryui.store.locks import ProcessLock
from memoryui.store.threadnames import named

from .catalogue_db import CatalogueDb, Cursor, SqliteCatalogueDb
from .catalogue_fill import fill_rows, row_of
from .catalogue_reads import _FIELDS, _LAST, CatalogueReads, Entry, stat_entry

__all__ = ["ALL", "Catalogue", "Entry", "stat_entry"]

if TYPE_CHECKING:
    from memoryui.store import Store

log = logging.getLogger("memoryui.search")

FILL_AT_ONCE_BELOW = 5_000  # files; a smaller workspace is catalogued before a page answers
SCAN_EVERY = 5.0  # seconds between `git status` scans for outside edits, across processes
LEAVE_FILL_FOR = 10.0  # seconds a worker leaves a first fill to a live committer process
ALL = "*"  # the generation of the whole catalogue (a scope's is its name; "": shared files)


class Catalogue(CatalogueReads):
    """The catalogue of one workspace, in `db`: kept here, read by `CatalogueReads`."""

    def __init__(self, db: CatalogueDb) -> None:
        self.db = db
        self.store: Store | None = None
        self._last_scan = 0.0
        self._filling: threading.Thread | None = None
        self._scanning = threading.Lock()
        self._unfilled_since = 0.0  # when a worker first found it unfilled, a committer alive

    @classmethod
    def of(cls, store: Store) -> Catalogue:
        """The catalogue a store's writes keep: its search index's, else one of its own in
        the workspace's state folder (a store opened without an index: commands, tests)."""
        if isinstance(store.catalogue, Catalogue):
            return store.catalogue
        found = cls(SqliteCatalogueDb(store.git.state_dir / "catalogue.sqlite3"))
        found.attach(store)
        return found

    @classmethod
    def ready(cls, store: Store) -> Catalogue | None:
        """The store's catalogue, current, for a page to read (HEAD's new commits taken in,
        a scan for outside edits started when due); None while a large one is first filled."""
        cat = cls.of(store)
        if not cat.filled and gitindex.index_size(store.git.git_dir) < FILL_AT_ONCE_BELOW:
            cat.ensure(background=False)
        return cat if cat.current() else None

    def close(self) -> None:
        self.db.close()

    # -- wiring ---------------------------------------------------------------------------
    def attach(self, store: Store) -> None:
        """Follow a store's writes; a catalogue of another workspace starts afresh."""
        self.store = store
        identity = f"{store.root}|{store.layout.key}"
        self.db.use(identity)
        store.catalogue = self
        if self.changed not in store.listeners:
            store.listeners.insert(0, self.changed)  # before the index: pages first
        if self._meta("identity") != identity:
            def reset(cur: Cursor) -> None:
                cur.execute(f"DELETE FROM {self._t}")
                cur.execute(f"DELETE FROM {self._m} WHERE key <> 'schema'")
                self._set(cur, "identity", identity)
            self.db.write(reset)

    @property
    def _m(self) -> str:
        return self.db.meta

    def _store(self) -> Store:
        if self.store is None:
            raise RuntimeError("the catalogue is not attached to a store")
        return self.store

    def _meta(self, key: str) -> str | None:
        rows = self.db.read(f"SELECT value FROM {self._m} WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def _set(self, cur: Cursor, key: str, value: str) -> None:
        cur.execute(f"INSERT INTO {self._m}(key, value) VALUES (?, ?) ON CONFLICT (key) "
                    "DO UPDATE SET value = excluded.value", (key, value))

    # -- keeping it current -----------------------------------------------------------------
    def changed(self, paths: Iterable[str], when: float | None = None) -> None:
        """The store's listener: these files changed; re-state them, then follow HEAD."""
        store = self._store()
        paths = [p for p in paths if p not in store.host_indexes]  # re-stated by their commit
        if not store.committer.hosting and (not paths or not self.filled):
            return  # the committer's to fill (a worker's own write reads nothing here)
        if not self.filled:
            self.ensure()  # the committer fills a workspace seen for the first time
            return  # the fill lists them
        if paths:
            self._restat(paths)
            self.follow()

    def take_journaled(self) -> None:
        """Re-state the journaled (not yet committed) paths whose rows differ from the
        disk: a page reads every acknowledged write even before the committer commits it."""
        store = self._store()
        if paths := sorted(store.git.journaled_paths()):
            self._restat(self.differing(store.root, paths))

    def _restat(self, paths: list[str], last: Mapping[str, dict] | None = None) -> None:
        """Stat inside the write's transaction (writers take turns): the last writer always
        records the file as it is on disk."""
        store = self._store()

        def apply(cur: Cursor) -> None:
            scopes: set[str] = set()
            for p in paths:
                e = stat_entry(store.root, p)
                if e is not None:
                    self._put(cur, store, e, None if last is None else last.get(p), scopes)
                    continue
                self._delete(cur, "path = ?", (p,), scopes)
                # a folder that came, went or moved: what is below it now
                seen = p and not any(walk.hidden(part) for part in p.split("/"))
                found = {f.path: f for f in walk.walk(store.root, p)} if seen else {}
                for (q,) in cur.execute(f"SELECT path FROM {self._t} WHERE path >= ? AND "
                                        "path < ?", (p + "/", p + "0")).fetchall():
                    if q not in found:
                        self._delete(cur, "path = ?", (q,), scopes)
                for f in found.values():
                    self._put(cur, store, f, None, scopes)
            self._summarize(cur, scopes)
        if paths:
            self.db.write(apply)

    def _delete(self, cur: Cursor, where: str, params: tuple, scopes: set[str]) -> None:
        scopes.update(s for (s,) in cur.execute(
            f"SELECT DISTINCT scope FROM {self._t} WHERE {where}", params).fetchall())
        cur.execute(f"DELETE FROM {self._t} WHERE {where}", params)

    def _summarize(self, cur: Cursor, scopes: Iterable[str]) -> None:
        """Count these scopes again (each an indexed range of its own files), and draw new
        generations for them and for the whole catalogue."""
        t, summary = self._t, self.db.scopes
        scopes = set(scopes)
        if scopes:
            for key in (ALL, *scopes):
                self._set(cur, "gen:" + key, uuid.uuid4().hex)
        for s in scopes:
            if not s:
                continue
            files, size, daily, notes = cur.execute(
                f"SELECT count(*), coalesce(sum(size), 0), "
                f"coalesce(sum(CASE WHEN kind = 'daily' THEN 1 ELSE 0 END), 0), "
                f"coalesce(sum(CASE WHEN kind = 'note' THEN 1 ELSE 0 END), 0) "
                f"FROM {t} WHERE scope = ?", (s,)).fetchone()
            if not files:
                cur.execute(f"DELETE FROM {summary} WHERE scope = ?", (s,))
                continue
            row = cur.execute(f"SELECT path FROM {t} WHERE scope = ? AND kind = 'daily' "
                              "ORDER BY name DESC LIMIT 1", (s,)).fetchone()
            last = cur.execute(f"SELECT {', '.join(_LAST)} FROM {t} WHERE scope = ? AND "
                               "sha <> '' ORDER BY time DESC, sha DESC LIMIT 1",
                               (s,)).fetchone() or ("", "", "", 0, "")
            cur.execute(f"INSERT INTO {summary} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (scope) DO UPDATE SET files = excluded.files, "
                        "size = excluded.size, daily = excluded.daily, notes = excluded.notes, "
                        "newest_daily = excluded.newest_daily, sha = excluded.sha, "
                        "author = excluded.author, actor = excluded.actor, "
                        "time = excluded.time, subject = excluded.subject",
                        (s, int(files), int(size), int(daily), int(notes),
                         row[0] if row else "", *last))

    def _put(self, cur: Cursor, store: Store, e: walk.Entry, last: dict | None,
             scopes: set[str]) -> None:
        """Write a file's row; its scope goes in `scopes` when the row changed (a row
        stated again as it was is no change: the pages' memos stay)."""
        t, row = self._t, row_of(store, e, last)
        moved = f"{t}.size <> excluded.size OR {t}.mtime_ns <> excluded.mtime_ns"
        if last is None:  # the file's commit stays what it was
            done = cur.execute(f"INSERT INTO {t}(path, scope, kind, name, size, mtime_ns) "
                               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET "
                               "size = excluded.size, mtime_ns = excluded.mtime_ns "
                               f"WHERE {moved}", row[:6])
        else:
            done = cur.execute(f"INSERT INTO {t}({_FIELDS}) VALUES "
                               "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE "
                               "SET size = excluded.size, mtime_ns = excluded.mtime_ns, "
                               "sha = excluded.sha, author = excluded.author, "
                               "actor = excluded.actor, time = excluded.time, "
                               f"subject = excluded.subject WHERE {moved} OR "
                               f"{t}.sha <> excluded.sha", row)
        if done.rowcount != 0:
            scopes.add(str(row[1]))

    def follow(self) -> None:
        """Take in the commits made since the catalogue's head (whoever made them)."""
        store = self._store()
        head = store.git.head()
        since = was = self._meta("head")
        if head is None or head == since or not self.filled:
            return
        changes: list[tuple[str, dict]] | None = None
        if since:
            try:
                if not store.git.repo.descendant_of(head, since):
                    since = None  # a rewritten branch: every path from the whole history
                else:
                    changes = history.recent_changes(store.git.repo, since, head)
            except (KeyError, ValueError, pygit2.GitError):
                since = None
        if changes is None:
            changes = list(history.last_changes(store.root, since, head))
        newest: dict[str, dict] = {}
        for path, info in changes:
            newest.setdefault(path, info)

        def apply(cur: Cursor) -> None:
            if self._read_in(cur, "head") != was:
                return  # another process took these commits in meanwhile
            scopes: set[str] = set()
            for p, info in newest.items():
                e = stat_entry(store.root, p)
                if e is None:
                    self._delete(cur, "path = ?", (p,), scopes)
                else:
                    self._put(cur, store, e, info, scopes)
            self._summarize(cur, scopes)
            self._set(cur, "head", head)
        self.db.write(apply)

    def _read_in(self, cur: Cursor, key: str) -> str | None:
        row = cur.execute(f"SELECT value FROM {self._m} WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    @property
    def filled(self) -> bool:
        """The whole workspace is in the catalogue (else a fill is under way or due)."""
        return self._meta("filled") == "1"

    def ensure(self, background: bool = True) -> bool:
        """Whether the catalogue is filled; if not, fill it (in a thread: `background`).
        A worker leaves the fill to a live committer process for LEAVE_FILL_FOR seconds,
        then fills, or finds the committer's fill done once its lock is free."""
        if self.filled:
            return True
        if not background:
            self.fill()
            return self.filled
        committer = self._store().committer
        if committer.running and not committer.hosting:
            now = time.monotonic()
            self._unfilled_since = self._unfilled_since or now
            if now - self._unfilled_since < LEAVE_FILL_FOR:
                return False
        if self._filling is None or not self._filling.is_alive():
            self._filling = threading.Thread(target=named(self._fill_quietly), daemon=True,
                                             name="memoryui-catalogue-fill")
            self._filling.start()
        return False

    def wait_for_fill(self, timeout: float | None = None) -> None:
        """Block until a fill under way in this process (if any) ends (tests, commands)."""
        if (t := self._filling) is not None:
            t.join(timeout)

    def _fill_quietly(self) -> None:  # in a thread: a failure is logged, the next page asks
        try:
            self.fill()
        except Exception:  # noqa: BLE001 - a workspace removed meanwhile is not a fault
            if self.store is not None and self.store.git.gone:
                log.warning("the workspace %s is gone: no catalogue", self.store.root)
            else:
                log.exception("filling the file catalogue failed")

    def fill(self) -> None:
        """List every file with its last commit, once (streamed): one process fills at a time."""
        store = self._store()
        with ProcessLock(store.git.state_dir / "catalogue.lock"):
            if self.filled:
                return
            head = store.git.head()
            scopes = fill_rows(self.db, store, head)

            def done(cur: Cursor) -> None:
                self._summarize(cur, scopes)
                self._set(cur, "head", head or "")
                self._set(cur, "filled", "1")
            self.db.write(done)
        # writes made while it listed: re-stated (HEAD's too, if it moved meanwhile)
        self.follow()

    def scan(self) -> list[str]:
        """Re-state what `git status` names (files changed outside memoryui) and what it
        named last time, in any process (an edit since undone); the paths looked at."""
        store = self._store()
        with self._scanning:
            if not self.ensure(background=False):
                return []
            self.follow()
            now = {c.path for c in history.status(store.root)}
            paths = sorted(now | set(filter(None, (self._meta("pending") or "").split("\n"))))
            self._restat(paths)

            def done(cur: Cursor) -> None:
                self._set(cur, "pending", "\n".join(sorted(now)))
                self._set(cur, "checked_at", str(time.time()))
            self.db.write(done)
            return paths

    def maybe_scan(self) -> None:
        """`scan` in the background, at most every SCAN_EVERY seconds across processes."""
        now = time.monotonic()
        if now - self._last_scan < SCAN_EVERY or self._scanning.locked():
            return
        self._last_scan = now
        try:
            checked = float(self._meta("checked_at") or 0)
        except ValueError:
            checked = 0.0
        if time.time() - checked < SCAN_EVERY:
            return
        threading.Thread(target=named(self._scan_quietly), name="memoryui-catalogue-scan",
                         daemon=True).start()

    def _scan_quietly(self) -> None:
        try:
            self.scan()
        except Exception:  # noqa: BLE001 - the next page asks again
            log.exception("scanning for outside changes failed")

    def current(self) -> bool:
        """Before a page reads: HEAD's new commits taken in, a scan for outside edits due,
        a fill started if none was made; whether the catalogue is filled."""
        if not self.ensure():
            return False
        self.take_journaled()
        self.follow()
        self.maybe_scan()
        return True

    # -- reading --------------------------------------------------------------------------
    def by_change(self) -> list[str]:
        """Every path, oldest change first (its last commit's time, else its stamp; the
        stamp then the path break ties): the order a search index is built in."""
        self.ensure(background=False)
        self.follow()
        rows = self.db.read(f"SELECT path, mtime_ns, time FROM {self._t}")
        return [p for p, m, t in sorted(rows, key=lambda r: (r[2] or r[1] / 1e9, r[1], r[0]))]

    def compare(self, indexed: Iterable[tuple[str, int, int]]) -> tuple[list[str], list[str]]:
        """(changed, gone): the paths whose (path, size, stamp) rows in `indexed` differ
        from the catalogue's (oldest change first), and those it no longer has. The
        catalogue scans for outside edits and takes in HEAD's commits first."""
        self.scan()
        on_disk = {p: (s, m) for p, s, m in
                   self.db.read(f"SELECT path, size, mtime_ns FROM {self._t}")}
        changed: list[tuple[int, str]] = []
        gone: list[str] = []
        for p, size, mtime in indexed:
            st = on_disk.pop(p, None)
            if st is None:
                gone.append(p)
            elif st != (size, mtime):
                changed.append((st[1], p))
        changed += [(st[1], p) for p, st in on_disk.items()]  # not indexed at all
        return [p for _, p in sorted(changed)], gone
