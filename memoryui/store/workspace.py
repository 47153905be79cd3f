"""The workspace: one object that every tool, view and command writes and reads through."""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import re
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from . import history, names
from .actors import Actor
from .errors import Conflict, InvalidName, NotFound, TooLarge
from .files import atomic_write
from .gitrepo import GitRepo, Record
from .layout import Address, Kind, Layout, get_layout

log = logging.getLogger("memoryui.store")

MAX_FILE_BYTES = 4 * 1024 * 1024
ABSENT = "absent"  # an `expect` value: the file must not exist yet
DELETE = object()  # returned by an update function: remove the file
TREE_TTL = 60.0  # seconds between full re-walks that catch changes made outside memoryui
LASTCHANGE_SAVE_EVERY = 30.0  # seconds between saves of the last-change cache file
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
    version: str | None  # sha256 of the new content, None when deleted
    changed: bool
    created: bool = False
    deleted: bool = False
    commit: str | None = None
    old_text: str | None = None
    text: str | None = None


@dataclass
class FileInfo:
    path: str
    address: Address | None
    size: int
    mtime: float
    last: dict | None = None  # sha, author, actor, time, subject of the last commit


class Store:
    """A git-backed memory workspace with one layout.

    `commit_delay=0` commits before each write returns; a positive delay lets a
    background thread group writes into commits every `commit_delay` seconds (what the
    server uses for agent traffic), while `flush()` forces a commit at once.
    """

    def __init__(self, root: str | os.PathLike[str], layout: str | Layout = "duragent",
                 *, commit_delay: float = 0.0):
        self.root = Path(root).resolve()
        self.layout = get_layout(layout)
        self.git = GitRepo(self.root)
        self.commit_delay = commit_delay
        self._committer: threading.Thread | None = None
        self._stop = threading.Event()
        self._tree: dict[str, FileInfo] | None = None
        self._tree_walked = 0.0
        self._tree_dirty: set[str] = set()
        self._last: dict[str, dict] = {}
        self._last_head: str | None = None
        self._last_saved = 0.0  # time.monotonic() of the last lastchange.json save
        self._lock = threading.RLock()
        # Called as listener(paths) after files change (search index, caches).
        self.listeners: list[Callable[[list[str]], None]] = []
        self.git.repair()
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
        full = self.root / path
        cur = self.root
        for part in path.split("/"):
            cur = cur / part
            if cur.is_symlink():
                raise InvalidName(f"invalid path {path!r}: it goes through a symbolic link")
        return full

    # -- reads ---------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes | None:
        full = self.abspath(path)
        try:
            return full.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except IsADirectoryError:
            raise InvalidName(f"{path} is a folder, not a file") from None

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
        base = self.abspath(prefix.rstrip("/")) if prefix.strip("/") else self.root
        out: list[str] = []
        _walk(base, self.root, out)
        return sorted(out)

    def read_folder(self, prefix: str, suffix: str = ".md") -> list[tuple[str, str]]:
        """(path, text) of the files directly in a folder ending in `suffix`, by name.

        One scan and one no-follow open per file: Duragent's recall reads every world
        topic on each call, where `read`'s per-path symlink walk cost 5x more.
        """
        folder = prefix.strip("/")
        base = self.abspath(folder)
        try:
            with os.scandir(base) as it:
                found = sorted(e.name for e in it if e.name.endswith(suffix)
                               and not e.name.startswith(".") and e.is_file(follow_symlinks=False))
            dir_fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return []
        out: list[tuple[str, str]] = []
        try:
            for name in found:
                path = f"{folder}/{name}"
                try:
                    if not _PLAIN_NAME.fullmatch(name):
                        names.validate_relpath(path)
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                                 dir_fd=dir_fd)
                except (InvalidName, OSError):  # odd name, removed meanwhile, or a symlink
                    continue
                with os.fdopen(fd, "rb") as fh:
                    out.append((path, fh.read().decode("utf-8", "replace")))
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
        def add(old: str | None) -> str:
            if not old:
                return (header or "") + text
            return old + text
        return self.update(path, add, actor=actor, tool=tool, message=message,
                           trailers=trailers, when=when)

    def delete(self, path: str, *, actor: Actor, tool: str, message: str | None = None,
               expect: str | None = None, missing_ok: bool = False) -> WriteResult:
        if not self.exists(path):
            if missing_ok:
                return WriteResult(path, None, False)
            raise NotFound(f"{path} does not exist")
        return self.update(path, lambda _old: DELETE, actor=actor, tool=tool, message=message,
                           expect=expect)

    def update(self, path: str, fn: Callable[[str | None], object], *, actor: Actor,
               tool: str, message: str | None = None, expect: str | None = None,
               trailers: Iterable[tuple[str, str]] = (), when: float | None = None
               ) -> WriteResult:
        """Read-modify-write under the workspace lock: the one write primitive.

        `fn(old_text)` returns the new text, None for "no change", or DELETE. `when`
        backdates the author time (demo data, imports).
        """
        full = self.abspath(path)
        with self.git.write_lock:
            try:
                old_bytes = full.read_bytes()
            except FileNotFoundError:
                old_bytes = None
            except (IsADirectoryError, NotADirectoryError):
                raise InvalidName(f"{path} is a folder, not a file") from None
            old = None if old_bytes is None else old_bytes.decode("utf-8", "replace")
            self._check_expect(path, old, old_bytes, expect)
            new = fn(old)
            if new is None or (new is not DELETE and old is not None and new == old):
                return WriteResult(path, version_of(old_bytes), False, old_text=old, text=old)
            if new is DELETE:
                full.unlink()
                _prune_empty_dirs(full.parent, self.root)
                blob, data = None, None
            else:
                if not isinstance(new, str):
                    raise TypeError("update functions return str, None or DELETE")
                data = new.encode()
                if len(data) > MAX_FILE_BYTES:
                    raise TooLarge(f"{path} would be {len(data)} bytes; the limit is "
                                   f"{MAX_FILE_BYTES} bytes")
                atomic_write(full, data)
                blob = self.git.create_blob(data)
            rec = Record(path, blob, actor, tool, message, [tuple(t) for t in trailers],
                         time=when or 0.0)
            self.git.record(rec)
            self._touch(path)
        result = WriteResult(path, version_of(data), True, created=old is None,
                             deleted=data is None, old_text=old,
                             text=None if data is None else new)
        result.commit = self._after_write(rec.id)
        self.notify([path])
        return result

    def rename(self, old: str, new: str, *, actor: Actor, tool: str,
               message: str | None = None) -> WriteResult:
        src, dst = self.abspath(old), self.abspath(new)
        with self.git.write_lock:
            if not src.is_file():
                raise NotFound(f"{old} does not exist")
            if dst.exists():
                raise Conflict(f"{new} already exists", path=new, current=None, version=None)
            data = src.read_bytes()
            atomic_write(dst, data)
            src.unlink()
            _prune_empty_dirs(src.parent, self.root)
            blob = self.git.create_blob(data)
            r1 = Record(old, None, actor, tool, message)
            r2 = Record(new, blob, actor, tool, message)
            self.git.record(r1)
            self.git.record(r2)
            self._touch(old, new)
        res = WriteResult(new, version_of(data), True, created=True)
        res.commit = self._after_write(r2.id)
        self.notify([old, new])
        return res

    def delete_tree(self, prefix: str, *, actor: Actor, tool: str,
                    message: str | None = None) -> list[str]:
        """Remove every file below a folder in one commit (Dagu's DELETE of a DAG)."""
        paths = self.list_files(prefix)
        if not paths:
            return []
        with self.git.write_lock:
            last = None
            for p in paths:
                full = self.abspath(p)
                full.unlink(missing_ok=True)
                _prune_empty_dirs(full.parent, self.root)
                last = Record(p, None, actor, tool, message)
                self.git.record(last)
            self._touch(*paths)
        self._after_write(last.id if last else "")
        self.notify(paths)
        return paths

    def rename_tree(self, old_prefix: str, new_prefix: str, *, actor: Actor, tool: str,
                    message: str | None = None) -> list[tuple[str, str]]:
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
                if self.abspath(dst).exists():
                    raise Conflict(f"{dst} already exists", path=dst, current=None,
                                   version=None)
            last = None
            for src, dst in moves:
                s, d = self.abspath(src), self.abspath(dst)
                data = s.read_bytes()
                atomic_write(d, data)
                s.unlink()
                _prune_empty_dirs(s.parent, self.root)
                blob = self.git.create_blob(data)
                self.git.record(Record(src, None, actor, tool, message))
                last = Record(dst, blob, actor, tool, message)
                self.git.record(last)
            self._touch(*(p for pair in moves for p in pair))
        self._after_write(last.id)
        self.notify([p for pair in moves for p in pair])
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

    def notify(self, paths: list[str]) -> None:
        """Tell listeners (the search index) which files changed; they must not fail a write."""
        for listener in list(self.listeners):
            try:
                listener(paths)
            except Exception:  # noqa: BLE001
                log.exception("change listener failed for %s", paths[:3])

    def _touch(self, *paths: str) -> None:
        """Mark paths this process changed, so the cached tree re-stats just those."""
        with self._lock:
            self._tree_dirty.update(paths)

    def invalidate_tree(self) -> None:
        """Forget the cached tree: the next `tree()` walks the whole workspace again."""
        with self._lock:
            self._tree = None

    def _after_write(self, record_id: str) -> str | None:
        if self.commit_delay <= 0:
            return self._safe_flush().get(record_id)
        self._ensure_committer()
        return None

    # -- commits -------------------------------------------------------------
    def flush(self) -> dict[str, str]:
        """Commit every journaled write now (record id -> commit sha)."""
        return self.git.flush()

    def _safe_flush(self) -> dict[str, str]:
        """Commit now; a git failure leaves the write pending for the next attempt."""
        try:
            return self.git.flush()
        except Exception:  # noqa: BLE001 - the file write already succeeded
            log.exception("commit failed; the change stays pending and is retried")
            return {}

    def sync(self) -> None:
        """Make history current before reading it (deferred writes get committed)."""
        if self.git.has_uncommitted():
            self._safe_flush()

    def _ensure_committer(self) -> None:
        if self._committer is not None and self._committer.is_alive():
            return
        with self._lock:
            if self._committer is not None and self._committer.is_alive():
                return
            ref = weakref.ref(self)
            stop = self._stop
            delay = self.commit_delay

            def loop() -> None:
                while not stop.wait(delay):
                    store = ref()
                    if store is None:
                        return
                    if store.git.has_uncommitted():
                        try:
                            store.git.flush(blocking=False)
                        except Exception:  # noqa: BLE001
                            log.exception("deferred commit failed; retrying next tick")
                    del store

            self._committer = threading.Thread(target=loop, name="memoryui-committer",
                                               daemon=True)
            self._committer.start()
            atexit.register(_flush_at_exit, weakref.ref(self))

    def close(self) -> None:
        self._stop.set()
        self._safe_flush()

    # -- history -------------------------------------------------------------
    def head(self) -> str | None:
        return self.git.head()

    def log(self, path: str | None = None, *, scope: str | None = None,
            kind: Kind | str | None = None, actor: str | None = None,
            since: str | None = None, until: str | None = None, limit: int = 50,
            offset: int = 0, with_files: bool = True) -> list[history.CommitInfo]:
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
                           limit=limit, offset=offset, with_files=with_files)

    def commit(self, sha: str) -> history.CommitDetail | None:
        self.sync()
        return history.show(self.root, sha)

    def resolve(self, rev: str) -> str | None:
        try:
            return str(self.git.repo.revparse_single(rev).peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
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
        return history.diff(self.root, rev_a, rev_b, path)

    def blame(self, path: str, rev: str = "HEAD") -> list[history.BlameLine]:
        names.validate_relpath(path)
        self.sync()
        if self.head() is None:
            return []
        lines = history.blame(self.root, path, rev)
        actors = history.actors_of(self.root, {ln.sha for ln in lines})
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

    # -- pending changes -------------------------------------------------------
    def pending(self) -> list[history.StatusEntry]:
        """Files changed outside memoryui (memoryui's own writes are committed first)."""
        self.sync()
        return history.status(self.root)

    def owner_of(self, path: str) -> Actor:
        scope = self.layout.scope_of(path)
        return Actor.agent(scope) if scope else Actor.external()

    def commit_pending(self, paths: Iterable[str] | None = None, *,
                       actor: Actor | None = None, message: str | None = None,
                       tool: str = "snapshot") -> list[str]:
        """Commit outside changes; each path is attributed to its owning scope by default."""
        pending = {e.path: e for e in self.pending()}
        chosen = list(pending) if paths is None else [p for p in paths if p in pending]
        if not chosen:
            return []
        records = []
        with self.git.write_lock:
            for p in chosen:
                full = self.root / names.validate_relpath(p)
                blob = self.git.create_blob(full.read_bytes()) if full.is_file() else None
                who = actor or self.owner_of(p)
                trailers = [("Committed-By", actor.trailer)] if actor else []
                rec = Record(p, blob, who, tool, message, trailers)
                self.git.record(rec)
                records.append(rec)
            self._touch(*chosen)
        done = self.git.flush()
        self.notify(chosen)
        return sorted({done[r.id] for r in records if r.id in done})

    def discard_pending(self, paths: Iterable[str]) -> list[str]:
        """Put files back as HEAD has them (untracked files are removed)."""
        pending = {e.path for e in self.pending()}
        tree = self.git.head_tree()
        done = []
        with self.git.write_lock:
            for p in paths:
                if p not in pending:
                    continue
                full = self.root / names.validate_relpath(p)
                blob = self.git.blob_at(tree, p)
                if blob is None:
                    full.unlink(missing_ok=True)
                    _prune_empty_dirs(full.parent, self.root)
                else:
                    atomic_write(full, self.git.repo[blob].data)
                done.append(p)
            self.git._refresh_index(set(done))
            self._touch(*done)
        self.notify(done)
        return done

    # -- tree with last-change facts ---------------------------------------------
    def last_changes(self) -> dict[str, dict]:
        """path -> the last commit that touched it, kept current incrementally by HEAD."""
        head = self.head()
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
                self._tree_dirty.update(fresh)  # other processes' commits: re-stat these
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
                tmp.write_text(json.dumps({"head": head, "paths": merged}))
                os.replace(tmp, cache_file)
                self._last_saved = now
            return self._last

    def _is_ancestor(self, a: str, b: str) -> bool:
        try:
            return a == b or self.git.repo.descendant_of(b, a)
        except (KeyError, ValueError, pygit2.GitError):
            return False

    def tree(self) -> dict[str, FileInfo]:
        """Every file with size and last change, kept current without re-walking.

        A full walk stats all files (about 100-300 ms at 20k files), so it happens once and
        then every TREE_TTL seconds to catch edits made outside memoryui; in between, only
        the paths this process wrote and the paths in new commits (from HEAD's advance)
        are re-stated. A changed tree is a new dict, so callers may cache by identity.
        """
        last = self.last_changes()
        with self._lock:
            now = time.monotonic()
            if self._tree is None or now - self._tree_walked > TREE_TTL:
                paths: list[str] = []
                stats: dict[str, tuple[int, float]] = {}
                _walk(self.root, self.root, paths, stats)
                self._tree = {
                    p: FileInfo(p, self.layout.address(p), *stats[p], last.get(p))
                    for p in sorted(paths)
                }
                self._tree_walked = now
                self._tree_dirty.clear()
            elif self._tree_dirty:
                tree = dict(self._tree)
                added = False
                for p in self._tree_dirty:
                    if any(part.startswith(".") for part in p.split("/")):
                        continue
                    try:
                        st = os.lstat(self.root / p)
                    except (FileNotFoundError, NotADirectoryError):
                        tree.pop(p, None)
                        continue
                    if stat.S_ISREG(st.st_mode):
                        added = added or p not in tree
                        tree[p] = FileInfo(p, self.layout.address(p), st.st_size, st.st_mtime,
                                           last.get(p))
                    else:
                        tree.pop(p, None)
                self._tree_dirty.clear()
                self._tree = dict(sorted(tree.items())) if added else tree
            return self._tree

    def scopes(self) -> list[str]:
        return self.layout.list_scopes(self.root)


def _walk(base: Path, root: Path, out: list[str], stats: dict | None = None) -> None:
    """Recursive scandir skipping hidden names (.git, temp files): one stat per file."""
    try:
        it = os.scandir(base)
    except (FileNotFoundError, NotADirectoryError):
        return
    with it:
        for e in it:
            if e.name.startswith("."):
                continue
            if e.is_dir(follow_symlinks=False):
                _walk(Path(e.path), root, out, stats)
            elif e.is_file(follow_symlinks=False):
                rel = os.path.relpath(e.path, root).replace(os.sep, "/")
                out.append(rel)
                if stats is not None:
                    st = e.stat(follow_symlinks=False)
                    stats[rel] = (st.st_size, st.st_mtime)


def _prune_empty_dirs(directory: Path, root: Path) -> None:
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def _flush_at_exit(ref: weakref.ref) -> None:
    store = ref()
    if store is not None:
        store.close()
