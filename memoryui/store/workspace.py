"""The workspace: one object that every tool, view and command writes and reads through.

This module holds the core: paths, reads, the one write primitive (`update`) and the
commit cadence. Pending changes live in `pending.py`, git reads in `history.py`; `Store`
keeps their public methods as thin delegates so `from memoryui.store import Store` is all
a caller needs. What pages read (every file, its size and last commit) is the file
catalogue, kept by the store's listeners (`memoryui.search.catalogue`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
import weakref
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pygit2

from memoryui.secrets import Guard

from . import history, journaled, lognote, lookalike, names, pending, walk
from .actors import Actor
from .blame import BlameLine, blame_lines
from .committer import Committer
from .errors import Ambiguous, Conflict, InvalidName, NotFound, SecretFound, TooLarge
from .files import (
    ProcessLock,
    append_at,
    append_by_copy,
    atomic_write,
    crosses_page,
    disk_errors,
    fsync_dir,
    prune_empty_dirs,
    sync_appended,
    sync_replaced,
)
from .gitrepo import MIN_COMMIT_ID, GitRepo
from .layout import Address, Kind, Layout, get_layout
from .records import Record
from .room import ensure_room

log = logging.getLogger("memoryui.store")

MAX_FILE_BYTES = 4 * 1024 * 1024
ABSENT = "absent"  # an `expect` value: the file must not exist yet
DELETE = object()  # returned by an update function: remove the file
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,150}")  # passes validate_relpath


def version_of(data: bytes | str | None) -> str | None:
    """The content version used for ETags and stale-edit checks: sha256 of the bytes."""
    if data is None:
        return None
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


@dataclass
class WriteResult:
    path: str
    data: bytes | None = field(repr=False)  # the new content, None when deleted
    changed: bool
    created: bool = False
    deleted: bool = False
    commit: str | None = None

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
        result._read = read  # type: ignore[attr-defined]
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


class Store:
    """A git-backed memory workspace with one layout.

    `commit_delay=0` commits before each write returns; a positive delay lets a
    background thread group writes into commits every `commit_delay` seconds (what the
    server uses for agent traffic), while `flush()` forces a commit at once. While a
    committer process is alive on the workspace (`host_commits`, committer.py) its thread
    makes those commits and this store only stands in for it.
    """

    def __init__(self, root: str | os.PathLike[str], layout: str | Layout = "duragent",
                 *, commit_delay: float = 0.0, secrets: str = "block"):
        self.root = Path(root).resolve()
        self.layout = get_layout(layout)
        self.git = GitRepo(self.root)
        # Secrets policy (memoryui/secrets): block|flag|off; the flagged record lives in .git.
        self.secrets = Guard(Path(self.git.repo.path), secrets,
                             ProcessLock(self.git.state_dir / "secrets.lock"))
        self.commit_delay = commit_delay
        self.committer = Committer(self.git, commit_delay)
        self._stop = self.committer.stop  # set it to end deferred commits (a dying process)
        # The pages' read model, set by the search index that follows this store: its file
        # catalogue (search/catalogue.py), one per instance, kept by the listeners below.
        self.catalogue: object | None = None
        # Called as listener(paths, when) after files change (the search index); `when` is
        # the time the change is committed with, when the store knows it (see `notify`).
        self.listeners: list[Callable[[list[str], float | None], None]] = []
        # Paths whose last write here waits for the committer process, which commits it and
        # indexes it (host_commits): this worker's own background indexing leaves them.
        # Whatever this process commits itself (a UI edit's flush, a stand-in tick) its
        # listeners hear of, with the commit's time.
        self.host_indexes: set[str] = set()
        ref = weakref.ref(self)  # (no cycle: a dropped Store is freed at once, as before)
        self.git.on_commit = lambda paths, when: (s := ref()) and s._committed(paths, when)
        self.git.repair()
        self.git.prepare()
        if self.git.has_uncommitted():
            self._safe_flush()

    # -- paths ---------------------------------------------------------------
    def path_for(self, kind: Kind | str, scope: str | None = None, name: str | None = None) -> str:
        return self.layout.path(Address(Kind(kind), scope, name))

    def address_of(self, path: str) -> Address | None:
        return self.layout.address(path)

    def abspath(self, path: str) -> Path:
        """Absolute path for a workspace path; refuses anything that could leave it."""
        names.validate_relpath(path)
        if walk.link_in_path(self.root, path) is not None:
            raise InvalidName(f"invalid path {path!r}: it goes through a symbolic link")
        return self.root / path

    # -- reads ---------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes | None:
        """The file's bytes (None when missing), never read through a symbolic link."""
        names.validate_relpath(path)
        return walk.read_nofollow(self.root, path)

    def read(self, path: str) -> str | None:
        data = self.read_bytes(path)
        return None if data is None else data.decode("utf-8", "replace")

    def read_versioned(self, path: str) -> tuple[str | None, str | None]:
        data = self.read_bytes(path)
        if data is None:
            return None, None
        return data.decode("utf-8", "replace"), version_of(data)

    def exists(self, path: str) -> bool:
        return self.abspath(path).is_file()

    def is_dir(self, path: str) -> bool:
        return self.abspath(path).is_dir()

    def list_files(self, prefix: str = "") -> list[str]:
        """Workspace paths of the files below a folder, sorted (no git call)."""
        folder = prefix.strip("/")
        if folder:
            self.abspath(folder)
        return sorted(e.path for e in walk.walk(self.root, folder))

    def read_folder(self, prefix: str, suffix: str = ".md") -> list[tuple[str, str]]:
        """(path, text) of the files directly in a folder ending in `suffix`, by name.

        One scan and one no-follow open per file: Duragent's recall reads every world
        topic on each call, where `read`'s per-path symlink walk cost 5x more.
        """
        folder = prefix.strip("/")
        base = self.abspath(folder)
        found = [e.path.rsplit("/", 1)[-1] for e in walk.walk(self.root, folder, depth=1)
                 if e.path.endswith(suffix)]
        if not found:
            return []
        try:
            dir_fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:  # removed meanwhile, or replaced by a link
            return []
        out: list[tuple[str, str]] = []
        try:
            for name in found:
                path = f"{folder}/{name}"
                try:
                    if not _PLAIN_NAME.fullmatch(name):
                        names.validate_relpath(path)
                except InvalidName:
                    continue
                data = walk.read_at(dir_fd, name)  # None: removed meanwhile, or a link
                if data is not None:
                    out.append((path, data.decode("utf-8", "replace")))
        finally:
            os.close(dir_fd)
        return out

    # -- writes --------------------------------------------------------------
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
        """Append under the workspace lock; `header` is written only into a new/empty file."""
        done = self._append_entry(path, text, actor=actor, tool=tool, message=message,
                                  trailers=trailers, when=when)
        if done is not None:
            return done

        def add(old: str | None) -> str:
            if not old:
                return (header or "") + text
            return old + text
        return self.update(path, add, actor=actor, tool=tool, message=message,
                           trailers=trailers, when=when)

    def _append_entry(self, path: str, text: str, *, actor: Actor, tool: str,
                      message: str | None, trailers: Iterable[tuple[str, str]],
                      when: float | None) -> WriteResult | None:
        """An entry appended to a log that ends in a newline, at the cost of the entry: what
        `update` would do, without decoding, re-encoding, line-counting and comparing the
        whole log (at 400 KB, two thirds of an append's CPU, and growing all day). The log
        is not read while its lognote holds (else once, for its CRC-32). An entry that
        crosses a memory page goes in by
        a new file with the log copied in the kernel (`append_by_copy`). None, with nothing
        written, where `update` must decide (a new or empty file, a NUL, a secret, a
        non-UTF-8 log, a second name); it gives the same result there."""
        if not text or "\x00" in text or not self.secrets.clean_tail(text):
            return None
        try:
            tail = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: update says where
            return None
        names.validate_relpath(path, write=True)  # links: refused by open_append, and
        trailers = [tuple(t) for t in trailers]  # then by update, which says so
        with self.git.write_lock.shared(), self.git.path_lock(path) as lock:
            opened = walk.open_append(self.root, path)
            if opened is None:
                return None
            fd, st = opened
            folder = None  # set when the entry went in by a new file (append_by_copy)
            try:
                size = st.st_size
                # The log as the last entry left it (lognote), else read once; a log that
                # is empty, has no final newline or is not UTF-8 is left to update.
                crc = lognote.read(lock, path, st)
                if crc is None:
                    crc = lognote.crc_of_log(fd, size)
                if crc is None or size + len(tail) > MAX_FILE_BYTES:
                    return self._not_appended(fd)
                crc = zlib.crc32(tail, crc)
                rec = Record(path, "", actor, tool, message, trailers, time=when or 0.0,
                             data=tail, base=size, crc=crc)
                journal = functools.partial(self.git.record, rec)  # (journaled.py: why here)
                if append_at(fd, st, size, tail):
                    journaled.appended(fd, size, journal)
                else:
                    if not crosses_page(st, size, tail):
                        return self._not_appended(fd)
                    opened_folder = walk.open_folder(self.root, path)
                    if opened_folder is None:
                        return self._not_appended(fd)
                    folder, name = opened_folder
                    new = append_by_copy(folder, name, fd, st, tail, journal)
                    os.close(fd)
                    fd = new
                    if fd is None:
                        return self._not_appended(folder)
                if tail.endswith(b"\n"):
                    lognote.write(lock, path, os.fstat(fd), crc)
            except BaseException:
                for open_fd in (fd, folder):
                    if open_fd is not None:
                        os.close(open_fd)
                raise
        if folder is None:
            sync_appended(fd)
        else:
            sync_replaced(fd, folder)
        root, length = self.root, size + len(tail)
        result = WriteResult.appended(
            path, lambda: (walk.read_nofollow(root, path) or b"")[:length])
        return self._written(result, rec.id, when=rec.time)

    @staticmethod
    def _not_appended(fd: int) -> None:
        """Nothing written: the descriptor is closed and `update` takes the write."""
        os.close(fd)

    def delete(self, path: str, *, actor: Actor, tool: str, message: str | None = None,
               expect: str | None = None, missing_ok: bool = False,
               trailers: Iterable[tuple[str, str]] = ()) -> WriteResult:
        if not self.exists(path):
            if missing_ok:
                return WriteResult(path, None, False)
            raise NotFound(f"{path} does not exist")
        return self.update(path, lambda _old: DELETE, actor=actor, tool=tool, message=message,
                           expect=expect, trailers=trailers)

    def update(self, path: str, fn: Callable[[str | None], object], *, actor: Actor,
               tool: str, message: str | None = None, expect: str | None = None,
               trailers: Iterable[tuple[str, str]] = (), when: float | None = None
               ) -> WriteResult:
        """Read-modify-write under the workspace lock: the one write primitive.

        `fn(old_text)` returns the new text, None for "no change", or DELETE. `when`
        backdates the author time (demo data, imports).
        """
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
                trailers = [tuple(t) for t in trailers]  # read twice: here and the record
                if new is DELETE:
                    blob, data = None, None
                else:
                    if not isinstance(new, str):
                        raise TypeError("update functions return str, None or DELETE")
                    lookalike.check_new(self.root, path, created=old_bytes is None)
                    data = names.validate_text(new, old).encode()
                    if len(data) > MAX_FILE_BYTES:
                        raise TooLarge(f"{path} would be {len(data)} bytes; the limit is "
                                       f"{MAX_FILE_BYTES} bytes")
                    machine = actor.kind == "agent" or \
                        any(k == "Memoryui-Token" for k, *_ in trailers)
                    added = self.secrets.check(path, old, new,
                                               "agent" if machine else actor.kind, SecretFound)
                    # Its blob is made when it is committed (records.Record.data).
                    blob = self.git.blob_id(data)
                    if old_bytes and data.startswith(old_bytes):
                        base = len(old_bytes)  # journaled as its appended bytes only
                rec = Record(path, blob, actor, tool, message, trailers, time=when or 0.0,
                             data=data if base is None else data[base:], base=base)
                # Room for the file, its record and its commit; else a 507, nothing touched.
                ensure_room(self.root, 2 * len(data or b""))
                if data is None:
                    journaled.remove(full, lambda: self.git.record(rec))
                    prune_empty_dirs(full.parent, self.root)
                else:  # an append goes in place (its sync after the locks: sync_appended)
                    appended = journaled.write(full, path, data, old_bytes,
                                               lambda: self.git.record(rec))
                self.secrets.written(path, old, None if data is None else new, added)
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
        return self._written(result, rec.id, when=rec.time)

    def _written(self, result: WriteResult, record_id: str, when: float) -> WriteResult:
        """After a journaled write is durable: its commit (now or by a tick), and the
        listeners told."""
        result.commit = self._after_write(record_id)
        # (a dead committer's writes are committed by a stand-in here, which lets go of them)
        if result.commit is None and self.committer.hosted:
            self.host_indexes.add(result.path)
        else:
            self.host_indexes.discard(result.path)
        self.notify([result.path], when=when)
        return result

    def rename(self, old: str, new: str, *, actor: Actor, tool: str,
               message: str | None = None, trailers: Iterable[tuple[str, str]] = ()
               ) -> WriteResult:
        src, dst = self.abspath(old), self.abspath(new)
        lookalike.check_new(self.root, new, ignore=old)
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
            r1 = Record(old, None, actor, tool, message, [tuple(t) for t in trailers])
            r2 = Record(new, blob, actor, tool, message, [tuple(t) for t in trailers])
            self.git.record(r1)
            self.git.record(r2)
            self.secrets.moved(old, new)
        res = WriteResult(new, data, True, created=True)
        res.commit = self._after_write(r2.id)
        self.notify([old, new], when=r2.time)
        return res

    def delete_tree(self, prefix: str, *, actor: Actor, tool: str,
                    message: str | None = None, trailers: Iterable[tuple[str, str]] = ()
                    ) -> list[str]:
        """Remove every file below a folder in one commit (Dagu's DELETE of a DAG)."""
        paths = self.list_files(prefix)
        if not paths:
            return []
        with self.git.write_lock:
            ensure_room(self.root, 0)  # (as in update)
            last = None
            for p in paths:
                full = self.abspath(p)
                full.unlink(missing_ok=True)
                prune_empty_dirs(full.parent, self.root)
                last = Record(p, None, actor, tool, message, [tuple(t) for t in trailers])
                self.git.record(last)
                self.secrets.written(p, None, None, [])
        self._after_write(last.id if last else "")
        self.notify(paths, when=last.time if last else None)
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
            last = None
            for src, dst in moves:
                s, d = self.abspath(src), self.abspath(dst)
                data = walk.read_nofollow(self.root, src) or b""
                blob = self.git.create_blob(data)
                atomic_write(d, data)
                s.unlink()
                prune_empty_dirs(s.parent, self.root)
                extra = [tuple(t) for t in trailers]
                self.git.record(Record(src, None, actor, tool, message, extra))
                last = Record(dst, blob, actor, tool, message, extra)
                self.git.record(last)
                self.secrets.moved(src, dst)
        self._after_write(last.id)
        self.notify([p for pair in moves for p in pair], when=last.time)
        return moves

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

    def notify(self, paths: list[str], when: float | None = None) -> None:
        """Files changed (by this store, a sync, anything): the listeners (the file catalogue
        and the search index) hear of them; a listener never fails a write.

        `when`: the time these changes are committed with, when the caller knows it (its own
        writes); listeners then need not ask git (which means catching up with every commit).
        """
        self._tell(paths, when)

    def host_commits(self, wait: bool = True) -> bool:
        """Make every process's grouped commits from this one (the committer process; False
        when another holds the committer lock and `wait` is off), and tell the listeners
        what each tick commits, so its search index indexes them here (committer.py)."""
        return self.committer.start(wait)

    def _committed(self, paths: list[str], when: float) -> None:
        self.host_indexes.difference_update(paths)
        self._tell(paths, when)

    def _tell(self, paths: list[str], when: float | None) -> None:
        for listener in list(self.listeners):
            try:
                listener(paths, when)
            except Exception:  # noqa: BLE001
                log.exception("change listener failed for %s", paths[:3])

    @property
    def hosted(self) -> bool:
        """Another process commits (and indexes) this one's deferred writes."""
        return self.committer.hosted

    def _after_write(self, record_id: str) -> str | None:
        return self.committer.after_write(record_id)

    # -- commits (committer.py) ------------------------------------------------
    def flush(self) -> dict[str, str]:
        """Commit every journaled write now (record id -> commit sha)."""
        return self.git.flush()

    def _safe_flush(self) -> dict[str, str]:
        return self.committer.safe_flush()

    def sync(self) -> None:
        """Make history current before reading it (deferred writes get committed)."""
        self.committer.sync()

    def close(self) -> None:
        self.committer.close()

    # -- history -------------------------------------------------------------
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
        self.sync()
        return history.show(self.root, full, repo=self.git.repo)

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
        if obj.type_str != "blob":
            return None
        return self.git.repo[obj.id].data.decode("utf-8", "replace")

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

    # -- pending changes (pending.py) --------------------------------------------
    def pending(self) -> list[history.StatusEntry]:
        """Files changed outside memoryui; `entry.refused` says why one cannot be committed."""
        return pending.pending(self)

    def owner_of(self, path: str) -> Actor:
        return pending.owner_of(self, path)

    def commit_pending(self, paths: Iterable[str] | None = None, *,
                       actor: Actor | None = None, message: str | None = None,
                       tool: str = "snapshot") -> pending.Committed:
        """Commit outside changes (the shas; refused items are in `.refused`)."""
        wanted = None if paths is None else list(paths)
        chosen = wanted or []
        if wanted is None and self.secrets.enabled:  # what this commit takes, to re-check
            chosen = [e.path for e in self.pending()]
        done = pending.commit_pending(self, wanted, actor=actor, message=message, tool=tool)
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

    # -- scopes ----------------------------------------------------------------------
    def scopes(self) -> list[str]:
        return self.layout.list_scopes(self.root)
