"""Blame: who wrote each line, and what was there before the change that wrote it.

One parser of `git blame --porcelain` serves the blame page, "blame before this change"
(each line's origin and its commit's parent) and `Store.blame`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pygit2

from .gitcli import run_git


@dataclass
class BlameLine:
    """One line with the commit that last changed it, and where it came from, so a reader
    can blame what was there before: `orig_line`/`orig_path`, the line and file name in that
    commit; `prev_sha`/`prev_path`, the commit's parent and the file's name there ("" when
    the commit added the file); `boundary`, the commit is a root (nothing before it)."""

    line_no: int
    sha: str
    author: str
    time: int
    summary: str
    text: str
    actor: str = ""
    orig_line: int = 0
    orig_path: str = ""
    prev_sha: str = ""
    prev_path: str = ""
    boundary: bool = False

    @property
    def when(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.time, tz=dt.UTC)


def _unquote(name: str) -> str:
    """A file name as `git blame --porcelain` prints it (C-quoted when it must be)."""
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "replace").decode("utf-8", "replace")


def blame_lines(root: Path, path: str, rev: str = "HEAD") -> list[BlameLine]:
    """Blame of `path` at `rev` (a full sha or HEAD) with each line's origin and parent
    (`git blame --porcelain`; nothing when the path is not in `rev`)."""
    raw = run_git(root, "blame", "--porcelain", rev, "--", path, check=False)
    lines: list[BlameLine] = []
    meta: dict[str, dict[str, str]] = {}
    cur_sha, cur_orig, cur_line = "", 0, 0
    for line in raw.decode("utf-8", "replace").split("\n"):
        if line.startswith("\t"):
            m = meta.setdefault(cur_sha, {})
            prev_sha, _, prev_path = m.get("previous", "").partition(" ")
            lines.append(BlameLine(
                cur_line, cur_sha, m.get("author", ""), int(m.get("author-time", "0") or 0),
                m.get("summary", ""), line[1:], orig_line=cur_orig,
                orig_path=_unquote(m.get("filename", path)), prev_sha=prev_sha,
                prev_path=_unquote(prev_path), boundary="boundary" in m))
            continue
        key, _, value = line.partition(" ")
        parts = line.split(" ")
        if len(parts) >= 3 and re.fullmatch(r"[0-9a-f]{40}", parts[0]):
            cur_sha, cur_orig, cur_line = parts[0], int(parts[1]), int(parts[2])
            meta.setdefault(cur_sha, {})
        elif cur_sha and key in ("author", "author-time", "summary", "previous", "filename",
                                 "boundary"):
            meta[cur_sha][key] = value
    return lines


def _blob_at(repo: pygit2.Repository, sha: str, path: str) -> pygit2.Blob | None:
    try:
        obj = repo[sha].peel(pygit2.Tree)[path]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return cast(pygit2.Blob, repo[obj.id]) if obj.type_str == "blob" else None


def lines_before(repo: pygit2.Repository, sha: str, path: str, parent: str,
                 parent_path: str, lines: list[int]) -> list[int]:
    """For each of `lines` of `path` at `sha`, the line of `parent_path` at `parent` it
    replaced (for an inserted line, the one just above), so "blame before" lands in the
    same place. Maps through the commit's own diff (no context, one diff for all lines);
    clamped to the parent's lines."""
    old, new = _blob_at(repo, parent, parent_path), _blob_at(repo, sha, path)
    if old is None:
        return [1 for _ in lines]
    old_count = max(1, old.data.count(b"\n") + (0 if old.data.endswith(b"\n") else 1))
    hunks: list[pygit2.DiffHunk] = []
    if new is not None:  # (pygit2's type stubs leave out Blob.diff's context_lines)
        hunks = list(old.diff(new, context_lines=0).hunks)  # type: ignore[call-arg]
    return [min(max(1, _through(hunks, n)), old_count) for n in lines]


def _through(hunks: list, line: int) -> int:
    delta = 0
    for hunk in hunks:
        if line < (hunk.new_start if hunk.new_lines else hunk.new_start + 1):
            break
        if hunk.new_lines and line < hunk.new_start + hunk.new_lines:
            if not hunk.old_lines:  # inserted: the line above the insertion
                return hunk.old_start
            return hunk.old_start + min(line - hunk.new_start, hunk.old_lines - 1)
        delta += hunk.new_lines - hunk.old_lines
    return line - delta
