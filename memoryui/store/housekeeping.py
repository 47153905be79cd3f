"""Housekeeping of the workspace repository: what git needs to answer fast (commit-graph,
untracked cache, split index) and packing loose objects, run in the background at the
lowest CPU priority, one process at a time.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pygit2

from . import gitindex
from .gitcli import git_env
from .gitobjects import GitObjects

log = logging.getLogger("memoryui.store")

COMMITS_BETWEEN = 500  # commits added or fetched between two background housekeepings
LOOSE_OBJECT_LIMIT = 5000
# Loose objects no commit holds (a CAS retry's commit, a version an outside tool hashed) are
# left by the repack, which packs only what is reachable. `git prune` removes those older
# than git gc's own grace of two weeks (never an object a writer is about to use), but it
# walks every reachable object (tens of seconds of CPU and hundreds of MB on a long
# history), so it runs only when this many loose objects are left after the repack, one
# of them past the grace, and not within a day of the last prune.
PRUNE_FROM = 500
PRUNE_GRACE_MINUTES = 14 * 24 * 60
PRUNE_EVERY_MINUTES = 24 * 60
PRUNED_STAMP = "pruned"  # touched after each prune
PREPARED_CONFIG = (
    ("core.untrackedCache", "true"),
    ("core.commitGraph", "true"),
    ("fetch.writeCommitGraph", "true"),
)
# Below this many entries a whole index is a few hundred KB; above, each commit tick would
# rewrite megabytes (see gitindex). The shared part is rewritten once 2 % of the entries are
# new (git counts added entries only; changed ones stay in the split part) and old shared
# parts are removed a day after their last use (git's defaults: 20 %, two weeks).
SPLIT_INDEX_FROM = 2000
HOUSEKEEPING_LOCK = "housekeeping.lock"  # held by the one housekeeping running (`maintain`)
SPLIT_INDEX_CONFIG = (
    ("core.splitIndex", "true"),
    ("splitIndex.maxPercentChange", "2"),
    ("splitIndex.sharedIndexExpire", "1.day.ago"),
)


class Housekeeping(GitObjects):
    """The housekeeping part of `GitRepo`: `prepare` once, `maintain` as commits add up."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.commits_since_graph = 0
        self.loose_object_limit = LOOSE_OBJECT_LIMIT
        self.prune_from = PRUNE_FROM
        self.maintenance: subprocess.Popen[bytes] | None = None  # the last one in the background

    def count_commits(self, n: int) -> None:
        """Commits added here or fetched; every COMMITS_BETWEEN the housekeeping runs in the
        background."""
        self.commits_since_graph += n
        if self.commits_since_graph >= COMMITS_BETWEEN:
            self.commits_since_graph = 0
            self.maintain(background=True)

    def prepare(self) -> None:
        """Give any repository memoryui serves what git needs to answer fast, once.

        A repository memoryui did not create (cloned, imported with `git fast-import`,
        synced) arrives without a commit-graph: `git log -- path` then reads every commit,
        which takes seconds on a long history. So: the
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
        """Housekeeping every COMMITS_BETWEEN commits: pack loose objects, refresh the commit-graph.

        Past LOOSE_OBJECT_LIMIT loose objects, `git repack --geometric=2 -d` packs them and
        rolls small packs together so that each pack holds at least twice the objects of
        the next smaller: its cost follows what was added, not the repository (`git gc`
        repacks everything, and requests would wait for it). It removes only loose objects
        a pack holds, so it is safe beside writers. The commit-graph's Bloom filters let
        `git log -- path` skip the commits that do not touch the path. Unreachable loose
        objects past git's two weeks' grace are pruned, at
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
        env = git_env()
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
                # too (else a repack gets as much CPU as the whole server, and agents'
                # writes wait).
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


@contextmanager
def housekeeping_paused(root: Path) -> Iterator[None]:
    """Hold off memoryui's background housekeeping in the workspace `root` for the block,
    once the one running (if any) has ended: a git command run by hand beside it (a fetch
    that writes the commit-graph, `git fsck` while a repack removes the loose objects it
    packed) would find its lock files taken or its objects gone. A housekeeping due
    meanwhile is left to the next one. Does nothing where memoryui never kept house."""
    try:
        fd = os.open(root / ".git" / "memoryui" / HOUSEKEEPING_LOCK, os.O_RDWR)
    except FileNotFoundError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def wait_for_housekeeping(root: Path) -> None:
    """Block until no process's background housekeeping runs in the workspace `root`."""
    with housekeeping_paused(root):
        pass
