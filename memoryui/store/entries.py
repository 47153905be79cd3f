"""Daily logs parsed into entries with stable ids.

Formats: Duragent (`# YYYY-MM-DD` header, entries `## HH:MM` + blank line + body; its
HEAD writes the header before every entry, so repeated headers are tolerated), zerostack
flush entries (`### HH:MM — heading`), and untimed text (zerostack's raw appends), split
into paragraphs outside code fences. An id is the time plus a hash of the body, so it
survives entries being added or removed around it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

DATE_HEADER_RE = re.compile(r"^# \d{4}-\d{2}-\d{2}\s*$")
DURAGENT_RE = re.compile(r"^## (\d{2}):(\d{2})\s*$")
ZEROSTACK_RE = re.compile(r"^### (\d{2}):(\d{2}) \u2014 (.*)$")
FENCE_RE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Entry:
    id: str
    time: str | None  # "HH:MM"
    heading: str | None
    body: str
    start_line: int  # 1-based, the entry's first line (its header, if any)
    end_line: int  # inclusive
    format: str  # duragent | zerostack | text

    @property
    def text(self) -> str:
        """What a promotion copies: the heading (zerostack) and the body."""
        return f"{self.heading}\n\n{self.body}" if self.heading else self.body


def _entry_id(time: str | None, body: str, seen: dict[str, int]) -> str:
    digest = hashlib.sha1(body.strip().encode()).hexdigest()[:8]
    base = f"{time.replace(':', '') if time else 'u'}-{digest}"
    seen[base] = seen.get(base, 0) + 1
    return base if seen[base] == 1 else f"{base}-{seen[base]}"


def parse_daily(text: str) -> list[Entry]:
    lines = text.split("\n")
    # Boundaries: (line index, kind, time, heading) for each timed header.
    marks: list[tuple[int, str, str | None, str | None]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if DATE_HEADER_RE.match(line):
            marks.append((i, "date", None, None))
        elif m := DURAGENT_RE.match(line):
            marks.append((i, "duragent", f"{m.group(1)}:{m.group(2)}", None))
        elif m := ZEROSTACK_RE.match(line):
            marks.append((i, "zerostack", f"{m.group(1)}:{m.group(2)}", m.group(3).strip()))
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    bounds = [*marks, (len(lines), "end", None, None)]
    # Text before the first mark is untimed.
    _untimed(lines, 0, bounds[0][0], entries, seen)
    for (start, kind, time, heading), (nxt, *_rest) in zip(bounds, bounds[1:], strict=False):
        if kind == "date":
            _untimed(lines, start + 1, nxt, entries, seen)
            continue
        body_lines = lines[start + 1:nxt]
        while body_lines and not body_lines[-1].strip():
            body_lines.pop()
        end = start + len(body_lines)
        while body_lines and not body_lines[0].strip():
            body_lines.pop(0)
        body = "\n".join(body_lines)
        entries.append(Entry(_entry_id(time, body, seen), time, heading, body,
                             start + 1, end + 1, kind))
    return entries


def _untimed(lines: list[str], start: int, stop: int, out: list[Entry],
             seen: dict[str, int]) -> None:
    para: list[str] = []
    para_start = start
    in_fence = False

    def close(end: int) -> None:
        body = "\n".join(para).strip("\n")
        if body.strip():
            out.append(Entry(_entry_id(None, body, seen), None, None, body,
                             para_start + 1, end, "text"))
        para.clear()

    for i in range(start, stop):
        line = lines[i]
        if FENCE_RE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if para:
                close(i)
            para_start = i + 1
            continue
        if not para:
            para_start = i
        para.append(line)
    if para:
        close(stop)


def find_entry(text: str, entry_id: str) -> Entry | None:
    return next((e for e in parse_daily(text) if e.id == entry_id), None)
