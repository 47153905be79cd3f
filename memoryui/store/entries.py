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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True)
class DailyParse:
    """A daily log's entries, and where a longer text that begins with this one (an append)
    must be parsed again from: the start of its last segment, which appended lines can still
    extend. The segments before it end at a header that an append leaves as it is."""

    text: str
    entries: tuple[Entry, ...]
    resume_char: int  # offset of the last segment's first line
    resume_line: int  # its index
    settled: int  # entries before it
    seen: dict[str, int]  # the id counts of those entries
    taken: int = 0  # entries taken over as they were from the parse given (`before`)


def parse_daily(text: str) -> list[Entry]:
    return list(parse_daily_after(text).entries)


def parse_daily_after(text: str, before: DailyParse | None = None) -> DailyParse:
    """The entries of `text`; with `before`, the parse of an earlier text, only what follows
    its last segment's start is parsed again when `text` begins with that earlier text: a
    busy agent's log is indexed after every few appends, and parsing it whole each time
    cost more than everything else its indexing does."""
    start_char = base = taken = 0
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    if before is not None and text.startswith(before.text):
        start_char, base = before.resume_char, before.resume_line
        entries = list(before.entries[:before.settled])
        seen = dict(before.seen)
        taken = before.settled
    lines = text[start_char:].split("\n")
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
    # The last segment an append may extend starts at the last header on a whole line (a
    # header on the unfinished last line may yet become something else), else where this
    # parse started (whose first line, when resumed, is such a header).
    whole = [j for j, mark in enumerate(marks) if mark[0] < len(lines) - 1]
    last = whole[-1] if whole else -1
    resume = None if whole else (0, len(entries), dict(seen))  # else set at mark `last`
    bounds = [*marks, (len(lines), "end", None, None)]
    # Text before the first mark is untimed.
    _untimed(lines, 0, bounds[0][0], entries, seen, base)
    for j, ((start, kind, time, heading), (nxt, *_rest)) in enumerate(
            zip(bounds, bounds[1:], strict=False)):
        if j == last:
            resume = (start, len(entries), dict(seen))
        if kind == "date":
            _untimed(lines, start + 1, nxt, entries, seen, base)
            continue
        body_lines = lines[start + 1:nxt]
        while body_lines and not body_lines[-1].strip():
            body_lines.pop()
        end = start + len(body_lines)
        while body_lines and not body_lines[0].strip():
            body_lines.pop(0)
        body = "\n".join(body_lines)
        entries.append(Entry(_entry_id(time, body, seen), time, heading, body,
                             base + start + 1, base + end + 1, kind))
    assert resume is not None
    at, settled, seen_then = resume
    char = start_char + sum(len(x) + 1 for x in lines[:at])
    return DailyParse(text, tuple(entries), char, base + at, settled, seen_then, taken)


def _untimed(lines: list[str], start: int, stop: int, out: list[Entry],
             seen: dict[str, int], base: int = 0) -> None:
    para: list[str] = []
    para_start = start
    in_fence = False

    def close(end: int) -> None:
        body = "\n".join(para).strip("\n")
        if body.strip():
            out.append(Entry(_entry_id(None, body, seen), None, None, body,
                             base + para_start + 1, base + end, "text"))
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
