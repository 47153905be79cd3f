"""Files cut into passages, the units search by meaning embeds and returns.

A daily log's passages are its entries, as the review queue parses them
(`store/entries.py`); any other markdown file is cut at its headings (`store/mdblocks.py`:
never a heading inside code or front matter), and a long section into runs of paragraphs of
at most MAX_CHARS. Each passage keeps its heading, its lines and a hash of the text that is
embedded, so an unchanged passage is never embedded twice.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from memoryui.store import Kind
from memoryui.store.entries import DailyParse, Entry, parse_daily_after
from memoryui.store.mdblocks import front_matter_end, scan

MAX_CHARS = 1_200  # a passage longer than this is cut at a paragraph (or a line) boundary
# Per file: a huge file costs a bounded number of vectors. A document keeps its first
# passages (its summary comes first); a daily log its newest entries (a busy agent's
# afternoon matters more than its first 400 entries of the day).
MAX_PASSAGES = 400
MIN_CHARS = 3  # shorter text ("---", a lone bullet) carries no meaning worth a vector
# The last parse of this many daily logs is kept where every write is indexed, so a log
# indexed again after appends has only its new entries parsed and cut (`DailyMemo`).
MEMO_LOGS = 16


@dataclass(frozen=True)
class Section:
    heading: str  # the heading it falls under ("" before the first one), a daily entry's time
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    entry_id: str | None = None  # the daily entry it is, for daily logs

    @cached_property
    def embedded(self) -> str:
        """What is embedded: the heading gives a paragraph its context."""
        if self.heading and not self.text.lstrip("# ").startswith(self.heading):
            return f"{self.heading}\n{self.text}"
        return self.text

    @cached_property
    def digest(self) -> str:
        return hashlib.blake2b(self.embedded.encode("utf-8", "replace"),
                               digest_size=16).hexdigest()


def sections(body: str, kind: str) -> list[Section]:
    """The passages of a file's text (a daily log's entries; else sections and paragraphs)."""
    if not body.strip():
        return []
    if kind == Kind.DAILY.value:
        return _newest(parse_daily_after(body).entries, {})[0]
    return [s for s in _markdown(body) if len(s.text.strip()) >= MIN_CHARS][:MAX_PASSAGES]


def _newest(entries: Sequence[Entry], cut: dict[int, list[Section]]
            ) -> tuple[list[Section], int]:
    """The passages of a log's newest entries, at most MAX_PASSAGES, and the index of the
    oldest entry they took; `cut` holds the passages of entries by index, and gets those of
    the entries cut here."""
    kept: list[Section] = []
    i = len(entries)
    for i in range(len(entries) - 1, -1, -1):  # the newest entries are the ones kept
        got = cut.get(i)
        if got is None:
            got = cut[i] = _entry_sections(entries[i])
        kept.extend(s for s in reversed(got) if len(s.text.strip()) >= MIN_CHARS)
        if len(kept) >= MAX_PASSAGES:
            break
    return kept[:MAX_PASSAGES][::-1], i


class DailyMemo:
    """The last parse of the daily logs a process indexed most recently, with the passages
    of their newest entries: a log that only grew since (an agent's appends) is parsed
    from its last entry on (`parse_daily_after`) and only its new entries are cut. A
    1,300-entry log holds about 1 MB here, so only a process that indexes every write
    keeps one (`Updater._daily_memo`)."""

    def __init__(self, size: int = MEMO_LOGS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._held: OrderedDict[str, tuple[DailyParse, dict[int, list[Section]]]] = \
            OrderedDict()

    def sections(self, path: str, body: str) -> list[Section]:
        """`sections(body, "daily")` for the log at `path`."""
        if not body.strip():
            return []
        with self._lock:
            before = self._held.pop(path, None)
        parse = parse_daily_after(body, before[0] if before else None)
        # the entries the parse took over from the one before keep their passages
        cut = {i: got for i, got in before[1].items() if i < parse.taken} if before else {}
        kept, oldest = _newest(parse.entries, cut)
        with self._lock:
            self._held[path] = (parse, {i: got for i, got in cut.items() if i >= oldest})
            while len(self._held) > self.size:
                self._held.popitem(last=False)
        return kept

    def clear(self) -> None:
        with self._lock:
            self._held.clear()


def _entry_sections(e: Entry) -> list[Section]:
    heading = " \u2014 ".join(p for p in (e.time, e.heading) if p)
    text = e.text
    if len(text) <= MAX_CHARS:
        return [Section(heading, e.start_line, e.end_line, text, e.id)]
    first = e.end_line - len(e.body.split("\n")) + 1
    return [Section(heading, start, end, chunk, e.id)
            for start, end, chunk in _chunks(e.body.split("\n"), first)]


def _markdown(body: str) -> list[Section]:
    lines = body.split("\n")
    start = front_matter_end(lines)
    heads = scan(lines, start)
    bounds = [(start, "")] + [(h.first_line, h.text or "") for h in heads]
    out: list[Section] = []
    for i, (first, heading) in enumerate(bounds):
        stop = bounds[i + 1][0] if i + 1 < len(bounds) else len(lines)
        if stop <= first:
            continue
        for s, e, chunk in _chunks(lines[first:stop], first + 1):
            out.append(Section(heading, s, e, chunk))
    return out


def _chunks(lines: list[str], first: int) -> list[tuple[int, int, str]]:
    """Runs of paragraphs of at most MAX_CHARS: (first line, last line, text), 1-based."""
    out: list[tuple[int, int, str]] = []
    run: list[str] = []
    run_start = first
    size = 0

    def close(end: int) -> None:
        nonlocal run, size
        while run and not run[-1].strip():
            run.pop()
            end -= 1
        text = "\n".join(run).strip("\n")
        if text.strip():
            out.append((run_start, end, text))
        run, size = [], 0

    for i, line in enumerate(lines):
        number = first + i
        boundary = not line.strip()
        if run and size + len(line) > MAX_CHARS and (boundary or size >= MAX_CHARS):
            close(number - 1)
        if not run:
            if boundary:
                continue
            run_start = number
        run.append(line[:MAX_CHARS])
        size += len(line) + 1
    if run:
        close(first + len(lines) - 1)
    return out
