"""Hybrid ranking: keyword hits and passages near in meaning, fused into one list of files.

Reciprocal rank fusion: a file's score is the sum, over the two rankings it appears in, of
1 / (RRF_K + its rank there) (ranks from 1; a file's rank by meaning is that of its best
passage). RRF_K = 60 is the constant of Cormack, Clarke and Büttcher (SIGIR 2009), the one
OpenSearch, Elasticsearch and pgvector's examples use: large enough that the top few places
of either ranking do not drown the other, small enough that a file both rankings agree on
comes first. Fusion reads ranks only, so BM25 / ts_rank scores and cosines, which are on
unrelated scales, never need calibrating against each other.

The query language's filters (scope, kind, dates, what a token may read) apply to both
rankings, and what it leaves out (`deploy NOT staging`) stays out of both. Where meaning
cannot help (no model, a query with no word the model knows, vectors still being built),
the result is the keyword ranking with a notice saying why.

The two rankings are independent until they are fused, and both spend their time outside
Python's lock (SQLite's or Postgres's query, numpy's passes over the sign bits), so the
meaning half runs in a thread of a small pool while the keyword half runs in the caller's:
a query takes about as long as the slower half, not both. When every pool thread is busy
(many searches at once) the caller runs the meaning half itself once its keywords are in,
so no search waits behind another's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .embeddings import embedder, unavailable_reason
from .query import Node, Term, term_texts
from .results import Hit
from .vectors import Passage, query_vector

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy as np

    from .filters import Filters


class IndexBase(Protocol):
    """What fusing needs of a search index (`base.IndexBase`, which calls in here)."""

    def drain(self, leave_to_host: bool = False, hold_busy: bool = False) -> int: ...

    def drain_for_reader(self) -> int: ...

    def maybe_catch_up(self) -> None: ...

    def vectors_ready(self) -> bool: ...

    def nearest_among(self, text: str, k: int, *, scopes: Sequence[str] | None = None,
                      kinds: Iterable[str] | None = None, visible_to: str | None = None,
                      exclude_paths: set[str] | None = None,
                      vector: np.ndarray | None = None) -> list[Passage]: ...

    def _query(self, tree: Node, query: str, filters: Filters, limit: int, offset: int,
               with_total: bool) -> tuple[list[tuple], int]: ...

    def _paths(self, tree: Node, query: str, filters: Filters) -> set[str]: ...

    def _file_rows(self, paths: Sequence[str]) -> dict[str, tuple]: ...

log = logging.getLogger("memoryui.search")

MODES = ("hybrid", "keyword")
RRF_K = 60
# Below this cosine a passage is not a match by meaning (WordLlama's static vectors put
# unrelated sentences at -0.1..0.15 and paraphrases from about 0.25 up): a search for a typo
# or a word the workspace lacks answers nothing rather than the least unrelated passages.
MIN_SIMILARITY = 0.2
PASSAGES_PER_HIT = 3  # passages asked for per place on the page (several may share a file)
MIN_PASSAGES = 30
EXCERPT_CHARS = 240  # a hit found by meaning alone shows its passage's head
UNAVAILABLE = "Search by meaning is unavailable: {}; results match keywords only."
NO_WORDS = ("Search by meaning found no word it knows in this search; results match "
            "keywords only.")
BUILDING = "the passages are still being embedded"
MEANING_THREADS = 2  # a process's threads for the meaning half of concurrent searches

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _meaning_pool() -> ThreadPoolExecutor:
    """Made at a process's first hybrid search (after any fork: a pool's threads do not
    survive one)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MEANING_THREADS, thread_name_prefix="memoryui-meaning")
        return _pool


@dataclass
class Fused:
    hits: list[Hit]
    total: int
    mode: str  # what ranked these hits: "hybrid" or "keyword"
    notice: str = ""


def fuse(rankings: Sequence[Sequence[str]]) -> list[tuple[str, float]]:
    """Reciprocal rank fusion of rankings of files (best first): (path, score), best first;
    ties keep the order of the first ranking, then the next."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, path in enumerate(ranking, 1):
            scores[path] = scores.get(path, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda item: -item[1])


def by_file(passages: Sequence[Passage]) -> dict[str, Passage]:
    """Each file's best passage, in order of the passages (a file ranks by its best)."""
    best: dict[str, Passage] = {}
    for p in passages:
        best.setdefault(p.path, p)
    return best


