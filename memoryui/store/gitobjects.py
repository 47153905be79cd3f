"""The workspace repository's objects and refs, through libgit2: one handle per thread,
the branch and its tip, blobs by path, new blobs, and commit ids as people type them.

`GitObjects` is the base of `GitRepo` (`gitrepo.py`): it creates the repository when the
workspace has none and the state folder memoryui keeps in `.git/memoryui/`.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path

import pygit2

from . import gitindex
from .errors import Ambiguous, InvalidName, NotFound
from .files import TMP_SUFFIX, disk_errors

ZERO = "0" * 40  # the id git's update-ref takes for "no such ref yet"
MIN_COMMIT_ID = 7  # hex digits a commit id typed by a person or a client must have
HEX_RE = re.compile(r"[0-9a-fA-F]{1,40}")

# libgit2 maps pack files in windows (1 GiB, up to 8 GiB, by default), and every page a
# read touches stays resident in the worker while its window is mapped: scattered reads (a
# history page, the overview's commits) would keep much of a large pack in each worker. So
# windows are small, and at most PACK_WINDOWS_MB of them are mapped (least recently used
# ones unmapped first).
PACK_WINDOW_MB, PACK_WINDOWS_MB = 4, 32
pygit2.settings.mwindow_size = PACK_WINDOW_MB << 20
pygit2.settings.mwindow_mapped_limit = PACK_WINDOWS_MB << 20


def tree_entry(tree: pygit2.Tree | None, path: str) -> pygit2.Object | None:
    """What stands at `path` in `tree` (a blob, a tree, a submodule), or None."""
    if tree is None:
        return None
    try:
        return tree[path]
    except KeyError:
        return None


class GitObjects:
    """Objects and refs of the workspace repository, shared by one process's threads."""

    def __init__(self, root: Path) -> None:
        self.root = root
        git_dir = root / ".git"
        if not git_dir.exists():
            root.mkdir(parents=True, exist_ok=True)
            pygit2.init_repository(str(root), initial_head="main")
        self.git_dir = git_dir
        self.state_dir = git_dir / "memoryui"
        self.state_dir.mkdir(exist_ok=True)
        self._local = threading.local()
        self._ensure_excludes()

    @property
    def gone(self) -> bool:
        """The workspace's repository was removed (deleted, unmounted): git's HEAD is what
        tells, since a lock file taken meanwhile makes `.git/memoryui` again."""
        return not (self.git_dir / "HEAD").exists()

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
        """Keep memoryui's temp files (`files.temp_name`) out of `git status`."""
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
        entry = tree_entry(tree, path)
        return str(entry.id) if entry is not None and entry.type_str == "blob" else None

    def create_blob(self, data: bytes) -> str:
        with disk_errors(self.git_dir, len(data)):
            return str(self.repo.create_blob(data))

    @staticmethod
    def blob_id(data: bytes) -> str:
        """The id `create_blob` would give `data`, with nothing written (see Record.data):
        git's object header and the content through OpenSSL's SHA-1, several times faster
        than libgit2's collision-detecting one (`pygit2.hash`). The objects themselves are
        still made, and named, by libgit2. (An entry to a log needs none: see Record.crc.)"""
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
