"""Files as index documents: read through the store's one walker, never through a link.

Every file the index reads is listed by `walk` and opened by `read_stat_nofollow`, so a
symbolic link planted in the workspace (to a secret outside it) is never read, indexed or shown.

When did a file change? The time of its last commit, when the file on disk is exactly what
git has at HEAD (so a fresh clone, a sync round or a backdated import shows git's dates,
not the checkout time); otherwise the moment the index saw it change (a memoryui write not
yet committed, an edit outside memoryui still pending).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memoryui.store import InvalidName, Kind
from memoryui.store.gitcli import run_git
from memoryui.store.names import validate_relpath
from memoryui.store.walk import read_stat_nofollow

from .catalogue import Catalogue
from .snippets import MARK_END, MARK_START

if TYPE_CHECKING:
    import pygit2

    from memoryui.store import Store

log = logging.getLogger("memoryui.search")

MAX_INDEXED_BYTES = 1024 * 1024  # text beyond this is not indexed (the store caps files at 4 MB)
# A heading, but not Duragent's "## HH:MM" entry header: a timestamp, not a heading (a busy
# daily log holds thousands, and skipping them here halves the scan).
_HEADING_RE = re.compile(r"^#{1,6}[ \t]+(?![ \t]*\d{1,2}:\d{2}[ \t#]*$)(.+?)[ \t#]*$", re.M)
_TIME_PREFIX_RE = re.compile(r"^\d{1,2}:\d{2}\s*[\u2014-]\s*")
_UNSET = object()
BULK_READ = 200  # files past which HEAD's blobs are listed once rather than looked up each


@dataclass
class Doc:
    path: str
    name: str
    title: str
    body: str
    scope: str  # the owning scope (Layout.scope_of), "" when none
    kind: str
    date: str
    recency: float
    size: int
    mtime_ns: int
    shared: bool  # Layout.is_shared: every scope token may read it


def stamp(mtime: float) -> int:
    """The stored change stamp of a file (the walker gives float seconds)."""
    return int(mtime * 1_000_000_000)


def title_of(body: str) -> str:
    parts: dict[str, None] = {}  # in order, once each
    for m in _HEADING_RE.finditer(body):
        h = _TIME_PREFIX_RE.sub("", m.group(1).strip())
        if h:
            parts[h] = None
    return " \u00b7 ".join(parts)


def git_blob_id(data: bytes, length: int = 40) -> str:
    """The id git gives these bytes as a blob (sha-1, or sha-256 in such repositories)."""
    algo = hashlib.sha256 if length == 64 else hashlib.sha1
    return algo(b"blob %d\x00" % len(data) + data).hexdigest()


def head_blobs(store: Store) -> dict[str, str]:
    """path -> blob id of every file at HEAD, in one `git ls-tree` (for whole-tree passes)."""
    head = store.git.head()
    if head is None:
        return {}
    out = {}
    for rec in run_git(store.root, "ls-tree", "-r", "-z", head).split(b"\0"):
        meta, _, name = rec.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            out[os.fsdecode(name)] = parts[2].decode()
    return out


class DocReader:
    """Reads files as documents; looks at git's HEAD (lazily, once) for change times.

    `bulk=True` for many files at once: HEAD's blobs are listed in one `git ls-tree` instead
    of looked up per file (a lookup costs about as much as listing 100 files).
    """

    def __init__(self, store: Store, *, bulk: bool = False) -> None:
        self.store = store
        self.bulk = bulk
        self._tree: pygit2.Tree | None = None
        self._tree_read = False
        self._blobs: dict[str, str] | None = None
        self._catalogue: object = _UNSET
        self._times: Mapping[str, int] | None = None  # bulk: every file's commit time

    def read(self, path: str, seen: float | None = None, exact: bool = False) -> Doc | None:
        """The document for `path`, or None when it is gone or may not be read. `seen`: when
        it was seen to change; `exact`: that is its commit's time, so git is not asked."""
        try:
            validate_relpath(path)  # listeners pass paths too: never '..', never hidden
            # stat, then read, from the open file: a racing change leaves a newer stamp
            found = read_stat_nofollow(self.store.root, path)
        except (OSError, InvalidName):
            return None
        if found is None:
            return None
        data, st = found
        when = seen if exact else self._commit_time(path, data)
        if when is None:
            when = st.st_mtime if seen is None else seen
        return self._doc(path, data, when, st.st_size, stamp(st.st_mtime))

    def _commit_time(self, path: str, data: bytes) -> float | None:
        """The file's last commit time if the bytes are HEAD's, else None."""
        try:
            blob = self._head_blob(path)
            if blob is None or blob != git_blob_id(data, len(blob)):
                return None
            when = self._last_commit_time(path)
        except Exception:  # noqa: BLE001 - git trouble must not stop indexing: use the seen time
            log.debug("no commit time for %s", path, exc_info=True)
            return None
        return float(when) if when else None

    def _last_commit_time(self, path: str) -> int | None:
        """The time of the path's last commit, as the file catalogue has it (none while a
        large workspace is first catalogued)."""
        if self._catalogue is _UNSET:
            self._catalogue = Catalogue.ready(self.store)
        cat = self._catalogue
        if not isinstance(cat, Catalogue):
            return None
        if self.bulk:
            if self._times is None:
                self._times = cat.commit_times()
            return self._times.get(path)
        e = cat.entry(path)
        return e.last["time"] if e is not None and e.last else None

    def _head_blob(self, path: str) -> str | None:
        if self.bulk:
            if self._blobs is None:
                self._blobs = head_blobs(self.store)
            return self._blobs.get(path)
        if not self._tree_read:
            self._tree, self._tree_read = self.store.git.head_tree(), True
        return self.store.git.blob_at(self._tree, path)

    def _doc(self, path: str, data: bytes, when: float, size: int, mtime_ns: int) -> Doc:
        head = data[:MAX_INDEXED_BYTES]
        body = "" if b"\x00" in head[:8192] else head.decode("utf-8", "replace")
        body = body.replace(MARK_START, " ").replace(MARK_END, " ")
        layout = self.store.layout
        addr = layout.address(path)
        kind = addr.kind.value if addr else ""
        base = path.rsplit("/", 1)[-1]
        name = addr.name if addr and addr.name else base.rsplit(".", 1)[0]
        date = name if kind == Kind.DAILY.value else \
            dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y-%m-%d")
        return Doc(path, name, title_of(body), body, layout.scope_of(path) or "", kind, date,
                   float(when), size, mtime_ns, layout.is_shared(path))


def read_docs(store: Store, changed: Mapping[str, float | None],
              exact: Collection[str] = ()) -> tuple[list[Doc], list[str]]:
    """Documents for the changed paths (each with when it was seen to change, or None; for
    those in `exact`, that is their commit's time), and the paths that are gone or refused
    (to drop from the index)."""
    reader = DocReader(store, bulk=len(changed) > BULK_READ)
    docs, removed = [], []
    for path, seen in changed.items():
        doc = reader.read(path, seen, path in exact)
        if doc is None:
            removed.append(path)
        else:
            docs.append(doc)
    return docs, removed
