"""Promotion text handling: where an entry goes in a target, how it is fitted, provenance.

A daily entry may carry its own `## ` headings and fenced code. Pasted as-is under a
target's `## Lessons` it would start new top-level sections or, with an unclosed fence,
swallow the rest of the file. So inserted text is *fitted*: its headings are demoted
below the heading it lands under and its fences are closed. Headings inside fenced code
(and a SKILL.md's front matter) are never mistaken for structure.
"""

from __future__ import annotations

import difflib
import posixpath
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from .mdblocks import ATX_RE, FENCE_OPEN_RE, SETEXT_RE, front_matter_end, list_item, scan
from .mdblocks import Heading as Heading
from .mdblocks import fence_map as fence_map
from .mdblocks import headings as headings

if TYPE_CHECKING:
    from .actors import Actor
    from .workspace import Store

PROMOTED_FROM = "Promoted-From"
REVERTS = "Reverts"
DISMISSED = "Dismissed"  # a lead's dismissal of a daily entry (`<path>#<entry-id>`)
REOPENED = "Reopened"  # ... and putting it back into the queue

def fit_block(text: str, base_level: int) -> str:
    """Make `text` safe to insert under a heading of `base_level` (0: no heading).

    Its headings are shifted so the highest one sits one level below `base_level`
    (levels past 6 become bold lines), setext headings become ATX, and an unclosed
    fence is closed so it cannot swallow the target's following text.
    """
    lines = text.strip("\n").split("\n")
    found = scan(lines)
    if found:
        shift = max(0, base_level + 1 - min(h.level for h in found))
        for h in reversed(found):
            level = h.level + shift
            title = h.text
            new = f"{'#' * level} {title}".rstrip() if level <= 6 else f"**{title}**"
            lines[h.first_line:h.line + 1] = [new]
    _inside, still_open = fence_map(lines)
    if still_open:
        lines.append(still_open)
    return "\n".join(lines)


def format_entries(texts: Iterable[str], base_level: int) -> str:
    """Several entries as one block, separated by blank lines, each fitted on its own."""
    return "\n\n".join(fit_block(t, base_level) for t in texts if t.strip())


def level_at(text: str, place: int | None) -> int:
    """The heading level that governs an insertion point (0 when no heading does)."""
    found = headings(text)
    if place is not None and 0 <= place < len(found):
        return found[place].level
    return found[-1].level if found else 0


def _section(lines: list[str], found: list[Heading], place: int | None) -> tuple[int, int]:
    """[start, stop) of the lines a block goes at the end of: heading `place`'s section
    (up to the next heading of the same or a higher level), or the file's last part."""
    if place is None or not 0 <= place < len(found):
        return (found[-1].line + 1 if found else front_matter_end(lines)), len(lines)
    h = found[place]
    stop = next((later.first_line for later in found[place + 1:] if later.level <= h.level),
                len(lines))
    return h.line + 1, stop


def insert(target: str, block: str, place: int | None = None, *, tight: bool = False) -> str:
    """Insert `block` at the end of `target`, or at the end of heading `place`'s section.

    A section ends before the next heading of the same or a higher level; trailing blank
    lines of the section stay after the inserted block so spacing is kept. `place` out of
    range means the end. `tight`: the block continues a tight list (no blank line before).
    """
    block = block.strip("\n")
    if not target.strip():
        return block + "\n"
    found = headings(target)
    lines = target.split("\n")
    sep = "\n" if tight else "\n\n"
    if place is None or not 0 <= place < len(found):
        body = target.rstrip("\n")
        return f"{body}{sep}{block}\n"
    h = found[place]
    _start, stop = _section(lines, found, place)
    end = stop
    while end > h.line + 1 and not lines[end - 1].strip():
        end -= 1
    before = lines[:end]
    after = lines[stop:]
    if stop == len(lines):  # the section runs to the end of the file
        return "\n".join(before).rstrip("\n") + sep + block + "\n"
    return "\n".join([*before, *([] if tight else [""]), block, "", *after])


def promoted_from(path: str, entry_id: str) -> tuple[str, str]:
    """The provenance trailer for one promoted entry."""
    return (PROMOTED_FROM, f"{path}#{entry_id}")


def parse_promoted_from(value: str) -> tuple[str, str] | None:
    """(daily path, entry id) from a trailer value, or None if it is malformed."""
    path, sep, entry_id = value.strip().rpartition("#")
    if not sep or not path or not entry_id:
        return None
    return path, entry_id


# -- the target's local style: a list item where a list ends, else a paragraph ------------------

_MARKER_RE = re.compile(r"\(\[(\d{4}-\d{2}-\d{2}), ([A-Za-z0-9_-]{1,64})\]\(([^()\s]+)#e-([^()\s]+)\)\)")


