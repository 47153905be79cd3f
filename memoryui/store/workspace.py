"""The workspace: one object that every tool, view and command writes and reads through.

`Store` is a facade: paths, reads and the commit cadence live here;
the write primitive in `writing.py` (entries appended in `appending.py`, renames and folder
moves in `moving.py`), history and pending changes in `reading.py`. `from memoryui.store
import Store` is all a caller needs.
"""

from __future__ import annotations

import logging
import os
import re
import weakref
from collections.abc import Callable
from pathlib import Path

from memoryui.secrets import Guard

from . import names, walk
from .appending import MAX_FILE_BYTES  # noqa: F401 (re-exported)
from .committer import Committer
from .errors import InvalidName
from .gitrepo import GitRepo
from .layout import Address, Kind, Layout, get_layout
from .locks import ProcessLock
from .moving import Moving
from .reading import HistoryReads, PendingChanges
from .writing import ABSENT, DELETE, WriteResult, version_of  # noqa: F401 (re-exported)

log = logging.getLogger("memoryui.store")

_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,150}")  # passes validate_relpath


class Store(Moving, HistoryReads, PendingChanges):
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
        ref = weakref.ref(self)  # (no cycle: a dropped Store is freed at once)

        def committed(paths: list[str], when: float) -> None:
            store = ref()
            if store is not None:
                store._committed(paths, when)

        self.git.on_commit = committed
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
        if not self.committer.start(wait):
            return False
        self.git.on_others = self._others_committed
        return True

    def _committed(self, paths: list[str], when: float) -> None:
        # A worker standing in for a live committer that falls behind (its core busy with
        # requests) makes the commits only: the committer indexes them once it runs
        # (`_others_committed`), so the worker never loads the embedding model for them.
        if self.committer.standing_in:
            self.host_indexes.update(paths)
        else:
            self.host_indexes.difference_update(paths)
        self._tell(paths, when)

    def _others_committed(self, paths: list[str]) -> None:
        """(The committer) Commits another process made: listeners index them here."""
        self._tell(paths, None)

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

    # -- scopes ----------------------------------------------------------------------
    def scopes(self) -> list[str]:
        return self.layout.list_scopes(self.root)
