"""Keeping git's index truthful beside the commit engine, and the lock files a crashed git
process leaves behind.

memoryui commits without the index (see `gitrepo`), then stages exactly the paths it
committed (`refresh_index`), so `git status` shows only what changed outside memoryui. A
refresh that finds the index busy notes its paths and the next flush retries them.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path

import pygit2

from . import gitindex, walk
from .errors import InvalidName
from .gitobjects import GitObjects

log = logging.getLogger("memoryui.store")

STALE_LOCK_SECONDS = 10.0


class Staging(GitObjects):
    """The index part of `GitRepo`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.index_stale = self.state_dir / "index-stale.jsonl"  # paths a refresh missed

    def repair(self, holding_since: float | None = None) -> list[str]:
        """Remove lock files a crashed git process left behind.

        Under the commit lock (`holding_since` = when we got it), a lock file older than
        that moment and older than a second was left by a committer that died holding the
        lock (the kernel releases our flock, not git's lock files). Otherwise only locks
        older than STALE_LOCK_SECONDS are taken as stale, to spare a person's running git.
        """
        removed = []
        candidates = [self.git_dir / "index.lock", self.git_dir / "HEAD.lock"]
        candidates += list((self.git_dir / "refs" / "heads").glob("*.lock"))
        now = time.time()
        for lock in candidates:
            try:
                mtime = lock.stat().st_mtime
                dead_committer = (holding_since is not None and mtime < holding_since
                                  and now - mtime > 1.0)
                if dead_committer or now - mtime > STALE_LOCK_SECONDS:
                    lock.unlink()
                    removed.append(str(lock.relative_to(self.root)))
                    log.warning("removed stale git lock %s", lock)
            except FileNotFoundError:
                pass
        return removed

    def refresh_index(self, paths: set[str] | list[str],
                      committed: dict[str, tuple[str, bytes | None] | None] | None = None
                      ) -> None:
        """Stage exactly the touched paths as they are on disk, so status stays truthful.

        `committed` (a tick's: path -> (blob, its bytes when known)) stages a file that
        has moved on since its commit (an agent appended meanwhile) at its committed
        version, as a sync stages what it brought: git would otherwise write the newer
        bytes as a blob no commit ever holds (one per busy log and tick, never removed),
        and a person's `git commit` would take the agents' uncommitted entries as theirs.
        A path that is (or goes through) a symbolic link is taken out of the index, never
        staged: memoryui does not follow links, so it never records what they point to.
        """
        if not paths:
            return
        files: list[str] = []
        gone: list[str] = []
        ahead: list[tuple[int, str, str]] = []
        for path in sorted(paths):
            try:
                regular = walk.link_in_path(self.root, path) is None and \
                    (self.root / path).is_file()
            except (OSError, ValueError):
                regular = False
            item = committed.get(path) if regular and committed else None
            if item is not None and not self._on_disk_is(path, *item):
                ahead.append((0o100644, item[0], path))  # (its stat stays unknown to git)
            else:
                (files if regular else gone).append(path)
        try:
            gitindex.stage(self.root, files=files, entries=ahead, remove=gone)
        except gitindex.IndexBusy as exc:
            log.warning("index not refreshed: %s", exc)
            self.index_missed(paths)

    def index_missed(self, paths: Iterable[str]) -> None:
        """Another git process held the index (a `git status` refreshing it, or a killed
        writer's lock) while these paths were to be staged: the next flush stages them at
        HEAD's version (`_retry_index`), once the lock is gone or repaired. Until then
        `git status` would show them as changed, and a person's `git commit` would revert
        what they hold."""
        with open(self.index_stale, "a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(p) + "\n" for p in sorted(paths)))

    def _on_disk_is(self, path: str, blob: str, data: bytes | None) -> bool:
        """The file is still that version: by its size when the bytes are known (a log an
        agent appended to has grown; one of the same size is staged as it is, which git
        then hashes anyway), else by hashing it."""
        try:
            if data is not None:
                return os.stat(self.root / path).st_size == len(data)
            disk = walk.read_nofollow(self.root, path)
        except (OSError, ValueError, InvalidName):
            return False
        return disk is not None and self.blob_id(disk) == blob

    def _retry_index(self) -> None:
        """Refresh the entries a failed index write left stale (see refresh_index), at
        the version HEAD has for each (a file that moved on since is staged at it)."""
        try:
            lines = self.index_stale.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        self.index_stale.unlink(missing_ok=True)
        paths = set()
        for line in lines:
            try:
                path = json.loads(line)
            except ValueError:
                continue
            if isinstance(path, str) and "\0" not in path:  # (libgit2 stops at a NUL)
                paths.add(path)
        tree = self.head_tree()
        committed: dict[str, tuple[str, bytes | None] | None] = {}
        for path in paths:
            try:
                entry = tree[path] if tree is not None else None
            except KeyError:
                entry = None
            if entry is not None and entry.filemode == pygit2.enums.FileMode.BLOB:
                committed[path] = (str(entry.id), None)
        self.refresh_index(paths, committed)
