"""Three-way merge for the editor's conflict view (git merge-file on private temp files).

Only used after a stale save, so one git process per conflict is fine. The temp files live
in the workspace's own `.git/memoryui` folder: never in the workspace tree, never shared.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

MINE_LABEL = "your edit"
BASE_LABEL = "the version you started from"
THEIRS_LABEL = "current file"
MARKER_RE = re.compile(r"^(<{7} |={7}$|>{7} )", re.M)


@dataclass(frozen=True)
class MergeResult:
    text: str
    conflicts: int  # regions marked with <<<<<<< / ======= / >>>>>>>


def merge3(base: str, mine: str, theirs: str, workdir: Path) -> MergeResult | None:
    """Merge `mine` and `theirs` (both edits of `base`); None when git cannot run."""
    with tempfile.TemporaryDirectory(prefix="merge-", dir=workdir) as tmp:
        files = []
        for name, text in (("mine", mine), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_bytes(text.encode())
            files.append(str(p))
        try:
            proc = subprocess.run(
                ["git", "merge-file", "-p", "-L", MINE_LABEL, "-L", BASE_LABEL,
                 "-L", THEIRS_LABEL, *files],
                capture_output=True, timeout=30,
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
