"""The one write primitive: a file's new version made durable, journaled, and answered with
the commit that holds it (or, when the committer commits it later, the handle that names it).

`Writing.update` is where every single-file write goes: a whole file replaced, a file
removed, and an entry appended to a log (tried in place first, without reading the log: see
`appending.py`). Each ends in `_finish`, which asks the committer for the commit and tells
the tree model and the listeners. `WriteResult.commit` is the sha when the write was
committed before it returned; otherwise `WriteResult.record` is its journal record id, which
`Store.commit_for` turns into the commit once a tick has made it (`committed.py`).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memoryui.secrets import Guard

from . import committed, journaled, lookalike, names, walk
from .actors import Actor
from .appending import MAX_FILE_BYTES, append_entry
from .appends import sync_appended
from .committer import Committer
from .errors import Conflict, NotFound, SecretFound, TooLarge
from .files import disk_errors, fsync_dir, prune_empty_dirs
from .gitrepo import GitRepo
from .records import Record
from .room import ensure_room

ABSENT = "absent"  # an `expect` value: the file must not exist yet
DELETE = object()  # returned by an update function: remove the file
COMMIT_POLL = 0.05  # seconds between looks for a deferred write's commit


def version_of(data: bytes | str | None) -> str | None:
    """The content version used for ETags and stale-edit checks: sha256 of the bytes."""
    if data is None:
        return None
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


@dataclass
class WriteResult:
    """What a write did, and where it is committed: `commit` (a sha) when it was committed
    before the write returned, else `record` (its journal record id) names the commit the
    committer makes for it (`Store.commit_for`). Both empty when nothing changed."""

    path: str
    data: bytes | None = field(repr=False)  # the new content, None when deleted
    changed: bool
    created: bool = False
    deleted: bool = False
    commit: str | None = None
    record: str = ""

    @cached_property
    def text(self) -> str | None:
        """The new content as text (None when deleted)."""
        return None if self.data is None else self.data.decode("utf-8", "replace")

    @cached_property
    def version(self) -> str | None:
        """sha256 of the new content (None when deleted), asked for by the file API, not by
        agents' appends (a quarter of an append's CPU on a 500 KB log)."""
        return version_of(self.data)

    @classmethod
    def appended(cls, path: str, read: Callable[[], bytes]) -> WriteResult:
        """An entry's result: the log is not read for it (see lognote); `data` reads the
        version back when someone asks."""
        result = cls(path, None, True)
        del result.data
        result.__dict__["_read"] = read
        return result

    def __getattr__(self, name: str) -> object:
        """`data` of an `appended` result, read at the first ask."""
        if name == "data" and "_read" in self.__dict__:
            self.data = self.__dict__.pop("_read")()
            return self.data
        raise AttributeError(name)


def _existing(folder: Path, root: Path) -> Path:
    """The nearest folder still there (a delete may have pruned empty ones)."""
    while folder != root and not folder.is_dir():
        folder = folder.parent
    return folder


def _pairs(trailers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Trailers as a list of pairs (they are read twice: the checks and the record)."""
    return [(str(k), str(v)) for k, v in trailers]


class Shorthands:
    """`write`, `append` and `delete` as updates: one definition for the store and for an
    agent's view of it (store/agentview.py), each with its own `update` and `exists`."""

    if TYPE_CHECKING:
        def update(self, path: str, fn: Callable[[str | None], object], *, actor: Actor,
                   tool: str, message: str | None = None, expect: str | None = None,
                   trailers: Iterable[tuple[str, str]] = (), when: float | None = None,
                   entry: str | None = None) -> WriteResult: ...
        def exists(self, path: str) -> bool: ...

    def delete(self, path: str, *, actor: Actor, tool: str, message: str | None = None,
               expect: str | None = None, missing_ok: bool = False,
               trailers: Iterable[tuple[str, str]] = ()) -> WriteResult:
        if not self.exists(path):
            if missing_ok:
                return WriteResult(path, None, False)
            raise NotFound(f"{path} does not exist")
        return self.update(path, lambda _old: DELETE, actor=actor, tool=tool, message=message,
                           expect=expect, trailers=trailers)

    def write(self, path: str, text: str, *, actor: Actor, tool: str,
              message: str | None = None, expect: str | None = None,
              trailers: Iterable[tuple[str, str]] = (), when: float | None = None
              ) -> WriteResult:
        """Replace a whole file atomically (a stale `expect` raises Conflict)."""
        return self.update(path, lambda _old: text, actor=actor, tool=tool, message=message,
                           expect=expect, trailers=trailers, when=when)

    def append(self, path: str, text: str, *, actor: Actor, tool: str,
               header: str | None = None, message: str | None = None,
               trailers: Iterable[tuple[str, str]] = (), when: float | None = None
               ) -> WriteResult:
        """Append `text`; `header` is written only into a new/empty file."""
        def add(old: str | None) -> str:
            return (header or "") + text if not old else old + text
        return self.update(path, add, actor=actor, tool=tool, message=message,
                           trailers=trailers, when=when, entry=text)


