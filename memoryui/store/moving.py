"""Writes that move or remove several files under the workspace lock held exclusive (a
rename, a folder's removal or rename, a restore): each file journaled, then finished by
the write primitive's `_finish`, so they answer with their commit like any write."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from . import lookalike, names, walk
from .actors import Actor
from .errors import Conflict, InvalidName, NotFound
from .files import atomic_write, prune_empty_dirs
from .records import Record
from .room import ensure_room
from .writing import DELETE, WriteResult, Writing, _pairs


class Moving(Writing):
    """Renames, folder operations and restores (a mixin of `Store`)."""

    if TYPE_CHECKING:  # (Store and its history reads give these)
        def list_files(self, prefix: str = "") -> list[str]: ...
        def file_at(self, path: str, rev: str) -> str | None: ...
        def resolve(self, rev: str) -> str | None: ...

    def rename(self, old: str, new: str, *, actor: Actor, tool: str,
               message: str | None = None, trailers: Iterable[tuple[str, str]] = ()
               ) -> WriteResult:
        src, dst = self.abspath(old), self.abspath(new)
        lookalike.check_new(self.root, new, ignore=old)
        extra = _pairs(trailers)
        with self.git.write_lock:
            data = walk.read_nofollow(self.root, old)
            if data is None:
                raise NotFound(f"{old} does not exist")
            if dst.exists():
                raise Conflict(f"{new} already exists", path=new, current=None, version=None)
            ensure_room(self.root, 2 * len(data))  # (as in update)
            blob = self.git.create_blob(data)
            atomic_write(dst, data)
            src.unlink()
            prune_empty_dirs(src.parent, self.root)
            r1 = Record(old, None, actor, tool, message, extra)
            r2 = Record(new, blob, actor, tool, message, extra)
            self.git.record(r1)
            self.git.record(r2)
            self.secrets.moved(old, new)
        return self._finish(WriteResult(new, data, True, created=True), r2, [old, new])

    def delete_tree(self, prefix: str, *, actor: Actor, tool: str,
                    message: str | None = None, trailers: Iterable[tuple[str, str]] = ()
                    ) -> list[str]:
        """Remove every file below a folder in one commit (Dagu's DELETE of a DAG)."""
        paths = self.list_files(prefix)
        if not paths:
            return []
        extra = _pairs(trailers)
        with self.git.write_lock:
            ensure_room(self.root, 0)  # (as in update)
            for p in paths:
                full = self.abspath(p)
                full.unlink(missing_ok=True)
                prune_empty_dirs(full.parent, self.root)
                last = Record(p, None, actor, tool, message, extra)
                self.git.record(last)
                self.secrets.written(p, None, None, [])
        self._finish(WriteResult(prefix, None, True, deleted=True), last, paths)
        return paths

    def rename_tree(self, old_prefix: str, new_prefix: str, *, actor: Actor, tool: str,
                    message: str | None = None, trailers: Iterable[tuple[str, str]] = ()
                    ) -> list[tuple[str, str]]:
        """Move every file below a folder to another folder in one commit (a folder rename).

        Refuses (Conflict) before moving anything when a destination file exists.
        """
        old_prefix, new_prefix = old_prefix.rstrip("/"), new_prefix.rstrip("/")
        names.validate_relpath(old_prefix)
        names.validate_relpath(new_prefix)
        if new_prefix == old_prefix or new_prefix.startswith(old_prefix + "/"):
            raise InvalidName(f"cannot move {old_prefix} into itself")
        extra = _pairs(trailers)
        with self.git.write_lock:
            moves = [(p, new_prefix + p[len(old_prefix):]) for p in self.list_files(old_prefix)]
            if not moves:
                raise NotFound(f"{old_prefix} has no files")
            for _src, dst in moves:
                lookalike.check_new(self.root, dst, ignore=old_prefix)
                if self.abspath(dst).exists():
                    raise Conflict(f"{dst} already exists", path=dst, current=None,
                                   version=None)
            ensure_room(self.root, 0)  # (as in update)
            for src, dst in moves:
                s, d = self.abspath(src), self.abspath(dst)
                data = walk.read_nofollow(self.root, src) or b""
                blob = self.git.create_blob(data)
                atomic_write(d, data)
                s.unlink()
                prune_empty_dirs(s.parent, self.root)
                self.git.record(Record(src, None, actor, tool, message, extra))
                last = Record(dst, blob, actor, tool, message, extra)
                self.git.record(last)
                self.secrets.moved(src, dst)
        self._finish(WriteResult(new_prefix, None, True, created=True), last,
                     [p for pair in moves for p in pair])
        return moves

    def restore(self, path: str, rev: str, *, actor: Actor, message: str | None = None,
                expect: str | None = None) -> WriteResult:
        """Bring an old version back as a new commit (history is never rewritten)."""
        old = self.file_at(path, rev)
        sha = self.resolve(rev) or rev
        msg = message or f"restore: {path} as of {sha[:8]}"
        trailers = [("Restored-From", sha)]
        if old is None:
            return self.update(path, lambda _o: DELETE, actor=actor, tool="restore",
                               message=msg, expect=expect, trailers=trailers)
        return self.write(path, old, actor=actor, tool="restore", message=msg, expect=expect,
                          trailers=trailers)
