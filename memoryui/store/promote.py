"""Promotion text handling: where an entry goes in a target, how it is fitted, provenance.

A daily entry may carry its own `## ` headings and fenced code. Pasted as-is under a
target's `## Lessons` it would start new top-level sections or, with an unclosed fence,
swallow the rest of the file. So inserted text is *fitted*: its headings are demoted
below the heading it lands under and its fences are closed. Headings inside fenced code
(and a SKILL.md's front matter) are never mistaken for structure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

PROMOTED_FROM = "Promoted-From"
REVERTS = "Reverts"

_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_OPEN_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# A line that cannot be the text of a setext heading (a list item, quote, table, ...).
_NOT_PARAGRAPH_RE = re.compile(r"^(?: {0,3}(?:[-*+>|#]|\d+[.)])| {4,}|\t)")


@dataclass(frozen=True)
class Heading:
    index: int  # position among the text's headings, the chooser's value
    level: int
    text: str
    line: int  # 0-based index of the heading's (last) line
    first_line: int  # 0-based index of its first line (setext headings span two)

    @property
    def marker(self) -> str:
        """The ATX marker for its level (`##`), for choosers that show the outline."""
        return "#" * self.level


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a leading `---` ... `---` block (0 when none)."""
    if lines and lines[0].rstrip() == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip() == "---":
                return i + 1
    return 0


def _fence_map(lines: list[str], start: int = 0) -> tuple[list[bool], str | None]:
    """Which lines belong to fenced code, and the fence still open at the end (if any)."""
    inside = [False] * len(lines)
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is None:
            m = _FENCE_OPEN_RE.match(line)
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                fence = m.group(2)
                inside[i] = True
            continue
        inside[i] = True
        stripped = line.strip()
        if (stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence)
                and len(line) - len(line.lstrip(" ")) <= 3):
            fence = None
    return inside, fence


def _scan(lines: list[str], start: int = 0) -> list[Heading]:
    inside, _open = _fence_map(lines, start)
    out: list[Heading] = []
    for i in range(start, len(lines)):
        if inside[i]:
            continue
        line = lines[i]
        m = _ATX_RE.match(line)
        if m:
            out.append(Heading(len(out), len(m.group(1)), (m.group(2) or "").strip(), i, i))
            continue
        s = _SETEXT_RE.match(line)
        if s and i > start:
            prev = lines[i - 1]
            if (prev.strip() and not inside[i - 1] and not _NOT_PARAGRAPH_RE.match(prev)
                    and not _SETEXT_RE.match(prev) and not (out and out[-1].line == i - 1)):
                level = 1 if s.group(1)[0] == "=" else 2
                out.append(Heading(len(out), level, prev.strip(), i, i - 1))
    return out


def headings(text: str) -> list[Heading]:
    """The headings of a markdown text (not in code, not in front matter), in order."""
    lines = text.split("\n")
    return _scan(lines, _front_matter_end(lines))


def fit_block(text: str, base_level: int) -> str:
    """Make `text` safe to insert under a heading of `base_level` (0: no heading).

    Its headings are shifted so the highest one sits one level below `base_level`
    (levels past 6 become bold lines), setext headings become ATX, and an unclosed
    fence is closed so it cannot swallow the target's following text.
    """
    lines = text.strip("\n").split("\n")
    found = _scan(lines)
    if found:
        shift = max(0, base_level + 1 - min(h.level for h in found))
        for h in reversed(found):
            level = h.level + shift
            title = h.text
            new = f"{'#' * level} {title}".rstrip() if level <= 6 else f"**{title}**"
            lines[h.first_line:h.line + 1] = [new]
    _inside, still_open = _fence_map(lines)
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


def insert(target: str, block: str, place: int | None = None) -> str:
    """Insert `block` at the end of `target`, or at the end of heading `place`'s section.

    A section ends before the next heading of the same or a higher level; trailing blank
    lines of the section stay after the inserted block so spacing is kept. `place` out of
    range means the end.
    """
    block = block.strip("\n")
    if not target.strip():
        return block + "\n"
    found = headings(target)
    lines = target.split("\n")
    if place is None or not 0 <= place < len(found):
        body = target.rstrip("\n")
        return f"{body}\n\n{block}\n"
    h = found[place]
    stop = len(lines)
    for later in found[place + 1:]:
        if later.level <= h.level:
            stop = later.first_line
            break
    end = stop
    while end > h.line + 1 and not lines[end - 1].strip():
        end -= 1
    before = lines[:end]
    after = lines[stop:]
    if stop == len(lines):  # the section runs to the end of the file
        return "\n".join(before).rstrip("\n") + "\n\n" + block + "\n"
    return "\n".join([*before, "", block, "", *after])


def promoted_from(path: str, entry_id: str) -> tuple[str, str]:
    """The provenance trailer for one promoted entry."""
    return (PROMOTED_FROM, f"{path}#{entry_id}")


def parse_promoted_from(value: str) -> tuple[str, str] | None:
    """(daily path, entry id) from a trailer value, or None if it is malformed."""
    path, sep, entry_id = value.strip().rpartition("#")
    if not sep or not path or not entry_id:
        return None
    return path, entry_id
