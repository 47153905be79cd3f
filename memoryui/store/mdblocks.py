"""Markdown blocks as promotion, the prose diff and the review read them: ATX and setext
headings, fenced code (CommonMark's rules) and list items, so a heading inside code or a
SKILL.md's front matter is never mistaken for structure."""

from __future__ import annotations

import re
from dataclasses import dataclass

ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
FENCE_OPEN_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# A line that cannot be the text of a setext heading (a list item, quote, table, ...).
NOT_PARAGRAPH_RE = re.compile(r"^(?: {0,3}(?:[-*+>|#]|\d+[.)])| {4,}|\t)")


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


def front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a leading `---` ... `---` block (0 when none)."""
    if lines and lines[0].rstrip() == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip() == "---":
                return i + 1
    return 0


def fence_map(lines: list[str], start: int = 0) -> tuple[list[bool], str | None]:
    """Which lines belong to fenced code (CommonMark's rules: the opening and closing fence
    lines included), and the fence still open at the end (if any). The one reading of fences
    for promotion, the prose diff's blocks and the review's known paragraphs."""
    inside = [False] * len(lines)
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        if fence is None:
            m = FENCE_OPEN_RE.match(line)
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


def scan(lines: list[str], start: int = 0) -> list[Heading]:
    inside, _open = fence_map(lines, start)
    out: list[Heading] = []
    for i in range(start, len(lines)):
        if inside[i]:
            continue
        line = lines[i]
        m = ATX_RE.match(line)
        if m:
            out.append(Heading(len(out), len(m.group(1)), (m.group(2) or "").strip(), i, i))
            continue
        s = SETEXT_RE.match(line)
        if s and i > start:
            prev = lines[i - 1]
            if (prev.strip() and not inside[i - 1] and not NOT_PARAGRAPH_RE.match(prev)
                    and not SETEXT_RE.match(prev) and not (out and out[-1].line == i - 1)):
                level = 1 if s.group(1)[0] == "=" else 2
                out.append(Heading(len(out), level, prev.strip(), i, i - 1))
    return out


def headings(text: str) -> list[Heading]:
    """The headings of a markdown text (not in code, not in front matter), in order."""
    lines = text.split("\n")
    return scan(lines, front_matter_end(lines))


ITEM_RE = re.compile(r"^( {0,3})([-*+]|(\d{1,9})([.)]))(?:[ \t]+(.*))?$")
BREAK_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")


def list_item(line: str) -> re.Match[str] | None:
    """A list item's first line (marker, indent, text); a thematic break is not one."""
    m = ITEM_RE.match(line)
    return None if m is None or BREAK_RE.match(line) else m
