"""The history and pending-change halves of `Store` (mixins): git reads made current first
(`history.py` does the reading), and the outside changes a curator commits or discards
(`pending.py` does the work)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from memoryui.caches import COMMITS
from memoryui.secrets import Guard

from . import history, names, pending
from .actors import Actor
from .blame import BlameLine, blame_lines
from .errors import Ambiguous, InvalidName, NotFound
from .gitobjects import MIN_COMMIT_ID
from .gitrepo import GitRepo
from .layout import Kind, Layout
from .pending import Committed


class HistoryReads:
    """Commits, diffs, blame and old versions (a mixin of `Store`)."""

    root: Path
    layout: Layout
    git: GitRepo

    if TYPE_CHECKING:
        def sync(self) -> None: ...

    def head(self) -> str | None:
        return self.git.head()

    def log(self, path: str | None = None, *, scope: str | None = None,
            kind: Kind | str | None = None, actor: str | None = None,
            since: str | None = None, until: str | None = None, limit: int = 50,
            offset: int = 0, with_files: bool = True, all_files: bool = False
            ) -> list[history.CommitInfo]:
        """Commits newest first. `all_files`: each commit lists every file it touches, not
        only those the filter matched (what an access check on the whole commit needs)."""
        self.sync()
        if self.head() is None:
            return []
        specs: list[str] = []
        if path:
            names.validate_relpath(path)
            specs = [f":(literal){path}"]
        elif kind or scope:
            specs = self.layout.pathspecs(kind, scope)
        return history.log(self.root, specs, actor=actor, since=since, until=until,
                           limit=limit, offset=offset, with_files=with_files,
                           all_files=all_files)

    def commit(self, sha: str, *, min_len: int = MIN_COMMIT_ID) -> history.CommitDetail | None:
        """One commit with its diff, from an id a person or client gave.

        None when no commit has that id, and for anything but `min_len`-40 hex digits
        (short ids never enumerate commits); an ambiguous prefix raises Ambiguous (400).
        Call `resolve_commit` first to tell the caller which of these it was.
        """
        try:
            full = self.resolve_commit(sha, min_len=min_len)
        except Ambiguous:
            raise
        except (NotFound, InvalidName):
            return None
        key = (str(self.root), full)
        found = COMMITS.get(key)
        if found is None:
            self.sync()
            found = history.show(self.root, full, repo=self.git.repo)
            if found is not None:
                COMMITS.put(key, found)
        return found

    def resolve_commit(self, rev: str, *, min_len: int = MIN_COMMIT_ID) -> str:
        """The full sha of a user-given commit id: `min_len`-40 hex digits, nothing else.

        Use it for every id from a URL, form or API call (`min_len=40` for clients that
        must send a full sha). Raises InvalidName (malformed or too short), Ambiguous or
        NotFound.
        """
        return self.git.resolve_commit(rev, min_len)

    def resolve(self, rev: str) -> str | None:
        """A revision (HEAD, `sha^`, a full or >= 7-digit id) as a full sha, or None.

        For internal revisions; a bare hex id shorter than MIN_COMMIT_ID digits resolves
        to None, so no path can enumerate commits with short prefixes.
        """
        base = re.split(r"[~^@:]", rev, maxsplit=1)[0] if isinstance(rev, str) else ""
        if re.fullmatch(r"[0-9a-fA-F]+", base) and len(base) < MIN_COMMIT_ID:
            return None
        try:
            return str(self.git.repo.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, TypeError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def file_at(self, path: str, rev: str) -> str | None:
        """The text of a file at a commit, or None if it did not exist there."""
        names.validate_relpath(path)
        sha = self.resolve(rev)
        if sha is None:
            raise NotFound(f"no commit {rev!r}")
        tree = self.git.repo[sha].peel(pygit2.Tree)
        try:
            obj = tree[path]
        except KeyError:
            return None
        if not isinstance(obj, pygit2.Blob):
            return None
        return obj.data.decode("utf-8", "replace")

    def diff(self, rev_a: str, rev_b: str, path: str | None = None) -> list:
        for rev in (rev_a, rev_b):
            if self.resolve(rev) is None:
                raise NotFound(f"no commit {rev!r}")
        return history.diff(self.root, rev_a, rev_b, path, repo=self.git.repo)

    def blame(self, path: str, rev: str = "HEAD") -> list[BlameLine]:
        names.validate_relpath(path)
        self.sync()
        if self.head() is None:
            return []
        lines = blame_lines(self.root, path, rev)
        actors = history.actors_of(self.root, {ln.sha for ln in lines}, self.git.repo)
        for ln in lines:
            ln.actor = actors.get(ln.sha, "uncommitted")
        return lines


class PendingChanges:
    """Files changed outside memoryui (a mixin of `Store`; `pending.py` does the work)."""

    root: Path
    layout: Layout
    git: GitRepo
    secrets: Guard

    if TYPE_CHECKING:
        def read(self, path: str) -> str | None: ...
        def sync(self) -> None: ...
        def notify(self, paths: list[str], when: float | None = None) -> None: ...

    def pending(self) -> list[history.StatusEntry]:
        """Files changed outside memoryui; `entry.refused` says why one cannot be committed."""
        return pending.pending(self)

    def owner_of(self, path: str) -> Actor:
        return pending.owner_of(self, path)

    def commit_pending(self, paths: Iterable[str] | None = None, *,
                       actor: Actor | None = None, message: str | None = None,
                       tool: str = "snapshot") -> Committed:
        """Commit outside changes (the shas; refused items are in `.refused`)."""
        wanted = None if paths is None else list(paths)
        chosen = wanted or []
        if wanted is None and self.secrets.enabled:  # what this commit takes, to re-check
            chosen = [e.path for e in self.pending()]
        done = pending.commit_pending(self, wanted, actor=actor,
                                      message=message, tool=tool)
        self.rescan_secrets(set(chosen) - {e.path for e in done.refused})
        return done

    def rescan_secrets(self, paths: Iterable[str]) -> None:
        """Flag (never refuse) secrets in files that changed on disk: pending commits, sync."""
        if not self.secrets.enabled:
            return
        with self.git.write_lock:  # the record file has one writer across processes
            for p in paths:
                try:
                    self.secrets.rescan(p, self.read(p))
                except (InvalidName, OSError):
                    continue

    def pending_versions(self, path: str) -> tuple[str | None, str | None]:
        """(HEAD's text, working text) of a pending item, by its exact path (for diffs)."""
        return pending.versions(self, path)

    def discard_pending(self, paths: Iterable[str]) -> list[str]:
        """Put files back as HEAD has them; a symbolic link is removed, never followed."""
        return pending.discard_pending(self, paths)