@dataclass(frozen=True)
class Style:
    """How the text ends where a block goes: a list (its marker and indent) or prose."""

    is_list: bool = False
    indent: str = ""
    bullet: str = "-"  # '-', '*', '+', or an ordered list's delimiter '.' / ')'
    number: int | None = None  # the next number of an ordered list
    loose: bool = False  # items separated by blank lines

    def marker(self, n: int) -> str:
        """The marker of the n-th new item (0-based)."""
        return f"{self.number + n}{self.bullet}" if self.number is not None else self.bullet


PROSE = Style()


def style_at(text: str, place: int | None = None) -> Style:
    """The style of the last block of heading `place`'s section (or of the file's end).

    A list there (its last top-level item, nested items and continuation lines included)
    gives its marker, indentation, next number and looseness; anything else is prose.
    """
    lines = text.split("\n")
    found = headings(text)
    start, stop = _section(lines, found, place)
    inside, _open = fence_map(lines)
    end = stop
    while end > start and not lines[end - 1].strip():
        end -= 1
    tops: list[tuple[int, re.Match[str]]] = []
    for i in range(end - 1, start - 1, -1):
        line = lines[i]
        if not line.strip():
            continue
        if inside[i]:  # code: part of an item when indented, else the list is over
            if line[:1] in (" ", "\t"):
                continue
            break
        m = list_item(line)
        if m:
            tops.append((i, m))
        elif line[:1] not in (" ", "\t"):
            break
    if not tops:
        return PROSE
    least = min(len(m.group(1)) for _i, m in tops)
    tops = [(i, m) for i, m in tops if len(m.group(1)) == least]
    _last, m = tops[0]
    loose = any(not lines[i - 1].strip() for i, _m in tops[:-1])
    if m.group(3) is not None:
        return Style(True, m.group(1), m.group(4), int(m.group(3)) + 1, loose)
    return Style(True, m.group(1), m.group(2), None, loose)


def _as_items(text: str, style: Style, first: int) -> list[str]:
    """An entry as items of the target's list: its first line after the marker, the rest
    indented as continuation; an entry that is itself a list gives one item per item."""
    lines = text.strip("\n").split("\n")
    own = list_item(lines[0])
    is_list = own is not None and len(own.group(1)) == 0 and all(
        not ln.strip() or ln[:1] in (" ", "\t") or list_item(ln) for ln in lines)
    groups: list[tuple[str, list[str]]] = []  # (first line, continuation lines dedented)
    if is_list:
        col = 0
        for ln in lines:
            m = list_item(ln)
            if m and not m.group(1):
                col = m.end(2) + 1
                groups.append((m.group(5) or "", []))
            else:
                groups[-1][1].append(ln[col:] if not ln[:col].strip() else ln.lstrip())
    else:
        groups.append((lines[0], lines[1:]))
    out = []
    for n, (head, rest) in enumerate(groups):
        lead = f"{style.indent}{style.marker(first + n)} "
        # At least 4 columns: Python-Markdown (the UI) needs them for a continuing paragraph.
        pad = " " * max(len(lead), len(style.indent) + 4)
        rest = textwrap.dedent("\n".join(rest)).split("\n") if rest else []
        body = [f"{lead}{head}".rstrip()] + [pad + ln if ln.strip() else "" for ln in rest]
        out.append("\n".join(body))
    return out


def fit_entries(texts: Sequence[str], base_level: int, style: Style = PROSE
                ) -> tuple[str, bool]:
    """Entries as one block in the target's style, and whether it continues a tight list.

    Into a list, an entry becomes a list item (same marker, indent, numbering); an entry
    with headings of its own stays a block with its headings demoted (`fit_block`), as
    into prose, where every entry is a paragraph.
    """
    pieces: list[tuple[bool, str]] = []
    n = 0
    for text in texts:
        if not text.strip():
            continue
        if style.is_list and not scan(text.strip("\n").split("\n")):
            for item in _as_items(fit_block(text, base_level), style, n):
                pieces.append((True, item))
                n += 1
        else:
            pieces.append((False, fit_block(text, base_level)))
    out = ""
    for i, (is_item, piece) in enumerate(pieces):
        if i:
            out += "\n" if is_item and pieces[i - 1][0] and not style.loose else "\n\n"
        out += piece
    tight = bool(pieces) and pieces[0][0] and not style.loose
    return out, tight


# -- provenance in the text ----------------------------------------------------------------------

def marker(date: str, scope: str, daily_path: str, entry_id: str, target_path: str) -> str:
    """`([2026-11-21, ops-bot](daily/2026-11-21.md#e-0930-ab12cd34))`: the entry's date and
    scope, linked (relative to the target, so it resolves in the UI and in any git viewer)
    to the entry's anchor on its daily log's page."""
    rel = posixpath.relpath(daily_path, posixpath.dirname(target_path) or ".")
    return f"([{date}, {scope}]({quote(rel, safe='/._-~')}#e-{quote(entry_id, safe='-_')}))"


