"""Three-way merging: `git merge-file` on private temp files, and finding a stale edit's base.

Used by the editor's conflict view, promotion undo, the review editor and sync. One git
process per merge is fine at these rates. The temp files live in the workspace's own
`.git/memoryui` folder: never in the workspace tree, never shared.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .gitcli import git_env

if TYPE_CHECKING:
    from .commitinfo import CommitInfo
    from .workspace import Store

MAX_BASE_SEARCH = 30  # commits of a file searched for the version a stale edit started from

MINE_LABEL = "your edit"
BASE_LABEL = "the version you started from"
THEIRS_LABEL = "current file"
MARKER_RE = re.compile(r"^(<{7} |={7}$|>{7} )", re.M)


@dataclass(frozen=True)
class MergeResult:
    text: str
    conflicts: int  # regions marked with <<<<<<< / ======= / >>>>>>>


def merge3(base: str, mine: str, theirs: str, workdir: Path,
           labels: tuple[str, str, str] = (MINE_LABEL, BASE_LABEL, THEIRS_LABEL)
           ) -> MergeResult | None:
    """Merge `mine` and `theirs` (both edits of `base`); None when git cannot run.

    `labels` name mine, base and theirs in the conflict markers.
    """
    with tempfile.TemporaryDirectory(prefix="merge-", dir=workdir) as tmp:
        files = []
        for name, text in (("mine", mine), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_bytes(text.encode())
            files.append(str(p))
        try:
            proc = subprocess.run(
                ["git", "merge-file", "-p", "-L", labels[0], "-L", labels[1],
                 "-L", labels[2], *files],
                capture_output=True, timeout=30, env=git_env(),
            )
        except (OSError, subprocess.SubprocessError):
            return None
    if proc.returncode < 0 or proc.returncode > 127:
        return None
    return MergeResult(proc.stdout.decode("utf-8", "replace"), proc.returncode)


def has_conflict_markers(text: str) -> bool:
    """True when all three kinds of merge markers are still in the text."""
    found = {m.group(1)[:1] for m in MARKER_RE.finditer(text)}
    return found >= {"<", "=", ">"}


def find_base(store: Store, path: str, base: str) -> tuple[str | None, list[CommitInfo]]:
    """The text a stale edit started from, and the commits made since (newest first).

    Looks up recent commits of the file by content version; (None, commits) when the base
    is not among them (for example an outside change that was never committed).
    """
    from .workspace import ABSENT, version_of

    if base == ABSENT:
        return "", []
    newer: list[CommitInfo] = []
    for info in store.log(path, limit=MAX_BASE_SEARCH, with_files=False):
        old = store.file_at(path, info.sha)
        if version_of(old) == base:
            return old, newer
        newer.append(info)
    return None, newer
