"""Diffs shaped for templates: rows with line numbers, word highlights and no-newline marks.

The store parses patches into FileDiff/Hunk/DiffLine; this module only decides how a reader
sees them (GitHub-style), so templates stay dumb loops and autoescaping covers every byte
of memory text: highlighted words are (text, changed) pairs, never HTML built here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Protocol

from memoryui.rendering import too_large
from memoryui.store.diffs import DiffLine, FileDiff, diff_texts

MAX_LINES_PER_FILE = 3000  # a bigger diff is summarised with a link, not drawn
MAX_FILES_DRAWN = 100  # a bigger commit lists the rest without drawing them
MAX_INTRALINE_CHARS = 2000  # beyond this, word highlights cost more than they help
TOKEN_RE = re.compile(r"\w+|\s+|[^\w\s]")

Segs = list[tuple[str, bool]]


@dataclass
class Row:
    """One unified-view row: kind is hunk | ctx | add | del."""

    kind: str
    old_no: int | None = None
    new_no: int | None = None
    segs: Segs = field(default_factory=list)
    header: str = ""
    nonl: bool = False  # "No newline at end of file" follows this line
    gap: object = None  # kind "gap": a diffsource.Gap (hidden unchanged lines)


@dataclass
class Side:
    no: int | None
    segs: Segs
    op: str  # "-", "+", " " or "" (empty cell)
    nonl: bool = False


@dataclass
class SplitRow:
    kind: str  # hunk | line
    left: Side | None = None
    right: Side | None = None
    header: str = ""
    gap: object = None  # kind "gap": a diffsource.Gap


@dataclass
class FileView:
    """A FileDiff plus what the templates draw for it."""

    diff: FileDiff
    anchor: str
    rows: list[Row] = field(default_factory=list)
    split: list[SplitRow] = field(default_factory=list)
    too_large: bool = False
    drawn: bool = True
    prose: str | None = None  # the rendered (prose) diff's HTML, when that view is chosen
    prose_toggle: dict | None = None  # Source | Rendered links, for markdown files

    @property
    def path(self) -> str:
        return self.diff.path

    @property
    def additions(self) -> int:
        return self.diff.additions

    @property
    def deletions(self) -> int:
        return self.diff.deletions

    @property
    def line_count(self) -> int:
        return sum(len(h.lines) for h in self.diff.hunks)


def anchor_for(path: str) -> str:
    """A stable, id-safe fragment for a file inside a commit page."""
    return "diff-" + re.sub(r"[^A-Za-z0-9_-]", "-", path)


def _merge(segs: Segs) -> Segs:
    out: Segs = []
    for text, changed in segs:
        if not text:
            continue
        if out and out[-1][1] == changed:
            out[-1] = (out[-1][0] + text, changed)
        else:
            out.append((text, changed))
    return out


def intraline(old: str, new: str) -> tuple[Segs, Segs]:
    """Word-level highlights for a changed line pair (whole-line when they barely match)."""
    plain = ([(old, False)], [(new, False)])
    if len(old) + len(new) > MAX_INTRALINE_CHARS or not old or not new:
        return plain
    a, b = TOKEN_RE.findall(old), TOKEN_RE.findall(new)
    sm = SequenceMatcher(None, a, b, autojunk=False)
    if sm.ratio() < 0.4:
        return plain
    left: Segs = []
    right: Segs = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        same = op == "equal"
        left.append(("".join(a[i1:i2]), not same))
        right.append(("".join(b[j1:j2]), not same))
    return _merge(left), _merge(right)


def unified_rows(fd: FileDiff) -> list[Row]:
    rows: list[Row] = []
    dels: list[Row] = []
    adds: list[Row] = []

    def flush() -> None:
        for d, a in zip(dels, adds, strict=False):
            d.segs, a.segs = intraline(d.segs[0][0], a.segs[0][0])
        rows.extend(dels)
        rows.extend(adds)
        dels.clear()
        adds.clear()

    for hunk in fd.hunks:
        rows.append(Row("hunk", header=hunk.header))
        last: Row | None = None
        for ln in hunk.lines:
            if ln.op == "\\":
                if last is not None:
                    last.nonl = True
                continue
            if ln.op == "-":
                if adds:
                    flush()
                last = Row("del", ln.old_no, None, [(ln.text, False)])
                dels.append(last)
            elif ln.op == "+":
                last = Row("add", None, ln.new_no, [(ln.text, False)])
                adds.append(last)
            else:
                flush()
                last = Row("ctx", ln.old_no, ln.new_no, [(ln.text, False)])
                rows.append(last)
        flush()
    return rows


def _nonl_lines(lines: list[DiffLine]) -> tuple[set[int], set[int]]:
    """Old and new line numbers that lack a final newline."""
    old: set[int] = set()
    new: set[int] = set()
    prev: DiffLine | None = None
    for ln in lines:
        if ln.op == "\\" and prev is not None:
            if prev.op in ("-", " ") and prev.old_no is not None:
                old.add(prev.old_no)
            if prev.op in ("+", " ") and prev.new_no is not None:
                new.add(prev.new_no)
        prev = ln
    return old, new


def split_rows(fd: FileDiff) -> list[SplitRow]:
    """Side-by-side rows from FileDiff.side_by_side(), with highlights and no-newline marks."""
    out: list[SplitRow] = []
    for hunk, pairs in zip(fd.hunks, fd.side_by_side(), strict=False):
        out.append(SplitRow("hunk", header=hunk.header))
        old_nonl, new_nonl = _nonl_lines(hunk.lines)
        for old_no, old_text, old_op, new_no, new_text, new_op in pairs:
            lsegs: Segs = [(old_text, False)]
            rsegs: Segs = [(new_text, False)]
            if old_op == "-" and new_op == "+":
                lsegs, rsegs = intraline(old_text, new_text)
            left = Side(old_no, lsegs if old_op else [], old_op,
                        old_no is not None and old_no in old_nonl)
            right = Side(new_no, rsegs if new_op else [], new_op,
                         new_no is not None and new_no in new_nonl)
            out.append(SplitRow("line", left, right))
    return out


def text_diff(old: str | None, new: str | None, path: str) -> FileDiff:
    """`diff_texts` of two versions held in memory, unless together they are over the
    render limit (difflib is quadratic at worst): then a diff with no hunks marked
    `too_large`, which `file_views` summarises instead of drawing."""
    if too_large(old, new):
        return FileDiff(path, status="added" if old is None else "deleted" if new is None
                        else "modified", too_large=True)
    return diff_texts(old, new, path)


class Decorator(Protocol):
    """What a drawn file view can be given more by (`diffsource.DiffSource`: expand rows,
    the rendered prose diff), which knows the texts of both sides."""

    def decorate(self, fv: FileView, split: bool) -> None: ...


def file_views(diffs: list[FileDiff], *, split: bool = False,
               max_files: int | None = None,
               source: Decorator | None = None) -> list[FileView]:
    """Views for each file of a commit; only the first `max_files` are drawn. With a
    `source` (see diffsource.diff_source) unchanged regions get expand rows and markdown
    files a rendered (prose) diff."""
    max_files = MAX_FILES_DRAWN if max_files is None else max_files
    out = []
    for i, fd in enumerate(diffs):
        fv = FileView(fd, anchor_for(fd.path))
        if i >= max_files:
            fv.drawn = False
        elif fd.too_large or fv.line_count > MAX_LINES_PER_FILE:
            fv.too_large = True
        elif split:
            fv.split = split_rows(fd)
        else:
            fv.rows = unified_rows(fd)
        if source is not None and fv.drawn and not fv.too_large and not fd.binary:
            source.decorate(fv, split)
        out.append(fv)
    return out
