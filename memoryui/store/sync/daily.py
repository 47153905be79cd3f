"""Merging two versions of a daily log entry by entry.

Daily logs are append-only, so two hosts appending to the same day is the normal case, not
a conflict. git's `merge=union` driver works on lines and gets it wrong in two ways this
module avoids: when both sides create the file it keeps the `# date` header twice, and when
both sides append entries with a common line (the same `## 14:05` header, a blank line) the
line diff matches those lines and interleaves the bodies, splitting an entry.

Here the unit is the entry (memoryui/store/entries.py): our text is kept byte for byte, each
of their entries we lack is inserted whole at its place in time order, and an entry one
side deleted (a curator removed it) stays deleted. Each entry appears once, and the date
header once (repeats of it, which Duragent's HEAD writes before every entry, are dropped).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..entries import DATE_HEADER_RE, FENCE_RE, Entry, parse_daily

Key = tuple[str | None, str | None, str]


@dataclass
class _Chunk:
    key: Key | None  # None: the text before the first entry
    time: str  # the entry's time, or the last time above it ("" before any)
    lines: list[str] = field(default_factory=list)
    inserted: bool = False


def _key(e: Entry) -> Key:
    body = "\n".join(line.rstrip() for line in e.body.strip().split("\n"))
    return (e.time, e.heading, body)


def _split(text: str) -> tuple[list[str], bool]:
    """Lines without the artifact of a final newline, and whether there was one."""
    if not text:
        return [], False
    if text.endswith("\n"):
        return text[:-1].split("\n"), True
    return text.split("\n"), False


def _times(entries: list[Entry]) -> list[str]:
    out, last = [], ""
    for e in entries:
        last = e.time or last
        out.append(last)
    return out


def _chunks(text: str) -> tuple[list[_Chunk], bool]:
    """The prefix, then one chunk per entry running up to the next entry's first line."""
    lines, term = _split(text)
    entries = parse_daily(text) if text else []
    starts = [e.start_line - 1 for e in entries]
    first = starts[0] if starts else len(lines)
    chunks = [_Chunk(None, "", lines[:first])]
    for i, (e, t) in enumerate(zip(entries, _times(entries), strict=True)):
        stop = starts[i + 1] if i + 1 < len(starts) else len(lines)
        chunks.append(_Chunk(_key(e), t, lines[starts[i]:stop]))
    return chunks, term


def _blocks(text: str) -> list[tuple[Key, str, list[str]]]:
    """Each entry of `text` as (key, time for ordering, its own lines only)."""
    lines, _term = _split(text)
    entries = parse_daily(text) if text else []
    return [(_key(e), t, lines[e.start_line - 1:e.end_line])
            for e, t in zip(entries, _times(entries), strict=True)]


def _target(ours: int, theirs: int, base: int) -> int:
    """How many times an entry appears in the merge: once if either side added it, gone if
    either side deleted it."""
    if ours >= base and theirs >= base:
        return max(ours, theirs)
    return min(ours, theirs)


def merge_daily(base: str | None, ours: str | None, theirs: str | None) -> str:
    """The entry-wise union of two versions of a daily log (None: that side has no file)."""
    base, ours, theirs = base or "", ours or "", theirs or ""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    chunks, term = _chunks(ours)
    if not ours:
        term = theirs.endswith("\n")
    count_b = Counter(k for k, _t, _l in _blocks(base))
    count_o = Counter(c.key for c in chunks[1:] if c.key is not None)
    their_blocks = _blocks(theirs)
    count_t = Counter(k for k, _t, _l in their_blocks)
    target = {k: _target(count_o[k], count_t[k], count_b[k])
              for k in set(count_o) | set(count_t)}

    # Entries deleted on their side: drop our last occurrences beyond the target.
    extra = {k: count_o[k] - target[k] for k in count_o if count_o[k] > target[k]}
    for i in range(len(chunks) - 1, 0, -1):
        k = chunks[i].key
        if k is not None and extra.get(k, 0) > 0:
            extra[k] -= 1
            del chunks[i]

    # Their entries we lack: each inserted whole after the last entry not later than it.
    seen: Counter[Key] = Counter()
    for k, t, lines in their_blocks:
        seen[k] += 1
        if seen[k] <= count_o[k] or seen[k] > target[k]:
            continue
        pos = 0
        for i in range(len(chunks) - 1, 0, -1):
            if chunks[i].time <= t:
                pos = i
                break
        chunks.insert(pos + 1, _Chunk(k, t, list(lines), inserted=True))

    # The `# date` header once: theirs when ours had none at all.
    if not any(DATE_HEADER_RE.match(line) for c in chunks for line in c.lines):
        header = next((line for line in _split(theirs)[0] if DATE_HEADER_RE.match(line)), None)
        if header is not None:
            chunks[0].lines = [header, *chunks[0].lines]
            chunks[0].inserted = True
    return _render(chunks, term)


def _render(chunks: list[_Chunk], term: bool) -> str:
    out: list[str] = []
    prev: _Chunk | None = None
    for c in chunks:
        if not c.lines:
            continue
        if prev is not None and (c.inserted or prev.inserted) and out and out[-1].strip():
            out.append("")  # a blank line between an inserted entry and its neighbour
        out.extend(c.lines)
        prev = c
    text = "\n".join(_one_header(out))
    return text + "\n" if term and text else text


def _one_header(lines: list[str]) -> list[str]:
    """Drop repeats of the first `# date` header (Duragent's HEAD writes one per entry)."""
    out: list[str] = []
    header: str | None = None
    in_fence = False
    for i, line in enumerate(lines):
        if FENCE_RE.match(line):
            in_fence = not in_fence
        elif not in_fence and DATE_HEADER_RE.match(line):
            if header is None:
                header = line.strip()
            elif line.strip() == header:
                if out and not out[-1].strip() and i + 1 < len(lines) and \
                        not lines[i + 1].strip():
                    out.pop()  # keep a single blank line where the header was
                continue
        out.append(line)
    return out
