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

from ..gitcli import run_git
from ..gitindex import IndexBusy
from ..gitobjects import ZERO
from ..locks import ProcessLock
from ..workspace import Store
from .bootstrap import check
from .config import RemoteConfig, SyncError
from .mergecommit import merge_commit, record_refused
from .merging import Plan, make_plan
from .model import RoundResult, SyncStatus
from .proposalrefs import exchange
from .state import ArrivedLog, StateFile, SyncConflict
from .transport import Transport, TransportError
from .worktree import checkout, refresh_index, undo

log = logging.getLogger("memoryui.sync")

RETRY_WINDOW = 10.0  # seconds a round keeps retrying lost push races, at least
PACK_BACKLOG_FROM = 64  # commits to push from which they are packed before the push


class Rounds:
    """Sync of one workspace clone with one remote branch: the rounds, integration and what
    they record (`Syncer` adds the curation of what the remote holds)."""

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
        self._rescanned = False  # the remote's whole tree was checked once in this process

    # -- the round ---------------------------------------------------------------------
    def retry_window(self) -> float:
        """How long a round retries lost push races: an interval (10 s at least), never
        longer than one git command may take."""
        return min(max(self.config.interval, RETRY_WINDOW), self.config.timeout)

    def round(self, *, blocking: bool = False) -> RoundResult:
        """Commit, fetch, integrate, push. Transport problems land in `error`, never raise.

        A push that loses a race (the remote moved since the fetch) is retried at once,
        until `retry_window` has passed: the retry fetches and integrates only what is new
        since the remote tip just integrated, and pushes again."""
        if not self.lock.acquire(blocking):
            return RoundResult(ran=False)
        try:
            result = RoundResult(ran=True)
            push = self.config.push == "auto"
            deadline = time.monotonic() + self.retry_window()
            anchor: str | None = None
            while True:
                result.attempts += 1
                try:
                    lost, anchor = self._attempt(result, push, anchor)
                    if not lost:
                        break
                except SyncError as exc:
                    result.error = self.config.mask(str(exc))
                    break
                except Exception as exc:  # noqa: BLE001 - a round must never kill its thread
                    log.exception("sync round failed")
                    result.error = self.config.mask(f"unexpected error: {exc}")
                    break
                if time.monotonic() >= deadline:
                    result.error = (f"the remote kept moving: the push was rejected "
                                    f"{result.attempts} times in {self.retry_window():g} s; "
                                    "the next round tries again")
                    break
            self._record(result)  # the workspace's status first: proposals never delay it
            if result.error is None:
                self._proposals(push)
            return result
        finally:
            self.lock.release()

    def _proposals(self, push: bool) -> None:
        """Exchange the proposals' refs (proposalrefs.py); a failure waits for the next round."""
        try:
            exchange(self.store, self.transport, push)
        except Exception:  # noqa: BLE001 - the workspace's sync is done; never undo it
            log.exception("sync: proposals not exchanged")

    def _attempt(self, result: RoundResult, push: bool,
                 anchor: str | None) -> tuple[bool, str | None]:
        """One pass: (lost a push race, the remote tip now in HEAD)."""
        tip = self.fetch_and_integrate(result, anchor)
        if not push:
            return False, tip
        if self.states.read().conflicts:
            result.paused = True
            return False, tip
        head = self.store.head()
        if head is None or head == tip:
            return False, tip
        if anchor is None:  # the round's first push
            self._pack_backlog(head, tip)
        outcome = self.transport.push(head, self.branch())
        if outcome.ok:
            self._set_tracking(head)
            result.pushed = True
            now = time.time()
            self.states.update(lambda s: setattr(s, "last_push", now))
            return False, head
        if outcome.rejected:
            log.info("sync: push rejected (the remote moved); trying again")
            return True, tip
        raise TransportError(outcome.message)

    def _pack_backlog(self, head: str, tip: str | None) -> None:
        """Pack the commits the remote lacks when there are many, before pushing them.

        A push packs what it sends; from loose objects (how commits are kept until the
        housekeeping) that took seconds at a thousand commits, while native hosts pushed
        every second: the push lost its race, each retry packed it all again, and the
        backlog grew. Packed here once, outside the race, every push copies the pack."""
        repo = self.git.repo
        if tip is not None and repo.ahead_behind(head, tip)[0] < PACK_BACKLOG_FROM:
            return
        spec = f"{head}\n" + (f"^{tip}\n" if tip else "")
        try:
            run_git(self.root, "pack-objects", "--revs", "--incremental", "-q",
                    str(self.git.git_dir / "objects" / "pack" / "pack"), input=spec.encode())
        except subprocess.CalledProcessError as exc:  # only slower: the push packs them
            log.warning("sync: could not pack the commits to push: %s",
                        exc.stderr.decode(errors="replace").strip())

    def fetch_and_integrate(self, result: RoundResult, anchor: str | None = None) -> str | None:
        """Commit pending writes, fetch, and take in whatever the remote has new.

        `anchor`: a remote commit HEAD already holds (this round integrated it); then only
        what the remote added since is fetched and merged."""
        self.store.sync()
        if self.states.read().bootstrapped != self.config.display_url():
            check(self.root, self.config)  # never vetted against this remote (e.g. it was down)
        branch = self.branch()
        tip = self.transport.fetch(branch, negotiate=anchor or self.tracking_tip())
        result.fetched = True
        now = time.time()

        def fetched(s) -> None:
            s.last_fetch, s.remote_tip = now, tip
        self.states.update(fetched)
        if tip is not None:
            self.integrate(tip, result, anchor=anchor)
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
    def integrate(self, tip: str, result: RoundResult, exclude: Iterable[str] = (),
                  anchor: str | None = None) -> Plan | None:
        """Bring commit `tip` into HEAD (fast-forward or merge); None when already there.

        With `anchor` (a remote commit HEAD holds) and `tip` its descendant, `anchor` is the
        merge base: nothing walks HEAD's own history, so the cost follows what is new."""
        repo = self.git.repo
        ours = self.store.head()
        if anchor is not None and tip != anchor and not repo.descendant_of(tip, anchor):
            anchor = None  # the remote's branch went back past it: the full way
        if ours == tip or tip == anchor or \
                (anchor is None and ours is not None and repo.descendant_of(ours, tip)):
            return None
        state = self.states.read()
        conflicts = state.conflicts
        unrelated_ok = state.bootstrapped == self.config.display_url()
        plan = make_plan(repo, self.store.layout, ours, tip, conflicts, self.workdir, time.time(),
                         unrelated_ok, base=anchor, rescan=not self._rescanned)
        with self.git.commit_lock, self.git.write_lock:
            self.git.flush()  # re-entrant: commits what agents wrote while we planned
            current = self.git.head()
            if current != ours:
                ours = current
                if ours == tip or \
                        (anchor is None and ours is not None and repo.descendant_of(ours, tip)):
                    return None
                plan = make_plan(repo, self.store.layout, ours, tip, conflicts, self.workdir,
                                 time.time(), unrelated_ok, base=anchor,
                                 rescan=not self._rescanned)
            new = tip if plan.fast_forward else merge_commit(repo, plan, self.branch())
            done = checkout(repo, self.root, ours, new, self.workdir)
            try:
                self._move_head(ours, new)
            except SyncError:
                undo(self.root, done)
                raise
            self.git.moved(ours, new)  # the committer's listeners hear of it once, below
            try:
                refresh_index(repo, self.root, new, done.paths)
            except IndexBusy as exc:
                log.warning("sync: index not refreshed (%s); the next commit tick stages "
                            "what the round brought", exc)
                self.git.index_missed(done.paths)
            self._rescanned = True
            arrived = self._arrivals(anchor or ours, tip, set(exclude))
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

    def _arrivals(self, known: str | None, tip: str, exclude: set[str]) -> list[str]:
        """The commits of `tip` not in `known` (HEAD, or a remote commit it holds)."""
        args = ["rev-list", tip] + ([f"^{known}"] if known else [])
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

    def conflict(self, path: str) -> SyncConflict | None:
        return self.states.read().conflicts.get(path)

    def arrived_from_remote(self, shas: Iterable[str]) -> set[str]:
        """Which of these commits came from the remote (fetched, integrated, not made here)."""
        return set(shas) & self.arrived.all()
