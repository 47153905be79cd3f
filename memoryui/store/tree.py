"""The read model of the working tree: every file with its size and last commit.

Kept current without re-walking: a full walk (the store's one walker) stats all files
(about 100-300 ms at 20k files), so it happens once and then every TREE_TTL seconds to
catch edits made outside memoryui; in between only the paths this process wrote and the
paths in new commits (from HEAD's advance) are re-stated. The last-change map follows
HEAD incrementally and is saved so a restart only catches up from where it was.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from . import history, walk
from .gitrepo import GitRepo
from .layout import Address, Layout

TREE_TTL = 60.0  # seconds between full re-walks that catch changes made outside memoryui
LASTCHANGE_SAVE_EVERY = 30.0  # seconds between saves of the last-change cache file


@dataclass
class FileInfo:
    path: str
    address: Address | None
    size: int
    mtime: float
    last: dict | None = None  # sha, author, actor, time, subject of the last commit


class TreeModel:
    """The cached tree and last-change map of one workspace (shared by its threads)."""

    def __init__(self, root: Path, layout: Layout, git: GitRepo):
        self.root, self.layout, self.git = root, layout, git
        self._tree: dict[str, FileInfo] | None = None
        self._tree_walked = 0.0
        self._dirty: set[str] = set()
        self._last: dict[str, dict] = {}
        self._last_head: str | None = None
        self._last_saved = 0.0  # time.monotonic() of the last lastchange.json save
        self._lock = threading.RLock()

    def touch(self, *paths: str) -> None:
        """Mark paths this process changed, so the cached tree re-stats just those."""
        with self._lock:
            self._dirty.update(paths)

    def invalidate(self) -> None:
        """Forget the cached tree: the next `tree()` walks the whole workspace again."""
        with self._lock:
            self._tree = None

    def last_changes(self) -> dict[str, dict]:
        """path -> the last commit that touched it, kept current incrementally by HEAD."""
        head = self.git.head()
        with self._lock:
            if head == self._last_head:
                return self._last
            cache_file = self.git.state_dir / "lastchange.json"
            if self._last_head is None and cache_file.exists():
                try:
                    saved = json.loads(cache_file.read_text())
                    self._last, self._last_head = saved["paths"], saved["head"]
                except (ValueError, KeyError):
                    self._last, self._last_head = {}, None
            if head is None:
                self._last, self._last_head = {}, None
                return self._last
            if head == self._last_head:
                return self._last
            since = self._last_head
            if since and not self._is_ancestor(since, head):
                since, self._last = None, {}
            fresh: dict[str, dict] = {}
            for path, info in history.last_changes(self.root, since, head):
                fresh.setdefault(path, info)
            if since:
                self._dirty.update(fresh)  # other processes' commits: re-stat these
            else:
                self._tree = None
            merged = dict(self._last) if since else {}
            merged.update(fresh)
            self._last, self._last_head = merged, head
            # The file only gives a restart a head to catch up from: saving all paths on
            # every commit cost ~100 ms per request on a 20k-file workspace.
            now = time.monotonic()
            if since is None or now - self._last_saved >= LASTCHANGE_SAVE_EVERY:
                tmp = cache_file.with_suffix(".tmp")
                try:
                    tmp.write_text(json.dumps({"head": head, "paths": merged}))
                    os.replace(tmp, cache_file)
                    self._last_saved = now
                except OSError:  # a full disk: the cache is only a restart's head start
                    tmp.unlink(missing_ok=True)
            return self._last

    def _is_ancestor(self, a: str, b: str) -> bool:
        try:
            return a == b or self.git.repo.descendant_of(b, a)
        except (KeyError, ValueError, pygit2.GitError):
            return False

    def tree(self) -> dict[str, FileInfo]:
        """Every file with size and last change (a changed tree is a new dict, so callers
        may cache by identity)."""
        last = self.last_changes()
        with self._lock:
            now = time.monotonic()
            if self._tree is None or now - self._tree_walked > TREE_TTL:
                address = self.layout.address
                self._tree = {
                    e.path: FileInfo(e.path, address(e.path), e.size, e.mtime, last.get(e.path))
                    for e in sorted(walk.walk(self.root), key=lambda e: e.path)
                }
                self._tree_walked = now
                self._dirty.clear()
            elif self._dirty:
                self._tree = self._restat(self._tree, last)
            return self._tree

    def _restat(self, old: dict[str, FileInfo], last: dict[str, dict]) -> dict[str, FileInfo]:
        tree = dict(old)
        added = False
        for p in self._dirty:
            if any(walk.hidden(part) for part in p.split("/")):
                continue
            try:
                st = os.lstat(self.root / p)
            except (FileNotFoundError, NotADirectoryError):
                tree.pop(p, None)
                continue
            if stat.S_ISREG(st.st_mode) and walk.link_in_path(self.root, p) is None:
                added = added or p not in tree
                tree[p] = FileInfo(p, self.layout.address(p), st.st_size, st.st_mtime,
                                   last.get(p))
            else:
                tree.pop(p, None)
        self._dirty.clear()
        return dict(sorted(tree.items())) if added else tree
