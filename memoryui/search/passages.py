"""Files cut into passages, the units search by meaning embeds and returns.

A daily log's passages are its entries, as the review queue parses them
(`store/entries.py`); any other markdown file is cut at its headings (`store/mdblocks.py`:
never a heading inside code or front matter), and a long section into runs of paragraphs of
at most MAX_CHARS. Each passage keeps its heading, its lines and a hash of the text that is
embedded, so an unchanged passage is never embedded twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

from memoryui.store import Kind
from memoryui.store.entries import parse_daily
from memoryui.store.mdblocks import front_matter_end, scan

MAX_CHARS = 1_200  # a passage longer than this is cut at a paragraph (or a line) boundary
# Per file: a huge file costs a bounded number of vectors. A document keeps its first
# passages (its summary comes first); a daily log its newest entries (a busy agent's
# afternoon matters more than its first 400 entries of the day).
MAX_PASSAGES = 400
MIN_CHARS = 3  # shorter text ("---", a lone bullet) carries no meaning worth a vector


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
    daily = kind == Kind.DAILY.value
    kept = [s for s in (_daily(body) if daily else _markdown(body))
            if len(s.text.strip()) >= MIN_CHARS]
    return kept[-MAX_PASSAGES:] if daily else kept[:MAX_PASSAGES]


def _daily(body: str) -> list[Section]:
    out = []
    for e in parse_daily(body):
        heading = " \u2014 ".join(p for p in (e.time, e.heading) if p)
        text = e.text
        if len(text) <= MAX_CHARS:
            out.append(Section(heading, e.start_line, e.end_line, text, e.id))
            continue
        first = e.end_line - len(e.body.split("\n")) + 1
        for start, end, chunk in _chunks(e.body.split("\n"), first):
            out.append(Section(heading, start, end, chunk, e.id))
    return out


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
