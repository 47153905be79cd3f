"""Diff rows as HTML, written in Python: the hot loop of every diff (a commit, a comparison,
pending changes, a sync conflict).

Through the template engine each line of a diff cost about as much as git's whole `show` of
a small commit. The markup is what `_diff_unified.html` and `_diff_split.html` describe;
every text is escaped (`html.escape`, as Django's `escape`); expand rows (a few per file) stay in `_diff_gap.html`.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe

from memoryui.web.diffview import Row, Segs, Side, SplitRow

NONL = ('<span class="nonl-mark" title="The {}file does not end with a newline">'
        "No newline at end of file</span>")


def _gap(row: Row | SplitRow, split: bool) -> str:
    return get_template("web/history/_diff_gap.html").render({"g": row.gap, "split": split})


def _line_no(no: int | None) -> str:
    return f' data-line="{no}"' if no else ""


def _code(segs: Segs, tag: str) -> str:
    """A line's text, its changed words inside `<ins>` or `<del>`."""
    return "".join(f"<{tag}>{escape(text)}</{tag}>" if changed else escape(text)
                   for text, changed in segs)


def _table_rows(rows: list[Row] | list[SplitRow], split: bool,
                line: Callable[[Any], list[str]]) -> SafeString:
    """Hunk headers and expand rows as both views draw them; each line by `line`."""
    out: list[str] = []
    for r in rows:
        if r.kind == "hunk":
            out.append(f'<tr class="hunk"><td colspan="{4 if split else 3}">'
                       f"{escape(r.header)}</td></tr>")
        elif r.kind == "gap":
            out.append(_gap(r, split))
        else:
            out += line(r)
    return mark_safe("\n".join(out))


def _unified_line(r: Row) -> list[str]:
    kind = r.kind if r.kind in ("add", "del") else "ctx"
    out = [f'<tr class="{kind}"><td class="ln"{_line_no(r.old_no)}></td>'
           f'<td class="ln"{_line_no(r.new_no)}></td><td class="code">'
           f'{_code(r.segs, "ins" if r.kind == "add" else "del")}</td></tr>']
    if r.nonl:
        out.append('<tr class="nonl"><td class="ln"></td><td class="ln"></td>'
                   f'<td class="code">{NONL.format("")}</td></tr>')
    return out


def unified_rows(rows: list[Row]) -> SafeString:
    """The `<tr>`s of a unified diff: hunk headers, expand rows, lines with both numbers."""
    return _table_rows(rows, False, _unified_line)


def _half(s: Side | None, op: str, cls: str, tag: str) -> str:
    """One side of a split row: its number cell and its text cell."""
    if s is None or not s.op:
        return '<td class="ln empty"></td><td class="code empty"></td>'
    mine = s.op == op
    no = _line_no(s.no)
    return (f'<td class="ln{" " + cls if mine else ""}"{no}></td>'
            f'<td class="code {cls if mine else "ctx"}">{_code(s.segs, tag)}</td>')


def _split_line(r: SplitRow) -> list[str]:
    out = [f"<tr>{_half(r.left, '-', 'del', 'del')}{_half(r.right, '+', 'add', 'ins')}</tr>"]
    left = r.left is not None and r.left.nonl
    right = r.right is not None and r.right.nonl
    if left or right:
        out.append(f'<tr class="nonl"><td class="ln"></td><td class="code">'
                   f'{NONL.format("old ") if left else ""}</td><td class="ln"></td>'
                   f'<td class="code">{NONL.format("new ") if right else ""}</td></tr>')
    return out


def split_rows(rows: list[SplitRow]) -> SafeString:
    """The `<tr>`s of a side-by-side diff: old on the left, new on the right."""
    return _table_rows(rows, True, _split_line)
