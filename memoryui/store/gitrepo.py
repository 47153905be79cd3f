"""The commit engine: a write-ahead journal turned into attributed git commits.

A write stores its blob at once (libgit2 writes an object in about a millisecond, where
staging through git's index costs tens of milliseconds on a large repository) and appends a
journal record under the workspace lock; `flush` turns the journal into commits (one per
author and message), moves the branch with a compare-and-swap `git update-ref` (a lost
race fails loudly and the batch is retried, never dropped), then refreshes only the
touched index entries so `git status` stays truthful (`staging.py`). A crash leaves the
journal or a batch file behind and the next flush commits it with its original authors.

`GitRepo` is this engine over its parts: objects and refs (`gitobjects.py`), the index
(`staging.py`) and housekeeping (`housekeeping.py`).
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

import pygit2

from . import committed as committed_writes
from . import walk
from .actors import Actor
from .doorbell import Doorbell
from .files import disk_errors
from .gitcli import run_git
from .gitobjects import ZERO
from .housekeeping import Housekeeping
from .journaled import append_line
from .locks import ProcessLock, SharedProcessLock
from .records import Record, apply_changes, commit_message, group_records
from .room import branch_not_moved
from .staging import Staging

log = logging.getLogger("memoryui.store")

PATH_LOCKS = 64
# A commit keeps the bytes of the logs it appended to, up to this much, so the next tick
# appends a log's entries to them instead of reading its blob back and inflating it once
# per author and tick. Least recent go first.
COMMITTED_BYTES = 8 << 20


class GitRepo(Staging, Housekeeping):
    """The workspace repository and its commit engine, shared by one process's threads."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.journal = self.state_dir / "journal.jsonl"
        self.bell = Doorbell(self.state_dir)  # rung by the first record of a journal
        # Called with (paths, commit time) after each commit a flush makes (set by the Store:
        # its listeners, the search index, hear of what this process commits).
        self.on_commit: Callable[[list[str], float], None] | None = None
        # Set in the committer process only (`follow`): called with the paths of commits other
        # processes made (a worker standing in for it), which it then indexes for them.
        self.on_others: Callable[[list[str]], None] | None = None
        self._followed: str | None = None  # the tip `follow` last saw or this process made
        # exclusive: the tree as a whole; shared + a path lock: one file (Store.update)
        self.write_lock = SharedProcessLock(self.state_dir / "write.lock")
        self.commit_lock = ProcessLock(self.state_dir / "commit.lock")
        self.journal_lock = ProcessLock(self.state_dir / "journal.lock")
        self._path_locks: dict[int, ProcessLock] = {}
        self._holding_since: float | None = None
        self._kept: OrderedDict[str, tuple[str, bytes]] = OrderedDict()  # path -> blob, bytes
        self._kept_size = 0

    def path_lock(self, path: str) -> ProcessLock:
        """The lock of one path (one of PATH_LOCKS, by hash), taken inside the write lock
        held shared: writes to one file keep their order, writes to others do not wait."""
        n = zlib.crc32(path.encode()) % PATH_LOCKS
        lock = self._path_locks.get(n)
        if lock is None:
            lock = self._path_locks.setdefault(
                n, ProcessLock(self.state_dir / "locks" / f"{n:02d}.lock"))
        return lock

    def record(self, rec: Record) -> None:
        """Append a record; the caller holds the file's path lock (or the write lock) so
        the records of one file are in the order its versions were written."""
        if not rec.id:
            rec.id = uuid.uuid4().hex
        if not rec.time:
            rec.time = time.time()
        with disk_errors(self.state_dir), self.journal_lock:
            first = append_line(self.journal, rec.to_json()) == 0
        if first:
            self.bell.ring()  # an idle committer sleeps until a journal begins

    def has_uncommitted(self) -> bool:
        """Writes wait to be committed, or index entries a failed refresh left stale (the
        next flush retries them, so that a server with nothing more to write never leaves
        them stale: `git status` would show its committed entries as changes, and a person's
        `git commit` would revert them)."""
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

    def journaled_paths(self) -> set[str]:
        """The paths of writes journaled and not yet committed (the journal and the batches
        a tick is committing): what a reader catching up with writes looks at."""
        found: set[str] = set()
        try:
            with os.scandir(self.state_dir) as entries:
                names = [e.name for e in entries if e.name == self.journal.name
                         or (e.name.startswith("batch-") and e.name.endswith(".jsonl"))]
        except FileNotFoundError:
            return found
        for name in names:
            try:
                data = (self.state_dir / name).read_bytes()
            except FileNotFoundError:
                continue  # committed meanwhile: HEAD has it
            for line in data.splitlines():
                try:
                    found.add(Record.from_json(line).path)
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line: its write was never acknowledged
        return found

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

    def follow(self) -> None:
        """Tell `on_others` what the commits made by other processes since this one last
        looked changed (the committer, after a tick that had nothing to commit)."""
        if self.on_others is None or not self.commit_lock.acquire(False):
            return
        try:
            self._follow(self.head())
        finally:
            self.commit_lock.release()

    def moved(self, old: str | None, new: str) -> None:
        """(Under the commit lock) This process moved the branch from `old` to `new` and
        tells its listeners of those paths itself (a sync round): what others committed up
        to `old` is followed now, and `new` counts as seen, so nothing is indexed twice."""
        if self.on_others is not None:
            self._follow(old)
            self._followed = new

    def _follow(self, head: str | None) -> None:
        """(Under the commit lock, so no commit slips between the two tips.)"""
        seen = self._followed
        if self.on_others is None or head == seen:
            return
        self._followed = head
        if seen is None or head is None:
            return  # the first look: what came before is the index's catch-up's
        try:
            diff = self.repo.diff(seen, head)
        except (KeyError, ValueError, pygit2.GitError):
            return  # history the catch-up scan takes in
        paths = {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)}
        try:
            self.on_others(sorted(paths))
        except Exception:  # noqa: BLE001 - the commits stand; the catch-up scan repairs
            log.exception("listener for other processes' commits failed")

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
        self._follow(parent)
        base_tree = repo[parent].peel(pygit2.Tree) if parent else None
        if leftover:
            # A crash after the branch moved but before the batch was removed must not
            # replay old versions: skip paths whose final version is already committed.
            final = {r.path: r.blob for r in records}
            done = {p for p, b in final.items() if self.blob_at(base_tree, p) == b}
            records = [r for r in records if r.path not in done]
        groups = group_records(records)
        keeps = [{r.path: r for r in group} for group in groups]  # the last of a path in each
        contents = self._rebuild(records, {r.id for kept in keeps for r in kept.values()},
                                 base_tree)
        tip, tree = parent, base_tree
        result: dict[str, str] = {}
        made: list[tuple[list[str], float]] = []  # each commit's paths and time
        committed: dict[str, tuple[str, bytes | None] | None] = {}  # path -> (blob, bytes)
        for group, kept in zip(groups, keeps, strict=True):
            data: dict[str, bytes] = {}
            bad = set(self._make_blobs(kept.values(), contents, leftover, data))
            # (a bad one is left to show as a pending change, never committed wrong)
            changes: dict[str, str | tuple[str, int] | None] = {
                r.path: r.blob for r in kept.values() if r.path not in bad}
            new_tree = apply_changes(repo, tree, changes)
            if tree is not None and new_tree == tree.id:
                continue
            for r in kept.values():
                if r.path not in bad:
                    committed[r.path] = None if r.blob is None else (r.blob, data.get(r.path))
            actor = group[0].actor
            when = int(max(r.time for r in group))
            sig = pygit2.Signature(actor.name, actor.email, when, 0)
            message = commit_message(group)
            oid = repo.create_commit(None, sig, sig, message, new_tree,
                                     [pygit2.Oid(hex=tip)] if tip else [])
            tip, tree = str(oid), cast(pygit2.Tree, repo[new_tree])
            made.append((list(changes), when))
            for r in group:
                result[r.id] = tip
        if tip is not None and tip != parent:
            self._move_branch(parent, tip)
            if self.on_others is not None:
                self._followed = tip
        committed_writes.note(self.state_dir, result)  # a deferred write's link (committed.py)
        self.refresh_index({r.path for r in records}, committed)
        self._keep(committed)
        batch.unlink(missing_ok=True)
        self.count_commits(len(set(result.values())))
        if self.on_commit is not None:
            for paths, at in made:
                try:
                    self.on_commit(paths, at)
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
                assert r.data is not None  # (an append journals its bytes)
                have = now[r.path] if r.path in now else self.blob_at(tree, r.path)
                if isinstance(have, str):
                    kept = self._kept.get(r.path)
                    have = kept[1] if kept is not None and kept[0] == have else \
                        cast(pygit2.Blob, self.repo[have]).data \
                        if pygit2.Oid(hex=have) in odb else None
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
                assert r.base is not None  # (an entry is an append)
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
                    if r.base is not None and data is not None:  # (an append: kept for the
                        made[r.path] = data  # next; see _keep)
                    continue
            if not (leftover and r.crc is not None):  # (a replayed entry: most likely
                # committed before the crash, and the log has grown since)
                log.error("journaled content of %s does not match its id; not committed",
                          r.path)
            bad.append(r.path)
        return bad

    def _move_branch(self, old: str | None, new: str) -> None:
        ref = self.branch_ref()
        try:
            run_git(self.root, "update-ref", "-m", "memoryui commit", ref, new, old or ZERO)
        except subprocess.CalledProcessError as exc:
            raise branch_not_moved(self.git_dir, exc.stderr.decode(errors="replace")) from None
