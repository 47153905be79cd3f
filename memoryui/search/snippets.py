"""Snippets and highlights as data: lists of (text, is_match) spans.

The backends mark matches with two private control characters (FTS5's `highlight()` and
`snippet()` take any marker strings; file text has them replaced by spaces when indexed);
`spans()` turns a marked string into spans, and nothing outside this package ever sees a
marker. HTML is made from spans in one place only: `memoryui.rendering.marked_html`.
"""

from __future__ import annotations

import re

from memoryui.store import parse_daily

from .query import Node, term_texts

MARK_START, MARK_END = "\x02", "\x03"
LEXEME_RE = re.compile(r"[^\W_]+")

Spans = list[tuple[str, bool]]


def spans(marked: str) -> Spans:
    """A marked string as (text, is_match) pieces, in order, none empty."""
    out: Spans = []
    for i, piece in enumerate(re.split(f"[{MARK_START}{MARK_END}]", marked)):
        if piece:
            out.append((piece, i % 2 == 1))
    return out


def plain(marked: str) -> str:
    return marked.replace(MARK_START, "").replace(MARK_END, "")


def offsets(parts: Spans) -> list[tuple[int, int]]:
    """(start, end) of each match inside the joined text."""
    out, at = [], 0
    for text, hit in parts:
        if hit:
            out.append((at, at + len(text)))
        at += len(text)
    return out


def _patterns(tree: Node) -> list[str]:
    """Regex pieces for the words a tree looks for (not those it excludes)."""
    out: list[str] = []
    for term in term_texts(tree):
        words = [re.escape(w) for w in LEXEME_RE.findall(term.text)]
        if term.prefix and words:
            words[-1] += r"[^\W_]*"
        out += words
    return out


def highlight_text(text: str, tree: Node, window: int | None = None) -> str:
    """Mark the query's words in `text`; with `window`, only the best run of that many words.

    Used where the database's own highlighter would lose text (Postgres's ts_headline
    drops anything that looks like an HTML tag).
    """
    pats = _patterns(tree)
    if not pats:
        return text if window is None else text[:200]
    rx = re.compile(r"(?<![^\W_])(?:" + "|".join(pats) + r")(?![^\W_])", re.I)
    words = list(LEXEME_RE.finditer(text))
    hits = [bool(rx.fullmatch(w.group(0))) for w in words]
    if window is not None and len(words) > window:
        best, best_at, run = -1, 0, 0
        for i, h in enumerate(hits):
            run += h
            if i >= window:
                run -= hits[i - window]
            if i >= window - 1 and run > best:
                best, best_at = run, i - window + 1
        lo = words[best_at].start()
        hi = words[min(best_at + window, len(words)) - 1].end()
        span = range(best_at, min(best_at + window, len(words)))
        lead = "\u2026" if best_at > 0 else text[:lo]
        tail = "\u2026" if span.stop < len(words) else text[hi:]
    else:
        lo, hi, span, lead, tail = 0, len(text), range(len(words)), "", ""
    out, pos = [lead], lo
    for i in span:
        if hits[i]:
            w = words[i]
            out += [text[pos:w.start()], MARK_START, w.group(0), MARK_END]
            pos = w.end()
    out += [text[pos:hi], tail]
    return "".join(out)


def entry_for_snippet(text: str, snippet: str) -> str | None:
    """The id of the daily entry a (marked) snippet was cut from, for `#e-<id>` links."""
    bare = plain(snippet).strip().strip("\u2026").strip()
    if not bare:
        return None
    at = text.find(bare)
    if at < 0:
        first = bare.split("\n", 1)[0].strip()
        at = text.find(first) if first else -1
    if at < 0:
        return None
    # The line of the first match inside the snippet, not of the snippet's start.
    mark = snippet.find(MARK_START)
    lead = plain(snippet[:mark]).lstrip().lstrip("\u2026").lstrip() if mark >= 0 else ""
    line = text.count("\n", 0, at + len(lead)) + 1
    for entry in parse_daily(text):
        if entry.start_line <= line <= entry.end_line:
            return entry.id
    return None