def with_marker(text: str, mark: str) -> str:
    """The entry with its marker at the end of its first paragraph (a line of its own after
    the entry when it opens with code, a table or HTML)."""
    lines = text.strip("\n").split("\n")
    first = lines[0]
    if not mark or not first.strip():
        return text.strip("\n")
    if FENCE_OPEN_RE.match(first) or first.lstrip()[:1] in ("|", "<"):
        return "\n".join([*lines, "", mark])
    j = 0
    while j + 1 < len(lines) and not ATX_RE.match(lines[j]) and _continues(lines[j + 1]):
        j += 1
    lines[j] = f"{lines[j].rstrip()} {mark}"
    return "\n".join(lines)


def _continues(line: str) -> bool:
    """Whether a line continues the paragraph above it."""
    return bool(line.strip()) and not (SETEXT_RE.match(line) or FENCE_OPEN_RE.match(line)
                                       or ATX_RE.match(line) or list_item(line)
                                       or line.lstrip()[:1] in ("|", "<"))


def relink(text: str, old_target: str, new_target: str) -> str:
    """Provenance markers written for `old_target`, pointing to the same entries from
    `new_target` (the editor moved the text to another file)."""
    old_dir = posixpath.dirname(old_target)

    def fix(m: re.Match[str]) -> str:
        daily = posixpath.normpath(posixpath.join(old_dir, m.group(3)))
        return marker(m.group(1), m.group(2), daily, m.group(4), new_target)

    return _MARKER_RE.sub(fix, text)


# -- re-fitting a lead's edited draft ------------------------------------------------------------

def edited_block(before: str, started: str, text: str) -> tuple[str, str]:
    """(the inserted block as the lead left it, the rest of their text).

    `started` is `before` (the target) with a block inserted; `text` is `started` after
    the lead's edits. Edits inside or next to the block belong to the block; edits to the
    target's other lines stay in the rest. The block is "" when the lead removed it.
    """
    a, s, t = before.split("\n"), started.split("\n"), text.split("\n")
    changed = [(j1, j2) for tag, _i1, _i2, j1, j2 in
               difflib.SequenceMatcher(None, a, s, autojunk=False).get_opcodes()
               if tag != "equal"]
    if not changed:
        return "", text
    g1, g2 = changed[0][0], changed[-1][1]  # the block's lines in `started`
    spans = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, s, t, autojunk=False
                                                       ).get_opcodes():
        if tag == "equal":
            lo, hi = max(i1, g1), min(i2, g2)
            if lo < hi:
                spans.append((j1 + lo - i1, j1 + hi - i1))
        elif (i1 < g2 and i2 > g1) or (tag == "insert" and g1 <= i1 <= g2):
            spans.append((j1, j2))
    spans = [(lo, hi) for lo, hi in spans if hi > lo]
    if not spans:
        return "", text
    start, end = min(lo for lo, _h in spans), max(hi for _l, hi in spans)
    block = "\n".join(t[start:end]).strip("\n")
    rest = t[:start] + t[end:]
    while start < len(rest) and start and not rest[start - 1].strip() and \
            not rest[start].strip():  # the blank line that stood before the block
        del rest[start]
    return block, "\n".join(rest)


def unfit(block: str) -> list[str]:
    """Entry texts back out of a fitted block: list items lose their marker and their
    continuation indent; what follows the list (an entry with headings) is one entry."""
    lines = block.strip("\n").split("\n")
    first = list_item(lines[0]) if lines else None
    if first is None:
        return _split_marked(block)
    indent, col = len(first.group(1)), 0
    out: list[list[str]] = []
    for i, ln in enumerate(lines):
        m = list_item(ln)
        if m and len(m.group(1)) == indent:
            col = m.end(2) + 1
            out.append([m.group(5) or ""])
        elif not ln.strip() or not ln[:col].strip():
            out[-1].append(ln)
        else:  # a block after the list
            tail = "\n".join(lines[i:])
            break
    else:
        tail = ""
    texts = [e[0] + ("\n" + textwrap.dedent("\n".join(e[1:])) if len(e) > 1 else "")
             for e in out]
    return [t.strip("\n") for t in texts if t.strip()] + _split_marked(tail)


def _split_marked(block: str) -> list[str]:
    """Prose back into entries: each starts with a paragraph that carries a provenance
    marker (without markers it stays one entry)."""
    lines = block.strip("\n").split("\n")
    out: list[list[str]] = []
    for i, ln in enumerate(lines):
        starts = bool(i > 0 and not lines[i - 1].strip() and ln.strip())
        if starts:
            para = lines[i:]
            end = next((k for k, x in enumerate(para) if not x.strip()), len(para))
            starts = any(_MARKER_RE.search(x) for x in para[:end])
        if not out or starts:
            out.append([])
        out[-1].append(ln)
    return [t for t in ("\n".join(e).strip("\n") for e in out) if t.strip()]


# -- decisions without a file change -------------------------------------------------------------

def record_decision(store: Store, actor: Actor, message: str, trailers: list[tuple[str, str]],
                    tool: str) -> str:
    """An empty commit carrying a decision in its trailers (a dismissal, putting back):
    history stays the place `rebuild_review` finds every decision."""
    return store.git.empty_commit(actor, message, trailers, tool)
