"""What was written lately, whichever process served the write: the files a search makes
current in the index before it answers.

Under a server with several workers an agent's search may reach another worker than its
write did, and the committer indexes what it commits in its own time (a busy daily log at
most every few seconds, `updater.REINDEX_EVERY`; later still while requests keep the core
busy). So a search looks at the journaled writes (not committed yet) and at what moved the
branch in the last `within` seconds, and indexes the files whose index row is not the file
on disk: an agent finds what it wrote a moment ago, as it would with one process.

What moved the branch is read from its reflog, which git appends to at every move with the
time of the move: memoryui's commits, and also a sync's merge or fast-forward and a host's
push, whose commits carry the times they were made elsewhere. Each move's files are the
difference of its two trees. A repository that keeps no reflog for the branch
(`core.logAllRefUpdates` false) is walked by its commits instead, first parents only, up to
the first merge or the first commit older than the window. Older moves are the committer's
to have indexed, and outside edits the catch-up scan's.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import pygit2

from memoryui.store.treediff import blob_changes

from .catalogue_reads import stat_entry
from .documents import stamp

if TYPE_CHECKING:
    from memoryui.store import Store

MAX_MOVES = 64  # newest moves of the branch looked at: a busy server makes one a second or so
REFLOG_TAIL = 32 * 1024  # bytes of the reflog's end read: well over MAX_MOVES lines
# Files looked at, newest first: what a search may have to index before it answers. More
# (a sync that brought hundreds) are left to the catch-up scan, which does not hold it up.
MAX_FILES = 100

Move = tuple[int, str, str]  # a move of the branch: (its time, the old tip, the new tip)
K = TypeVar("K")
V = TypeVar("V")


class RecentWrites:
    """The recently written files of one process's workspace. What a move of the branch
    changed never changes, so each move is read once (kept for the newest few hundred), and
    the reflog's end is read again only once it has changed: a search looks at the latest
    moves again at each call. Searches in several threads share it, one at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reflog: tuple[tuple[int, int], list[Move]] | None = None  # (size, mtime): moves
        self._moves: dict[tuple[str, str], tuple[str, ...] | None] = {}  # (old, new) -> paths
        # sha -> (commit time, parent sha or None for the first commit, changed paths)
        self._commits: dict[str, tuple[int, str | None, tuple[str, ...]]] = {}

    def written(self, store: Store, within: float) -> set[str]:
        """The paths of the journaled writes and of the branch's moves of the last `within`
        seconds, newest first, up to MAX_FILES."""
        # the journal first: a batch being committed leaves it only once HEAD has its commit
        paths = set(sorted(store.git.journaled_paths())[:MAX_FILES])
        since = time.time() - within
        reflog = store.git.git_dir / "logs" / store.git.branch_ref()
        with self._lock:
            moves = self._last_moves(reflog)
            if moves is None:
                self._walk(store, since, paths)
                return paths
            repo = store.git.repo
            for when, old, new in moves:
                if when < since:
                    break
                changed = self._moved(repo, old, new)
                if changed is None:
                    break  # a move of hundreds of files (a sync's): the catch-up scan's
                if not _add(paths, changed):
                    break
        return paths

    def _last_moves(self, reflog: Path) -> list[Move] | None:
        try:
            st = os.stat(reflog)
        except OSError:
            return None
        key = (st.st_size, st.st_mtime_ns)
        if self._reflog is None or self._reflog[0] != key:
            moves = last_moves(reflog)
            if moves is None:
                return None
            self._reflog = (key, moves)
        return self._reflog[1]

    def _moved(self, repo: pygit2.Repository, old: str, new: str) -> tuple[str, ...] | None:
        key = (old, new)
        if key not in self._moves:
            _keep(self._moves, key, _changed(repo, old, new))
        return self._moves[key]

    def _walk(self, store: Store, since: float, paths: set[str]) -> None:
        """Without a reflog: the files of the branch's own latest commits."""
        sha = store.git.head()
        for _ in range(MAX_MOVES):
            if sha is None:
                break
            commit = self._commits.get(sha) or self._read(store.git.repo, sha)
            if commit is None or commit[0] < since:
                break  # a merge (a sync's arrivals: the catch-up scan's), or older
            if not _add(paths, commit[2]):
                break
            sha = commit[1]

    def _read(self, repo: pygit2.Repository, sha: str
              ) -> tuple[int, str | None, tuple[str, ...]] | None:
        commit = cast(pygit2.Commit, repo[sha])
        if len(commit.parent_ids) > 1:
            return None
        parent = str(commit.parent_ids[0]) if commit.parent_ids else None
        changed = _changed(repo, parent, sha)
        if changed is None:
            return None
        found = (commit.commit_time, parent, changed)
        _keep(self._commits, sha, found)
        return found


def _keep(memo: dict[K, V], key: K, value: V) -> None:
    """Keep `value` under `key` among the newest few hundred: the one kept longest goes."""
    if len(memo) >= 4 * MAX_MOVES:
        memo.pop(next(iter(memo)), None)
    memo[key] = value


def _add(paths: set[str], changed: Iterable[str]) -> bool:
    """Add `changed` to `paths` while they number under MAX_FILES; False once they do."""
    for path in changed:
        if len(paths) >= MAX_FILES:
            return False
        paths.add(path)
    return True


def _changed(repo: pygit2.Repository, old: str | None, new: str) -> tuple[str, ...] | None:
    """The files that differ between two commits' trees (`old` None or all zeros: none
    before); None when that is not a plain list of a few hundred files, or a commit is
    missing."""
    try:
        before = repo[old].peel(pygit2.Tree) if old and old.strip("0") else None
        after = repo[new].peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    changes = blob_changes(before, after, "", [])
    return None if changes is None else tuple(sorted(path for path, _old, _new in changes))


def last_moves(reflog: Path) -> list[Move] | None:
    """(time, old, new) of the branch's last MAX_MOVES moves, newest first, from the end of
    its reflog (git's "<old> <new> <who> <time> <zone>\t<why>" lines); None when there is
    no reflog."""
    try:
        with open(reflog, "rb") as fh:
            start = max(0, fh.seek(0, os.SEEK_END) - REFLOG_TAIL)
            fh.seek(start)
            lines = fh.read().split(b"\n")
    except OSError:
        return None
    moves: list[Move] = []
    for line in reversed(lines[1:] if start else lines):  # (a first line cut in two)
        old, _, rest = line.partition(b" ")
        new, _, rest = rest.partition(b" ")
        when = rest.partition(b"\t")[0].rsplit(b" ", 2)
        if len(when) < 3 or not when[1].isdigit():
            continue  # the empty last line, or not a reflog line
        moves.append((int(when[1]), old.decode("ascii", "replace"),
                      new.decode("ascii", "replace")))
        if len(moves) >= MAX_MOVES:
            break
    return moves


def behind(root: Path, paths: Iterable[str], held: Mapping[str, tuple[int, int]]) -> list[str]:
    """The paths whose (size, stamp) on disk is not what the index holds (`held`), a file
    gone or no longer readable (a link, a hidden name) included when the index has it."""
    out = []
    for path in sorted(paths):
        entry = stat_entry(root, path)
        now = None if entry is None else (entry.size, stamp(entry.mtime))
        if now != held.get(path):
            out.append(path)
    return out
