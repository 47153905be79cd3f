"""What was written lately, whichever process served the write: the files a search makes
current in the index before it answers.

Under a server with several workers an agent's search may reach another worker than its
write did, and the committer indexes what it commits in its own time (a busy daily log at
most every few seconds, `updater.REINDEX_EVERY`; later still while requests keep the core
busy). So a search looks at the journaled writes (not committed yet) and at the files of
the commits of the last `within` seconds, and indexes those whose index row is not the file
on disk: an agent finds what it wrote a moment ago, as it would with one process. Older
commits are the committer's to have indexed, and outside edits the catch-up scan's.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pygit2

from memoryui.store.treediff import blob_changes

from .catalogue_reads import stat_entry
from .documents import stamp

if TYPE_CHECKING:
    from memoryui.store import Store

MAX_COMMITS = 64  # newest commits looked at: a busy server makes one a second or so
# Files looked at, newest first: what a search may have to index before it answers. More
# (a sync that brought hundreds) are left to the catch-up scan, which does not hold it up.
MAX_FILES = 100


class RecentWrites:
    """The recently written files of one process's workspace. What a commit changed never
    changes, so each commit is read once (kept for the newest few hundred): a search walks
    the latest commits again at each call."""

    def __init__(self) -> None:
        # sha -> (commit time, parent sha or None for the first commit, changed paths)
        self._commits: dict[str, tuple[int, str | None, tuple[str, ...]]] = {}

    def written(self, store: Store, within: float) -> set[str]:
        """The paths of the journaled writes and of the commits of the last `within`
        seconds, newest first, up to MAX_FILES."""
        # the journal first: a batch being committed leaves it only once HEAD has its commit
        paths = set(sorted(store.git.journaled_paths())[:MAX_FILES])
        sha = store.git.head()
        since = time.time() - within
        for _ in range(MAX_COMMITS):
            if sha is None:
                break
            commit = self._commits.get(sha) or self._read(store.git.repo, sha)
            if commit is None or commit[0] < since:
                break  # a merge (a sync's arrivals: the catch-up scan's), or older
            for path in commit[2]:
                if len(paths) >= MAX_FILES:
                    return paths
                paths.add(path)
            sha = commit[1]
        return paths

    def _read(self, repo: pygit2.Repository, sha: str
              ) -> tuple[int, str | None, tuple[str, ...]] | None:
        commit = cast(pygit2.Commit, repo[sha])
        if len(commit.parent_ids) > 1:
            return None
        parent = cast(pygit2.Commit, repo[commit.parent_ids[0]]) if commit.parent_ids else None
        changes = blob_changes(parent.tree if parent else None, commit.tree, "", [])
        if changes is None:
            return None
        found = (commit.commit_time, str(parent.id) if parent else None,
                 tuple(sorted(path for path, _old, _new in changes)))
        if len(self._commits) >= 4 * MAX_COMMITS:
            self._commits.pop(next(iter(self._commits)), None)  # the one read longest ago
        self._commits[sha] = found
        return found


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
