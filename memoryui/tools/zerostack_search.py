"""zerostack's `memory_search`: `Mem::search`'s terms, matching lines with 3 lines of context
(at most 5 blocks a file), ranking (MEMORY.md first, then matched terms, hits, newer daily
logs) and the rendered summary under the 32 KiB cap, as zerostack prints them.

With `mode=hybrid` (the default when the caller has a search index), files whose passages
match the query by meaning join the keyword hits, fused by reciprocal rank
(`search/hybrid.py`), each shown as its best passage with `[matched: —]`: the same lines
and summary zerostack prints, with more of the files it would have missed."""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass

from memoryui.search.hybrid import files_by_meaning, fuse
from memoryui.store import StoreError
from memoryui.store.budgets import ZEROSTACK_MARKER, ZEROSTACK_MAX_BYTES, cap_bytes
from memoryui.tools.registry import ToolContext
from memoryui.tools.zerostack_files import WS_CHARS, rust_lines, searched_files, split_whitespace

MAX_INJECT_BYTES = ZEROSTACK_MAX_BYTES
CONTEXT = 3
MAX_BLOCKS = 5
READ_MARKER = ZEROSTACK_MARKER
MODES = ("hybrid", "keyword")
MEANING_FILES = 10  # files a search adds by meaning, at most
truncate_cjk = cap_bytes  # zerostack's name for the store's byte cap


@dataclass
class SearchHit:
    path: str
    matched_terms: list[str]
    total_hits: int
    body: str
    filename_only: bool
    date: str | None
    is_memory_md: bool


def _ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _cmp(a: SearchHit, b: SearchHit) -> int:
    def cmp(x: object, y: object) -> int:
        return (x > y) - (x < y)  # type: ignore[operator]

    return (cmp(b.is_memory_md, a.is_memory_md)
            or cmp(len(b.matched_terms), len(a.matched_terms))
            or cmp(a.filename_only, b.filename_only)
            or cmp(b.total_hits, a.total_hits)
            or cmp((b.date is not None, b.date or ""), (a.date is not None, a.date or ""))
            or cmp(a.path.split("/"), b.path.split("/")))


def search(ctx: ToolContext, query: str, files: list[tuple[str, bool, str]] | None = None
           ) -> tuple[list[tuple[str, int]], list[SearchHit]]:
    """zerostack's `Mem::search`: ranked hits plus each term's matching-line count (over
    `files`, else the files it looks at)."""
    terms: list[str] = []
    for t in split_whitespace(query):
        if not any(_ascii_lower(x) == _ascii_lower(t) for x in terms):
            terms.append(t)
    if not terms:
        return [], []
    matchers = [re.compile(re.escape(t), re.IGNORECASE) for t in terms]
    counts = [0] * len(terms)
    hits: list[SearchHit] = []
    for path, is_daily, content in (searched_files(ctx) if files is None else files):
        name = posixpath.basename(path)
        lines = rust_lines(content)
        term_hit = [False] * len(terms)
        hit_lines: list[int] = []
        for i, line in enumerate(lines):
            found = False
            for ti, m in enumerate(matchers):
                if m.search(line):
                    found = True
                    term_hit[ti] = True
                    counts[ti] += 1
            if found:
                hit_lines.append(i)
        matched = [t for t, hit in zip(terms, term_hit, strict=True) if hit]
        windows: list[list[int]] = []
        for i in hit_lines:
            lo, hi = max(i - CONTEXT, 0), min(i + CONTEXT, max(len(lines) - 1, 0))
            if windows and lo <= windows[-1][1] + 1:
                windows[-1][1] = max(windows[-1][1], hi)
                continue
            if len(windows) >= MAX_BLOCKS:
                break
            windows.append([lo, hi])
        date = name[:-3] if is_daily else None
        is_memory_md = name == "MEMORY.md"
        if windows:
            body = "".join("".join(f"{ln}\n" for ln in lines[lo:hi + 1]) + "…\n"
                           for lo, hi in windows)
            hits.append(SearchHit(path, matched, len(hit_lines), body.rstrip(WS_CHARS),
                                  False, date, is_memory_md))
            continue
        name_terms = [t for t, m in zip(terms, matchers, strict=True) if m.search(name)]
        if name_terms:
            preview = [ln for ln in lines if ln.strip(WS_CHARS)][:3]
            hits.append(SearchHit(path, name_terms, 0,
                                  "(filename match)\n" + "\n".join(preview), True, date,
                                  is_memory_md))
    hits.sort(key=functools.cmp_to_key(_cmp))
    return list(zip(terms, counts, strict=True)), hits


def render(terms: list[tuple[str, int]], hits: list[SearchHit],
           max_bytes: int = MAX_INJECT_BYTES) -> str:
    """Summary line, then the best blocks that fit `max_bytes - 256`, then the hard cap."""
    blocks = [f"{h.path}  [matched: {', '.join(h.matched_terms) or '—'}]\n{h.body}"
              for h in hits]
    budget = max(max_bytes - 256, 0)
    included: list[str] = []
    used = 0
    for block in blocks:
        add = len(block.encode()) + (2 if included else 0)
        if included and used + add > budget:
            break
        used += add
        included.append(block)
    shown, omitted = len(included), len(hits) - len(included)
    out = (f"Searched {len(terms)} term{'' if len(terms) == 1 else 's'}: "
           f"{' '.join(f'{t}({c})' for t, c in terms)} across {len(hits)} "
           f"file{'' if len(hits) == 1 else 's'}. Showing top {shown} by relevance.")
    out += "\n\n" + "\n\n".join(included)
    if omitted:
        out += f"\n\n…[search truncated, {omitted} more file{'' if omitted == 1 else 's'} omitted]"
    return truncate_cjk(out, max_bytes, READ_MARKER)


def by_meaning(ctx: ToolContext, query: str, hits: list[SearchHit],
               files: list[tuple[str, bool, str]]) -> list[SearchHit]:
    """The keyword hits with the files near `query` in meaning, fused by reciprocal rank;
    only files memory_search looks at."""
    if ctx.search_index is None or not split_whitespace(query):
        return hits
    try:
        near = files_by_meaning(ctx.search_index(), query, MEANING_FILES * 4,
                                visible_to=ctx.scope)
    except StoreError:  # no index right now: keywords still answer
        return hits
    daily = {path: is_daily for path, is_daily, _ in files}
    near = [p for p in near if p.path in daily][:MEANING_FILES]
    if not near:
        return hits
    found = {h.path: h for h in hits}
    for p in near:
        if p.path not in found:
            name = posixpath.basename(p.path)
            body = "".join(f"{ln}\n" for ln in rust_lines(p.text)) + "…\n"
            found[p.path] = SearchHit(p.path, [], 0, body.rstrip(WS_CHARS), False,
                                      name[:-3] if daily[p.path] else None,
                                      name == "MEMORY.md")
    return [found[path] for path, _ in fuse([[h.path for h in hits], [p.path for p in near]])]


def memory_search(ctx: ToolContext, query: str, mode: str = "hybrid") -> str:
    files = searched_files(ctx)
    terms, hits = search(ctx, query, files)
    if mode == "hybrid" and terms:
        hits = by_meaning(ctx, query, hits, files)
    if not hits:
        return f"No matches for '{query}'."
    return render(terms, hits)
