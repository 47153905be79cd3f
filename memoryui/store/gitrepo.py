"""The commit engine: a write-ahead journal turned into attributed git commits.

Why this shape (measured, see README "Write path"): staging through the git index costs
10-260 ms per write on a 20k-file repository, while writing blobs, trees and commits
with libgit2 costs about a millisecond. So a write stores its blob at once and appends a
journal record under the workspace lock; `flush` turns the journal into commits (one per
author and message), moves the branch with a compare-and-swap `git update-ref` (a lost
race fails loudly and the batch is retried, never dropped), then refreshes only the
touched index entries so `git status` stays truthful. A crash leaves the journal or a
batch file behind and the next flush commits it with its original authors.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import shlex
import subprocess
import threading
import time
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

import pygit2

from . import gitindex, walk
from .actors import Actor
from .errors import Ambiguous, InvalidName, NotFound
from .files import TMP_SUFFIX, disk_errors
from .gitcli import GIT_ENV, run_git  # noqa: F401 - imported from here by the store
from .journaled import append_line
from .locks import ProcessLock, SharedProcessLock
from .records import Record, apply_changes, commit_message, group_records
from .room import branch_not_moved

log = logging.getLogger("memoryui.store")

ZERO = "0" * 40
MIN_COMMIT_ID = 7  # hex digits a commit id typed by a person or a client must have
HEX_RE = re.compile(r"[0-9a-fA-F]{1,40}")
STALE_LOCK_SECONDS = 10.0
LOOSE_OBJECT_LIMIT = 5000
# Loose objects no commit holds (a CAS retry's commit, a version an outside tool hashed) are
# left by the repack, which packs only what is reachable. `git prune` removes those older
# than git gc's own grace of two weeks (never an object a writer is about to use), but it
# walks every reachable object (23 s of CPU and 670 MB on 200k commits), so it runs only
# when this many loose objects are left after the repack, one of them past the grace, and
# not within a day of the last prune.
PRUNE_FROM = 500
PRUNE_GRACE_MINUTES = 14 * 24 * 60
PRUNE_EVERY_MINUTES = 24 * 60
PRUNED_STAMP = "pruned"  # touched after each prune
PATH_LOCKS = 64
PREPARED_CONFIG = (
    ("core.untrackedCache", "true"),
    ("core.commitGraph", "true"),
    ("fetch.writeCommitGraph", "true"),
)
# Below this many entries a whole index is a few hundred KB; above, each commit tick rewrote
# megabytes (see gitindex). The shared part is rewritten once 2 % of the entries are new
# (git counts added entries only; changed ones stay in the split part) and old shared parts
# are removed a day after their last use (git's defaults: 20 %, two weeks).
SPLIT_INDEX_FROM = 2000
HOUSEKEEPING_LOCK = "housekeeping.lock"  # held by the one housekeeping running (`maintain`)
SPLIT_INDEX_CONFIG = (
    ("core.splitIndex", "true"),
    ("splitIndex.maxPercentChange", "2"),
    ("splitIndex.sharedIndexExpire", "1.day.ago"),
)

# libgit2 maps pack files in windows of 1 GiB, up to 8 GiB, and every page a read touches
# stays resident in the worker while its window is mapped: scattered reads (a history page,
# the overview's commits) left 90 MB of a 200k-commit pack in each worker. Smaller windows,
# and at most PACK_WINDOWS_MB of them mapped (least recently used ones unmapped first).
PACK_WINDOW_MB, PACK_WINDOWS_MB = 4, 32
# A commit keeps the bytes of the logs it appended to, up to this much, so the next tick
# appends a log's entries to them instead of reading its blob back (inflating a 400 KB log
# once per author and tick was a fifth of a busy tick's CPU). Least recent go first.
COMMITTED_BYTES = 8 << 20
pygit2.settings.mwindow_size = PACK_WINDOW_MB << 20
pygit2.settings.mwindow_mapped_limit = PACK_WINDOWS_MB << 20


class GitRepo:
    """Low-level access to the workspace repository, shared by one process's threads."""

    def __init__(self, root: Path):
        self.root = root
        git_dir = root / ".git"
        if not git_dir.exists():
            root.mkdir(parents=True, exist_ok=True)
            pygit2.init_repository(str(root), initial_head="main")
        self.git_dir = git_dir
        self.state_dir = git_dir / "memoryui"
        self.state_dir.mkdir(exist_ok=True)
        self.journal = self.state_dir / "journal.jsonl"
        # Called with (paths, commit time) after each commit a flush makes (set by the Store:
        # its listeners, the search index, hear of what this process commits).
        self.on_commit: Callable[[list[str], float], None] | None = None
        self.index_stale = self.state_dir / "index-stale.jsonl"
        # exclusive: the tree as a whole; shared + a path lock: one file (Store.update)
        self.write_lock = SharedProcessLock(self.state_dir / "write.lock")
        self.commit_lock = ProcessLock(self.state_dir / "commit.lock")
        self.journal_lock = ProcessLock(self.state_dir / "journal.lock")
        self._path_locks: dict[int, ProcessLock] = {}
        self._local = threading.local()
        self._ensure_excludes()
        self.commits_since_graph = 0
        self.loose_object_limit = LOOSE_OBJECT_LIMIT
        self.prune_from = PRUNE_FROM
        self._holding_since: float | None = None
        self.maintenance: subprocess.Popen | None = None  # the last background housekeeping
        self._kept: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # path -> blob, bytes
        self._kept_size = 0

    # -- plumbing -----------------------------------------------------------
    @property
    def repo(self) -> pygit2.Repository:
        """One libgit2 handle per thread (handles are not meant to be shared)."""
        r = getattr(self._local, "repo", None)
        if r is None or getattr(self._local, "pid", None) != os.getpid():
            r = gitindex.open_repo(self.root)
            self._local.repo = r
            self._local.pid = os.getpid()
        return r

    def _ensure_excludes(self) -> None:
        exclude = self.git_dir / "info" / "exclude"
        pattern = f"*{TMP_SUFFIX}"
        try:
            text = exclude.read_text()
        except FileNotFoundError:
            text = ""
        if pattern not in text.split("\n"):
            exclude.parent.mkdir(exist_ok=True)
            with exclude.open("a") as fh:
                fh.write(("\n" if text and not text.endswith("\n") else "") + pattern + "\n")

    def branch_ref(self) -> str:
        head = self.repo.references.get("HEAD")
        if head is not None and head.type == pygit2.enums.ReferenceType.SYMBOLIC:
            return str(head.target)
        return "HEAD"

    def head(self) -> str | None:
        """The current tip, read fresh from disk (other processes move it)."""
        ref = self.repo.references.get(self.branch_ref())
        if ref is None:
            return None
        return str(ref.resolve().target)

    def head_tree(self) -> pygit2.Tree | None:
        tip = self.head()
        return self.repo[tip].peel(pygit2.Tree) if tip else None

    def blob_at(self, tree: pygit2.Tree | None, path: str) -> str | None:
        if tree is None:
            return None
        try:
            entry = tree[path]
        except KeyError:
            return None
        return str(entry.id) if entry.type_str == "blob" else None

    def create_blob(self, data: bytes) -> str:
        with disk_errors(self.git_dir, len(data)):
            return str(self.repo.create_blob(data))

    @staticmethod
    def blob_id(data: bytes) -> str:
        """The id `create_blob` would give `data`, with nothing written (see Record.data):
        git's object header and the content through OpenSSL's SHA-1, 3x faster than
        libgit2's collision-detecting one (`pygit2.hash`; 0.75 against 0.23 ms for 500 KB).
        The objects themselves are still made, and named, by libgit2. (An entry to a log
        needs none: see Record.crc.)"""
        digest = hashlib.sha1(b"blob %d\0" % len(data), usedforsecurity=False)
        digest.update(data)
        return digest.hexdigest()

    def resolve_commit(self, rev: object, min_len: int = MIN_COMMIT_ID) -> str:
        """The full sha of a commit id typed by a person or sent by a client.

        Only hex ids of `min_len` to 40 digits are looked up (no ref names, no `^`), so
        short ids cannot be used to enumerate commits cheaply. InvalidName for anything
        else, Ambiguous when several objects share the prefix, NotFound when no commit has it.
        """
        if not isinstance(rev, str) or not HEX_RE.fullmatch(rev):
            raise InvalidName(f"invalid commit id {str(rev)[:60]!r}: use {min_len} to 40 "
                              "hex digits")
        if len(rev) < min_len:
            raise InvalidName(f"commit id {rev!r} is too short: use at least {min_len} hex "
                              "digits" if min_len < 40 else
                              f"commit id {rev!r} is not a full commit id (40 hex digits)")
        try:
            obj = self.repo[rev.lower()]
        except pygit2.AmbiguousError:
            raise Ambiguous(f"commit id {rev!r} is ambiguous: several objects start with it; "
                            "give more digits") from None
        except (KeyError, ValueError, pygit2.GitError):
            raise NotFound(f"no commit {rev!r}") from None
        if not isinstance(obj, pygit2.Commit):
            raise NotFound(f"no commit {rev!r}")
        return str(obj.id)

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

    def path_lock(self, path: str) -> ProcessLock:
        """The lock of one path (one of PATH_LOCKS, by hash), taken inside the write lock
        held shared: writes to one file keep their order, writes to others do not wait."""
        n = zlib.crc32(path.encode()) % PATH_LOCKS
        lock = self._path_locks.get(n)
        if lock is None:
            lock = self._path_locks.setdefault(
                n, ProcessLock(self.state_dir / "locks" / f"{n:02d}.lock"))
        return lock

    # -- journal --------------------------------------------------------------
    def record(self, rec: Record) -> None:
        """Append a record; the caller holds the file's path lock (or the write lock) so
        the records of one file are in the order its versions were written."""
        if not rec.id:
            rec.id = uuid.uuid4().hex
        if not rec.time:
            rec.time = time.time()
        with disk_errors(self.state_dir), self.journal_lock:
            append_line(self.journal, rec.to_json())

    def has_uncommitted(self) -> bool:
        """Writes wait to be committed, or index entries a failed refresh left stale (the
        next flush retries them: without that, a server with nothing more to write kept
        them stale, `git status` showed its committed entries as changes, and a person's
        `git commit` would have reverted them)."""
        try:
            if self.journal.stat().st_size:
                return True
        except FileNotFoundError:
            pass
        stale = self.index_stale.name
        try:  # (a scan, not Path.glob: this runs at every tick of an idle server)
            with os.scandir(self.state_dir) as entries:
                return any((e.name.startswith("batch-") and e.name.endswith(".jsonl"))
                           or e.name == stale for e in entries)
        except FileNotFoundError:
            return False

    def empty_commit(self, actor: Actor, message: str, trailers: list[tuple[str, str]],
                     tool: str) -> str:
        """A commit that changes no file and carries a decision in its trailers (a review
        dismissal, a sync conflict resolved as ours). Nothing changes in the tree, so no agent
        reads it, and merges keep it like any commit. Journaled writes are committed first,
        under the commit and write locks; HEAD moves by compare-and-swap."""
        with self.commit_lock, self.write_lock:
            self.flush()
            head = self.head()
            repo = self.repo
            tree = repo[head].peel(pygit2.Tree).id if head else repo.TreeBuilder().write()
            sig = pygit2.Signature(actor.name, actor.email, int(time.time()), 0)
            body = "\n".join(f"{k}: {v}" for k, v in [("Memoryui-Actor", actor.trailer),
                                                        ("Memoryui-Tool", tool), *trailers])
            oid = repo.create_commit(None, sig, sig, f"{message}\n\n{body}\n", tree,
                                     [pygit2.Oid(hex=head)] if head else [])
            run_git(self.root, "update-ref", "-m", f"memoryui {tool}", self.branch_ref(),
                    str(oid), head or ZERO)
        return str(oid)

    def flush(self, blocking: bool = True) -> dict[str, str]:
        """Commit everything journaled so far; returns record id -> commit sha."""
        if not self.commit_lock.acquire(blocking):
            return {}
        self._holding_since = time.time()
        try:
            done: dict[str, str] = {}
            for batch in sorted(self.state_dir.glob("batch-*.jsonl")):
                done.update(self._commit_batch(batch, leftover=True))
            with self.journal_lock:  # no record is appended while the journal moves
                if self.index_stale.exists():
                    self.repair(self._holding_since)
                    self._retry_index()
                try:
                    if not self.journal.stat().st_size:
                        return done
                except FileNotFoundError:
                    return done
                batch = self.state_dir / f"batch-{time.time_ns():020d}-{os.getpid()}.jsonl"
                os.replace(self.journal, batch)
            done.update(self._commit_batch(batch, leftover=False))
            return done
        finally:
            self.commit_lock.release()

    # -- commits --------------------------------------------------------------
    def _commit_batch(self, batch: Path, leftover: bool) -> dict[str, str]:
        records = []
        for line in batch.read_bytes().splitlines():
            try:
                records.append(Record.from_json(line))
            except (ValueError, KeyError, TypeError):
                # A torn last line (power loss): its file write is still on disk and
                # shows up as a pending change, so nothing is lost by skipping it.
                log.warning("skipping unreadable journal line in %s", batch.name)
        repo = self.repo
        self.repair(self._holding_since)
        parent = self.head()
        base_tree = repo[parent].peel(pygit2.Tree) if parent else None
        if leftover:
            # A crash after the branch moved but before the batch was removed must not
            # replay old versions: skip paths whose final version is already committed.
            final = {r.path: r.blob for r in records}
            committed = {p for p, b in final.items() if self.blob_at(base_tree, p) == b}
            records = [r for r in records if r.path not in committed]
        groups = group_records(records)
        keeps = [{r.path: r for r in group} for group in groups]  # the last of a path in each
        contents = self._rebuild(records, {r.id for kept in keeps for r in kept.values()},
                                 base_tree)
        tip, tree, result = parent, base_tree, {}
        made: list[tuple[list[str], float]] = []  # each commit's paths and time
        committed: dict[str, tuple[str, bytes | None] | None] = {}  # path -> (blob, bytes)
        for group, kept in zip(groups, keeps, strict=True):
            data: dict[str, bytes] = {}
            bad = set(self._make_blobs(kept.values(), contents, leftover, data))
            # (a bad one is left to show as a pending change, never committed wrong)
            changes = {r.path: r.blob for r in kept.values() if r.path not in bad}
            new_tree = apply_changes(repo, tree, changes)
            if tree is not None and new_tree == tree.id:
                continue
            for p, b in changes.items():
                committed[p] = None if b is None else (b, data.get(p))
            actor = group[0].actor
            when = int(max(r.time for r in group))
            sig = pygit2.Signature(actor.name, actor.email, when, 0)
            message = commit_message(group)
            oid = repo.create_commit(None, sig, sig, message, new_tree,
                                     [pygit2.Oid(hex=tip)] if tip else [])
            tip, tree = str(oid), repo[new_tree]
            made.append((list(changes), when))
            for r in group:
                result[r.id] = tip
        if tip != parent:
            self._move_branch(parent, tip)
        self.refresh_index({r.path for r in records}, committed)
        self._keep(committed)
        batch.unlink(missing_ok=True)
        self.count_commits(len(set(result.values())))
        if self.on_commit is not None:
            for paths, when in made:
                try:
                    self.on_commit(paths, when)
                except Exception:  # noqa: BLE001 - the commit is made; a listener never undoes it
                    log.exception("commit listener failed for %s", paths[:3])
        return result

    def _keep(self, committed: dict[str, tuple[str, bytes | None] | None]) -> None:
        """Keep the bytes of the logs just appended to (see COMMITTED_BYTES); a hit is
        found by the blob id the tree has for the path, so it is always that version."""
        for path, item in committed.items():
            old = self._kept.pop(path, None)
            if old is not None:
                self._kept_size -= len(old[1])
            if item is not None and item[1] is not None and \
                    len(item[1]) <= COMMITTED_BYTES // 4:
                self._kept[path] = (item[0], item[1])
                self._kept_size += len(item[1])
        while self._kept_size > COMMITTED_BYTES:
            _path, (_blob, data) = self._kept.popitem(last=False)
            self._kept_size -= len(data)

    def _rebuild(self, records: list[Record], keep: set[str],
                 tree: pygit2.Tree | None) -> dict[str, bytes | None]:
        """The whole content of each record in `keep` (by id) that was journaled as an
        append: the path's version before it (its previous record in the batch, else the
        committed one) with its `data` appended. None when that version is not the one the
        append was made to (a change from outside memoryui came between)."""
        odb, out = self.repo.odb, {}
        now: dict[str, bytes | bytearray | str | None] = {}  # path -> content, or a blob id
        crcs: dict[str, int] = {}  # path -> CRC-32 of its content in `now`, once computed
        for r in records:
            if r.base is None:  # a blob id, or the content as journaled (copied only
                now[r.path] = r.blob if r.data is None else r.data  # when appended to)
                crcs.pop(r.path, None)
            else:
                have = now[r.path] if r.path in now else self.blob_at(tree, r.path)
                if isinstance(have, str):
                    kept = self._kept.get(r.path)
                    have = kept[1] if kept is not None and kept[0] == have else \
                        self.repo[have].data if pygit2.Oid(hex=have) in odb else None
                crc = crcs.pop(r.path, None)
                if have is not None and len(have) == r.base and r.crc is not None:
                    # chained: a log's bytes go through CRC-32 once per batch
                    crc = zlib.crc32(r.data, zlib.crc32(have) if crc is None else crc)
                    if crc != r.crc:
                        have = None  # not the version the entry was appended to
                    crcs[r.path] = crc
                if have is not None and len(have) == r.base:
                    if not isinstance(have, bytearray):
                        have = bytearray(have)
                    have += r.data  # in place: appends cost their own size, not the file's
                else:
                    have = None
                    crcs.pop(r.path, None)
                now[r.path] = have
                if r.id in keep:
                    out[r.id] = None if have is None else bytes(have)
        return out

    def _make_blobs(self, records: Iterable[Record], contents: dict[str, bytes | None],
                    leftover: bool = False, made: dict[str, bytes] | None = None
                    ) -> list[str]:
        """The blobs of journaled versions a commit keeps, made now (see Record.data);
        returns the paths whose journaled content does not match its id (or CRC). An
        append whose version cannot be rebuilt is taken from the file when that still is
        the version. An entry's record gets the id of the blob made for it; `made` gets
        path -> the bytes of each blob made for an append."""
        odb, bad = self.repo.odb, []
        made = {} if made is None else made
        for r in records:
            if r.data is None:
                continue
            if r.crc is not None:
                data = contents.get(r.id)
                if data is None:  # not rebuilt: the file may still be it
                    data = walk.read_plain(self.root, r.path)
                    if data is None or len(data) != r.base + len(r.data) \
                            or zlib.crc32(data) != r.crc:
                        data = None
                if data is not None:
                    r.blob = self.create_blob(data)
                    made[r.path] = data
                    continue
            else:
                if not r.blob or pygit2.Oid(hex=r.blob) in odb:
                    continue
                data = contents.get(r.id) if r.base is not None else r.data
                blob = None if data is None else self.create_blob(data)
                if blob != r.blob and r.base is not None:  # not rebuilt: the file may be it
                    data = walk.read_plain(self.root, r.path)
                    blob = None if data is None else self.create_blob(data)
                if blob == r.blob:
                    if r.base is not None:  # (an append: kept for the next; see _keep)
                        made[r.path] = data  # type: ignore[assignment] - equal ids: not None
                    continue
            if not (leftover and r.crc is not None):  # (a replayed entry: most likely
                # committed before the crash, and the log has grown since)
                log.error("journaled content of %s does not match its id; not committed",
                          r.path)
            bad.append(r.path)
        return bad

    def count_commits(self, n: int) -> None:
        """Commits added here or fetched; every 500 the housekeeping runs in the background."""
        self.commits_since_graph += n
        if self.commits_since_graph >= 500:
            self.commits_since_graph = 0
            self.maintain(background=True)

    def _move_branch(self, old: str | None, new: str) -> None:
        ref = self.branch_ref()
        try:
            run_git(self.root, "update-ref", "-m", "memoryui commit", ref, new, old or ZERO)
        except subprocess.CalledProcessError as exc:
            raise branch_not_moved(self.git_dir, exc.stderr.decode(errors="replace")) from None

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
        files, gone, ahead = [], [], []
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
            # Another git process holds the index (or a killed writer left its lock): note
            # the paths, and the next flush refreshes them once the lock is gone or repaired.
            log.warning("index not refreshed: %s", exc)
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
        tree, committed = self.head_tree(), {}
        for path in paths:
            try:
                entry = tree[path] if tree is not None else None
            except KeyError:
                entry = None
            if entry is not None and entry.filemode == pygit2.enums.FileMode.BLOB:
                committed[path] = (str(entry.id), None)
        self.refresh_index(paths, committed)

    def prepare(self) -> None:
        """Give any repository memoryui serves what git needs to answer fast, once.

        A repository memoryui did not create (cloned, imported with `git fast-import`,
        synced) arrives without a commit-graph: `git log -- path` then reads every commit
        (a MEMORY.md's history took 4 s instead of 0.4 s on 200k commits). So: the
        untracked cache (fast `git status`), commit-graphs written by fetch and gc, and a
        first commit-graph with changed-path Bloom filters written in the background.
        `maintain` keeps it current as memoryui adds commits, and turns on git's split index
        once the index is large (`split_index`).
        """
        self.split_index()  # a header read; the index may have grown by sync or by hand
        marker = self.state_dir / "prepared"
        if marker.exists():
            return
        self._configure(PREPARED_CONFIG)
        graph = self.git_dir / "objects" / "info"
        has_graph = (graph / "commit-graph").exists() or \
            (graph / "commit-graphs" / "commit-graph-chain").exists()
        if not has_graph and not self.repo.head_is_unborn:
            self.maintain(background=True)
        try:
            marker.write_text("1\n")
        except OSError:
            pass

    def _configure(self, settings: tuple[tuple[str, str], ...]) -> None:
        """Set git config keys the repository does not have yet (its own choices stand)."""
        try:
            config = self.repo.config
            for key, value in settings:
                if key not in config:
                    config[key] = value
        except pygit2.GitError as exc:  # a read-only config: slower, still correct
            log.warning("could not tune the repository's git config: %s", exc)

    def split_index(self) -> None:
        """Turn on git's split index once the index has SPLIT_INDEX_FROM entries: each commit
        then rewrites only the entries changed since the shared part was written instead
        of the whole index (see `gitindex`). Only when libgit2 is kept off the index,
        and never against the repository's own `core.splitIndex`."""
        if gitindex.DETACHED and gitindex.index_size(self.git_dir) >= SPLIT_INDEX_FROM:
            self._configure(SPLIT_INDEX_CONFIG)

    def maintain(self, background: bool = False) -> None:
        """Housekeeping every 500 commits: pack loose objects, refresh the commit-graph.

        Past LOOSE_OBJECT_LIMIT loose objects, `git repack --geometric=2 -d` packs them and
        rolls small packs together so that each pack holds at least twice the objects of
        the next smaller: its cost follows what was added, not the repository (`git gc`
        repacked everything, 1.5 s of both cores at 20k commits, every few thousand
        writes, and every request waited). It removes only loose objects a pack holds, so
        it is safe beside writers. The commit-graph's Bloom filters make `git log -- path`
        ~8x faster. Unreachable loose objects past git's two weeks' grace are pruned, at
        most daily (PRUNE_FROM). In the background it runs at the lowest CPU priority
        (`nice`).
        """
        self.split_index()
        graph = "git commit-graph write --reachable --changed-paths --split"
        # Reflog entries expire as `git gc` expired them (90 days; 30 for unreachable ones):
        # every tick that commits appends one, up to five a second under agent traffic.
        count = 'n=$(git count-objects | cut -d" " -f1)'
        objects, stamp = (shlex.quote(str(p)) for p in
                          (self.git_dir / "objects", self.state_dir / PRUNED_STAMP))
        past_grace = (f'"$(find {objects}/?? -type f -mmin +{PRUNE_GRACE_MINUTES} '
                      f'-print -quit 2>/dev/null)"')
        pruned_lately = f'"$(find {stamp} -mmin -{PRUNE_EVERY_MINUTES} 2>/dev/null)"'
        script = (f'{count}; [ "$n" -gt {self.loose_object_limit} ] && '
                  f'{{ git repack --geometric=2 -d -q; git reflog expire --all; }}; '
                  f'{count}; [ "$n" -gt {self.prune_from} ] && [ -n {past_grace} ] && '
                  f'[ -z {pruned_lately} ] && '
                  f'{{ git prune --expire=2.weeks.ago; touch {stamp}; }}; {graph}')
        env = {**os.environ, **GIT_ENV}
        # One housekeeping at a time across processes: the lock's descriptor goes to the
        # child, which holds it until it exits (a process finding it held leaves the work
        # to the one running; `wait_for_housekeeping` blocks on it).
        fd = os.open(self.state_dir / HOUSEKEEPING_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if background else 0))
            except BlockingIOError:
                return
            if background:
                # Its own session, so a signal to the server's process group does not reach
                # it; with the scheduler's autogroups (one per session, on by default) `nice`
                # only ranks it inside that session, so the session itself is given nice 19
                # too (else a repack got as much CPU as the whole server: remember's p99
                # doubled).
                script = f"echo 19 > /proc/self/autogroup 2>/dev/null; {script}"
                # kept so tests (and commands) can wait for it; a server never does
                self.maintenance = subprocess.Popen(
                    ["nice", "-n", "19", "sh", "-c", script], cwd=self.root,
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                    start_new_session=True, pass_fds=(fd,))
            else:
                subprocess.run(["sh", "-c", script], cwd=self.root, capture_output=True,
                               env=env)
        finally:
            os.close(fd)  # the lock stays while the child keeps its copy open


def wait_for_housekeeping(root: Path) -> None:
    """Block until no process's background housekeeping runs in the workspace `root` (a
    repack removes the loose objects it packed: a `git fsck` beside it reports them
    missing). Returns at once where memoryui never kept house."""
    try:
        fd = os.open(root / ".git" / "memoryui" / HOUSEKEEPING_LOCK, os.O_RDWR)
    except FileNotFoundError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)