class Writing(Shorthands):
    """The write half of `Store` (a mixin: `Store` gives it the workspace's parts)."""

    root: Path
    git: GitRepo
    secrets: Guard
    committer: Committer
    host_indexes: set[str]

    if TYPE_CHECKING:
        def abspath(self, path: str) -> Path: ...
        def exists(self, path: str) -> bool: ...
        def notify(self, paths: list[str], when: float | None = None) -> None: ...

    def update(self, path: str, fn: Callable[[str | None], object], *, actor: Actor,
               tool: str, message: str | None = None, expect: str | None = None,
               trailers: Iterable[tuple[str, str]] = (), when: float | None = None,
               entry: str | None = None) -> WriteResult:
        """Read-modify-write under the workspace lock shared, the file's own lock held: the
        one write primitive.

        `fn(old_text)` returns the new text, None for "no change", or DELETE. `when`
        backdates the author time (demo data, imports). `entry`: `fn` appends exactly this
        text, which then goes in without reading the log when it can (`append_entry`).
        """
        trailers = _pairs(trailers)
        if entry is not None and expect is None:
            done = append_entry(self.root, self.git, self.secrets, path, entry, actor=actor,
                                tool=tool, message=message, trailers=trailers, when=when)
            if done is not None:
                rec, length = done
                root = self.root
                result = WriteResult.appended(
                    path, lambda: (walk.read_nofollow(root, path) or b"")[:length])
                return self._finish(result, rec)
        full = self.abspath(path)
        appended = None  # an in-place append's descriptor, synced once the locks are let go
        try:
            # Shared with writers of other files (an fsync here never holds them up); the
            # path lock orders the writers of this one.
            with self.git.write_lock.shared(), self.git.path_lock(path):
                old_bytes = walk.read_nofollow(self.root, path)
                old = None if old_bytes is None else old_bytes.decode("utf-8", "replace")
                self._check_expect(path, old, old_bytes, expect)
                new = fn(old)
                if new is None or (new is not DELETE and old is not None and new == old):
                    return WriteResult(path, old_bytes, False)
                added: list = []
                base = None
                data: bytes | None = None
                blob: str | None = None
                if new is not DELETE:
                    if not isinstance(new, str):
                        raise TypeError("update functions return str, None or DELETE")
                    lookalike.check_new(self.root, path, created=old_bytes is None)
                    data = names.validate_text(new, old).encode()
                    if len(data) > MAX_FILE_BYTES:
                        raise TooLarge(f"{path} would be {len(data)} bytes; the limit is "
                                       f"{MAX_FILE_BYTES} bytes")
                    machine = actor.kind == "agent" or \
                        any(k == "Memoryui-Token" for k, _v in trailers)
                    added = self.secrets.check(path, old, new,
                                               "agent" if machine else actor.kind, SecretFound)
                    # Its blob is made when it is committed (records.Record.data).
                    blob = self.git.blob_id(data)
                    if old_bytes and data.startswith(old_bytes):
                        base = len(old_bytes)  # journaled as its appended bytes only
                rec = Record(path, blob, actor, tool, message, trailers, time=when or 0.0,
                             data=data if base is None or data is None else data[base:],
                             base=base)
                # Room for the file, its record and its commit; else a 507, nothing touched.
                ensure_room(self.root, 2 * len(data or b""))
                if data is None:
                    journaled.remove(full, lambda: self.git.record(rec))
                    prune_empty_dirs(full.parent, self.root)
                else:  # an append goes in place (its sync after the locks: sync_appended)
                    appended = journaled.write(full, path, data, old_bytes,
                                               lambda: self.git.record(rec))
                self.secrets.written(path, old, None if data is None else str(new), added)
        except BaseException:
            if appended is not None:
                os.close(appended)
            raise
        if appended is not None:
            sync_appended(appended)
        else:  # a new name (or one removed) lasts once its folder is synced
            with disk_errors():
                fsync_dir(full.parent if data is not None else _existing(full.parent, self.root))
        result = WriteResult(path, data, True, created=old is None, deleted=data is None)
        return self._finish(result, rec)

    def _finish(self, result: WriteResult, rec: Record,
                paths: list[str] | None = None) -> WriteResult:
        """After a journaled write is durable: its commit (now, or the record id the
        committer's commit will be found by), and the cached tree and the listeners told."""
        result.record = rec.id
        result.commit = self.committer.after_write(rec.id)
        if paths is None:
            # (a dead committer's writes are committed by a stand-in here, which lets go of them)
            if result.commit is None and self.committer.hosted:
                self.host_indexes.add(result.path)
            else:
                self.host_indexes.discard(result.path)
        self.notify(paths or [result.path], when=rec.time)
        return result

    def commit_for(self, write: WriteResult | str, *, wait: float = 0.0,
                   or_commit: bool = False) -> str | None:
        """The commit that holds a write (its result, or its record id): the one it was
        committed in, else the one the committer noted for its record, looked for until
        `wait` seconds have passed; None while it still waits. History is never searched.

        `or_commit`: a write still waiting after `wait` is committed now, with whatever
        else is journaled (for a caller that must record the sha: a promotion's ledger
        row, a resolved sync conflict)."""
        if isinstance(write, WriteResult):
            if write.commit or not write.record:
                return write.commit
            write = write.record
        deadline = time.monotonic() + wait
        while True:
            sha = committed.find(self.git.state_dir, write)
            if sha is not None:
                return sha
            if time.monotonic() >= deadline:
                break
            time.sleep(COMMIT_POLL)
        if not or_commit:
            return None
        return self.git.flush().get(write) or committed.find(self.git.state_dir, write)

    def _check_expect(self, path: str, old: str | None, old_bytes: bytes | None,
                      expect: str | None) -> None:
        if expect is None:
            return
        current = version_of(old_bytes)
        if expect == ABSENT:
            if old_bytes is not None:
                raise Conflict(f"{path} already exists", path=path, current=old,
                               version=current)
            return
        if current != expect:
            what = "was deleted" if old_bytes is None else "changed"
            raise Conflict(f"{path} {what} since you loaded it", path=path, current=old,
                           version=current)
