"""What both backends share on the reading side: one `search()` that parses, checks the
filters, keeps the index current and turns backend rows into hits.

Ranking (both backends): field weights (file name 10, headings 5, body 1, folder path 0.5);
scores within about 6 % of each other count as equal and the more recent change wins
(recency is a tie-breaker, not a boost). Rows are numbered in order of change, so "more
recent" is the row number and ranking never reads a stored column.

Visibility for a scope token (`visible_to`) is the layout's one read rule: a document is
stored with its owning scope (`Layout.scope_of`) and a `shared` flag (`Layout.is_shared`),
so a token sees exactly what `Layout.readable_by(path, scope)` allows.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence

from .catalogue import Catalogue
from .filters import Filters, check_filters
from .hybrid import MODES, hybrid
from .query import Node, QueryError, parse_tree
from .results import Hit, SearchResults
from .updater import Updater
from .vectors import VectorSearch

SCHEMA_VERSION = "3"  # 3: the shared flag from Layout.is_shared; stamps from the walker
WEIGHTS = (10.0, 5.0, 1.0, 0.5, 0.0)  # name, title (headings), body, path, tags
TIE_BUCKETS_PER_DECADE = 40  # scores within 10**(1/40) ~ 6 % are ties -> newer first
SNIPPET_TOKENS = 24
MAX_LIMIT = 200

Row = tuple  # (path, scope, kind, name, date, recency, score, snippet, title, path_marked, body)


class IndexBase(VectorSearch, Updater):
    """A search index over one workspace; backends implement `_query` and storage."""

    backend = ""
    catalogue: Catalogue  # the pages' file catalogue, in the same database

    @property
    def location(self) -> str:
        """Where the index lives, for messages (never a password)."""
        raise NotImplementedError

    def _query(self, tree: Node, query: str, filters: Filters, limit: int, offset: int,
               with_total: bool) -> tuple[list[Row], int]:
        raise NotImplementedError

    def _paths(self, tree: Node, query: str, filters: Filters) -> set[str]:
        raise NotImplementedError

    def _file_rows(self, paths: Sequence[str]) -> dict[str, tuple]:
        """path -> (scope, kind, name, date, recency) of these indexed files."""
        raise NotImplementedError

    def close(self) -> None:
        """Close this thread's connection (backends keep one per thread in `_local`)."""
        local = getattr(self, "_local", None)
        conn = getattr(local, "conn", None)
        if local is not None and conn is not None:
            conn.close()
            local.conn = None
        self.catalogue.close()

    def paths_matching(self, query: str, *, scope: str | Sequence[str] | None = None,
                       kind: str | Sequence[str] | None = None,
                       date_from: str | dt.date | None = None,
                       date_to: str | dt.date | None = None,
                       visible_to: str | None = None) -> set[str]:
        """Every file that matches, unranked (recall checks, bulk tooling)."""
        tree = parse_tree(query)
        filters = check_filters(scope=scope, kind=kind, date_from=date_from, date_to=date_to,
                                visible_to=visible_to)
        self.drain_for_reader()
        return self._paths(tree, query, filters)

    def search(self, query: str, *, scope: str | Sequence[str] | None = None,
               kind: str | Sequence[str] | None = None, date_from: str | dt.date | None = None,
               date_to: str | dt.date | None = None, visible_to: str | None = None,
               limit: int = 20, offset: int = 0, with_total: bool = True,
               catch_up: bool = True, prefix_last: bool = False,
               mode: str = "keyword") -> SearchResults:
        """Ranked hits with snippets.

        `visible_to` restricts results to what that scope's token may read (its own files
        and the shared ones). `prefix_last` matches the last word as a prefix: what the
        search box does while a person is typing. `mode`: "hybrid" ranks by keywords and
        meaning together (`hybrid.py`; what the page, the API and the tools ask for unless
        told otherwise), "keyword" by keywords alone.
        """
        started = time.perf_counter()
        if mode not in MODES:
            raise QueryError(f"Unknown search mode {str(mode)[:40]!r}: use hybrid or keyword.")
        tree = parse_tree(query, prefix_last=prefix_last)
        filters = check_filters(scope=scope, kind=kind, date_from=date_from, date_to=date_to,
                                visible_to=visible_to)
        self.drain_for_reader()
        if catch_up:
            self.maybe_catch_up()
        limit = max(1, min(int(limit), MAX_LIMIT))
        offset = max(0, int(offset))
        if mode == "hybrid":
            fused = hybrid(self, tree, query, filters, limit, offset, with_total)
            return SearchResults(query, fused.hits, fused.total, offset, limit,
                                 time.perf_counter() - started, fused.mode, fused.notice)
        rows, total = self._query(tree, query, filters, limit, offset, with_total)
        hits = [Hit.from_row(row) for row in rows]
        return SearchResults(query, hits, total, offset, limit, time.perf_counter() - started)

    def stats(self) -> dict:
        self.drain()
        return {"backend": self.backend, "files": self.count(),
                "built_at": self._meta("built_at")}
