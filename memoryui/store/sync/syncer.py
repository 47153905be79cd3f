"""A sync round: commit pending writes, fetch, integrate, push — one at a time per clone.

Locks, outermost first: `sync.lock` (one round, resolve, publish or discard at a time across
every process sharing the clone), then the store's commit lock and write lock, held only
while HEAD and the working tree change. Integration computes the merge outside the write
lock, then takes both locks, commits what agents wrote meanwhile and, if that moved HEAD,
merges again from the new tip; it then updates the files and moves the branch with a
compare-and-swap. So an agent write lands before the merge (and is merged) or after it
(on top): never lost. History is only ever added to: no force push, no rewrite.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Iterable

from ..actors import Actor
from ..files import ProcessLock
from ..gitrepo import ZERO, run_git
from ..workspace import Store
from . import curate
from .bootstrap import check
from .config import RemoteConfig, SyncError
from .mergecommit import merge_commit, record_refused
from .merging import Plan, make_plan
from .model import FileState, RoundResult, SyncStatus
from .state import ArrivedLog, StateFile, SyncConflict
from .transport import Transport, TransportError
from .worktree import checkout, refresh_index, undo

log = logging.getLogger("memoryui.sync")

MAX_ATTEMPTS = 3  # a push rejected as non-fast-forward restarts the round this often


class Syncer:
    """Sync of one workspace clone with one remote branch."""

    def __init__(self, store: Store, config: RemoteConfig) -> None:
        self.store = store
        self.config = config
        self.git = store.git
        self.root = store.root
        self.workdir = store.git.state_dir
        self.lock = ProcessLock(self.workdir / "sync.lock")
        self.transport = Transport(self.root, config)
        self.states = StateFile(self.workdir)
        self.arrived = ArrivedLog(self.workdir)
        self._branch: str | None = config.branch
        self.status_cache: tuple[tuple, SyncStatus] | None = None

    # -- the round ---------------------------------------------------------------------
    def round(self, *, blocking: bool = False) -> RoundResult:
        """Commit, fetch, integrate, push. Transport problems land in `error`, never raise."""
        if not self.lock.acquire(blocking):
            return RoundResult(ran=False)
        try:
            result = RoundResult(ran=True)
            push = self.config.push == "auto"
            for attempt in range(1, MAX_ATTEMPTS + 1):
                result.attempts = attempt
                try:
                    if not self._attempt(result, push):
                        break
                except SyncError as exc:
                    result.error = self.config.mask(str(exc))
                    break
                except Exception as exc:  # noqa: BLE001 - a round must never kill its thread
                    log.exception("sync round failed")
                    result.error = self.config.mask(f"unexpected error: {exc}")
                    break
            else:
                result.error = (f"the remote kept moving: the push was rejected {MAX_ATTEMPTS} "
                                "times; the next round tries again")
            self._record(result)
            return result
        finally:
            self.lock.release()

    def _attempt(self, result: RoundResult, push: bool) -> bool:
        """One pass; True when the push lost a race and the round should start over."""
        tip = self.fetch_and_integrate(result)
        if not push:
            return False
        if self.states.read().conflicts:
            result.paused = True
            return False
        head = self.store.head()
        if head is None or head == tip:
            return False
        outcome = self.transport.push(head, self.branch())
        if outcome.ok:
            self._set_tracking(head)
            result.pushed = True
            now = time.time()
            self.states.update(lambda s: setattr(s, "last_push", now))
            return False
        if outcome.rejected:
            log.info("sync: push rejected (the remote moved); starting the round over")
            return True
        raise TransportError(outcome.message)

    def fetch_and_integrate(self, result: RoundResult) -> str | None:
        """Commit pending writes, fetch, and take in whatever the remote has new."""
        self.store.sync()
        if self.states.read().bootstrapped != self.config.display_url():
            check(self.root, self.config)  # never vetted against this remote (e.g. it was down)
        branch = self.branch()
        tip = self.transport.fetch(branch)
        result.fetched = True
        now = time.time()

        def fetched(s) -> None:
            s.last_fetch, s.remote_tip = now, tip
        self.states.update(fetched)
        if tip is not None:
            self.integrate(tip, result)
        return tip

    def branch(self) -> str:
        """The configured branch, else the remote's default (asked once), else main."""
        if self._branch:
            return self._branch
        state = self.states.read()
        if state.branch and state.remote == self.config.display_url():
            self._branch = state.branch
            return state.branch
        branch = self.transport.default_branch() or "main"
        url = self.config.display_url()

        def remember(s) -> None:
            s.branch, s.remote = branch, url
        self.states.update(remember)
        self._branch = branch
        return branch

    # -- integration -------------------------------------------------------------------
    def integrate(self, tip: str, result: RoundResult, exclude: Iterable[str] = ()) -> Plan | None:
        """Bring commit `tip` into HEAD (fast-forward or merge); None when already there."""
        repo = self.git.repo
        ours = self.store.head()
        if ours == tip or (ours is not None and repo.descendant_of(ours, tip)):
            return None
        state = self.states.read()
        conflicts = state.conflicts
        unrelated_ok = state.bootstrapped == self.config.display_url()
        plan = make_plan(repo, self.store.layout, ours, tip, conflicts, self.workdir, time.time(),
                         unrelated_ok)
        with self.git.commit_lock, self.git.write_lock:
            self.git.flush()  # re-entrant: commits what agents wrote while we planned
            current = self.git.head()
            if current != ours:
                ours = current
                if ours == tip or (ours is not None and repo.descendant_of(ours, tip)):
                    return None
                plan = make_plan(repo, self.store.layout, ours, tip, conflicts, self.workdir,
                                 time.time(), unrelated_ok)
            new = tip if plan.fast_forward else merge_commit(repo, plan, self.branch())
            done = checkout(repo, self.root, ours, new, self.workdir)
            try:
                self._move_head(ours, new)
            except SyncError:
                undo(self.root, done)
                raise
            refresh_index(repo, self.root, new, done.paths)
            arrived = self._arrivals(ours, tip, set(exclude))
            self.arrived.add(arrived)
        if plan.conflicts:
            def record(s) -> None:
                s.conflicts.update(plan.conflicts)
            self.states.update(record)
        record_refused(repo, self.states, plan)
        result.integrated += len(arrived)
        self.git.count_commits(len(arrived))  # fetches never write the commit-graph themselves
        result.conflicts += [p for p in plan.conflicts if p not in result.conflicts]
        if done.kept:
            log.warning("sync: outside changes kept as pending changes: %s", done.kept[:5])
        self.store.rescan_secrets(done.paths)  # arrivals are flagged, never refused
        self.store.notify(done.paths)
        return plan

    def _move_head(self, old: str | None, new: str) -> None:
        """Compare-and-swap the branch, like the committer: a lost race fails loudly."""
        try:
            run_git(self.root, "update-ref", "-m", "memoryui sync", self.git.branch_ref(), new,
                    old or ZERO)
        except subprocess.CalledProcessError as exc:
            raise SyncError("the branch moved during integration (another git client?): "
                            + exc.stderr.decode(errors="replace").strip()) from None

    def _set_tracking(self, sha: str) -> None:
        run_git(self.root, "update-ref", self.transport.tracking_ref(self.branch()), sha)

    def _arrivals(self, ours: str | None, tip: str, exclude: set[str]) -> list[str]:
        args = ["rev-list", tip] + ([f"^{ours}"] if ours else [])
        out = run_git(self.root, *args, check=False).decode().split()
        return [s for s in out if len(s) == 40 and s not in exclude]

    def _record(self, result: RoundResult) -> None:
        now = time.time()

        def record(s) -> None:
            s.last_round = now
            if result.error:
                s.last_error, s.last_error_at = result.error, now
            else:
                s.last_error = None
        self.states.update(record)
        if result.error:
            log.warning("%s", result.summary())
        elif result.integrated or result.pushed or result.conflicts:
            log.info("%s", result.summary())

    # -- reading -----------------------------------------------------------------------
    def tracking_tip(self) -> str | None:
        """The remote's tip as of the last fetch."""
        ref = self.git.repo.references.get(self.transport.tracking_ref(self.branch_cached()))
        return str(ref.resolve().target) if ref is not None else None

    def branch_cached(self) -> str:
        """The branch without asking the remote (status must stay cheap)."""
        if self._branch:
            return self._branch
        return self.states.read().branch or "main"

    def status(self) -> SyncStatus:
        return curate.status(self)

    def conflict(self, path: str) -> SyncConflict | None:
        return self.states.read().conflicts.get(path)

    def arrived_from_remote(self, shas: Iterable[str]) -> set[str]:
        """Which of these commits came from the remote (fetched, integrated, not made here)."""
        return set(shas) & self.arrived.all()

    # -- curation (curate.py) ----------------------------------------------------------
    def file_states(self, *, include_synced: bool = False) -> list[FileState]:
        return curate.file_states(self, include_synced=include_synced)

    def compare_texts(self, path: str) -> tuple[str | None, str | None]:
        return curate.compare_texts(self, path)

    def conflict_texts(self, path: str) -> tuple[str | None, str | None, str | None]:
        return curate.conflict_texts(self, path)

    def resolve(self, path: str, text: str | None, *, actor: Actor, message: str | None = None,
                expect_theirs: str | None = None, expect: str | None = None) -> str:
        return curate.resolve(self, path, text, actor=actor, message=message,
                              expect_theirs=expect_theirs, expect=expect)

    def publish(self, paths: list[str] | None, *, actor: Actor, message: str) -> RoundResult:
        return curate.publish(self, paths, actor=actor, message=message)

    def discard(self, paths: list[str], *, actor: Actor) -> list[str]:
        return curate.discard(self, paths, actor=actor)