def files_by_meaning(index: IndexBase, text: str, k: int, *,
                     visible_to: str | None = None) -> list[Passage]:
    """The best passage of each of up to `k` files that match `text` by meaning, best first
    ([] when meaning cannot help: the tools' side of `hybrid`, which reports why)."""
    index.drain_for_reader()
    index.maybe_catch_up()
    if _unavailable(index) or not text.strip():
        return []
    try:
        found = index.nearest_among(text, max(MIN_PASSAGES, k * PASSAGES_PER_HIT),
                                    visible_to=visible_to)
    except Exception:  # noqa: BLE001 - meaning is an extra: keywords still answer
        log.exception("search by meaning failed; answering with keywords")
        return []
    return list(by_file([p for p in found if p.score >= MIN_SIMILARITY]).values())[:k]


def excluded(tree: Node) -> list[Node]:
    """What a search leaves out (the right side of each NOT), outside other exclusions."""
    if isinstance(tree, Term):
        return []
    if tree.op == "NOT":
        return [*excluded(tree.left), tree.right]
    return excluded(tree.left) + excluded(tree.right)


def meaning_text(tree: Node) -> str:
    """The words a search looks for (not those it excludes), as a text to embed."""
    return " ".join(t.text for t in term_texts(tree))


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS - 1] + "\u2026"


def _meaning_hit(p: Passage, meta: tuple, score: float) -> Hit:
    scope, kind, name, date, recency = meta
    title = [(p.heading, False)] if p.heading else []
    return Hit(p.path, scope or "", kind or "", date or "", score, float(recency), name=name,
               title_spans=title, snippet_spans=[(_excerpt(p.text), False)],
               path_spans=[(p.path, False)], entry_id=p.entry_id, by_meaning=True)


def _in_dates(date: str, filters: Filters) -> bool:
    if filters.date_from and date < filters.date_from.isoformat():
        return False
    return not (filters.date_to and date > filters.date_to.isoformat())


def _unavailable(index: IndexBase) -> str:
    """Why meaning cannot rank this search ("" when it can)."""
    if embedder() is None:
        reason = unavailable_reason() or "the embedding model could not load"
        return UNAVAILABLE.format(reason)
    if not index.vectors_ready():
        return UNAVAILABLE.format(BUILDING)
    return ""


def _by_meaning(index: IndexBase, tree: Node, filters: Filters,
                want: int) -> tuple[list[Passage], str]:
    """The passages nearest the search's words, best first, or [] and the notice saying why
    meaning cannot rank this search."""
    notice = _unavailable(index)
    if notice:
        return [], notice
    try:
        text = meaning_text(tree)
        model = embedder()
        vector = None if model is None else query_vector(model, text)
        if vector is None:
            return [], NO_WORDS
        return index.nearest_among(text, want, scopes=filters.scope or None,
                                   kinds=filters.kind or None,
                                   visible_to=filters.visible_to, vector=vector), ""
    except Exception as exc:  # noqa: BLE001 - meaning is an extra: keywords still answer
        log.exception("search by meaning failed; answering with keywords")
        return [], UNAVAILABLE.format(f"{type(exc).__name__}: {exc}")


def hybrid(index: IndexBase, tree: Node, query: str, filters: Filters, limit: int,
           offset: int, with_total: bool) -> Fused:
    """The page of hits `offset`..`offset + limit` of the fused ranking."""
    window = offset + limit
    want = max(MIN_PASSAGES, window * PASSAGES_PER_HIT)
    meaning = _meaning_pool().submit(_by_meaning, index, tree, filters, want)
    try:
        rows, total = index._query(tree, query, filters, window, 0, with_total)
    except BaseException:
        meaning.cancel()
        raise
    keyword = [Hit.from_row(r) for r in rows]
    if meaning.cancel():  # no pool thread took it yet: this thread is free now
        passages, notice = _by_meaning(index, tree, filters, want)
    else:
        passages, notice = meaning.result()
    if notice:
        log.info("search %r answered by keywords only: %s", query[:80], notice)
        return Fused(keyword[offset:], total, "keyword", notice)
    passages = [p for p in passages if p.score >= MIN_SIMILARITY]
    best = by_file(passages)
    found = {h.path for h in keyword}
    if any(p not in found for p in best):  # what the search leaves out stays out
        for node in excluded(tree):
            for path in index._paths(node, query, filters) & best.keys():
                if path not in found:
                    del best[path]
    meta = index._file_rows([p for p in best if p not in found])
    by_meaning = [p for p in best.values()
                  if p.path in found or (p.path in meta and _in_dates(meta[p.path][3], filters))]
    hits = {h.path: h for h in keyword}
    near = {p.path: p for p in by_meaning}
    fused = []
    for path, score in fuse([[h.path for h in keyword], [p.path for p in by_meaning]]
                            )[offset:window]:
        h = hits[path] if path in hits else _meaning_hit(near[path], meta[path], 0.0)
        h.score = score
        fused.append(h)
    extra = sum(1 for p in by_meaning if p.path not in found)
    return Fused(fused, total + extra, "hybrid")


