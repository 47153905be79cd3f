"""Full-text search over every file of the workspace (SQLite FTS5; Postgres when configured).

Why an index at all: ripgrep needs 110-150 ms to scan a 20k-file workspace, and it can neither
rank nor say which heading matched. The index is a cache of the files (the files stay the
truth) and can always be rebuilt from them.

The package, by job:
- `query`: the search language (parser, QueryError pointing at the place);
- `filters`: scope, kind, dates and visibility, checked;
- `documents`: files as documents, read through the store's walker, with git's change times;
- `indexer`, `updater`: keeping an index current (indexing, catch-up scan, rebuild; the
  listener, background drain and when each runs);
- `base`, `sqlite`, `postgres`: searching, and the two storage backends;
- `catalogue` (kept), `catalogue_reads` (queries), `catalogue_db` (storage): the file
  catalogue, every file with its place, size and last commit: the pages' read model;
- `snippets`, `results`: highlights as (text, is_match) spans, hits.
Plain Python: no Django here; HTML is made in `memoryui.rendering`.
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import IndexBase
from .filters import DATE_MAX, DATE_MIN, parse_date
from .postgres import PostgresSearchIndex
from .query import Op, QueryError, SearchUnavailable, Term, parse_tree
from .results import Hit, SearchResults
from .sqlite import SearchIndex, checked_path, parse_query

DEFAULT_FILE = Path(".git") / "memoryui" / "search.sqlite3"
_PG_SCHEMES = ("postgres", "postgresql", "pgsql")


def index_path(setting: str | os.PathLike[str] | None, workspace: Path) -> Path:
    """The SQLite index file for a deployment.

    An unset or empty setting means the workspace's own `.git/memoryui/search.sqlite3`
    (beside the store's other private state, never in the tree or a sync); a relative
    setting is taken from the current directory. Never a file named after a missing value.
    """
    if setting is None or not str(setting).strip():
        return Path(workspace).resolve() / DEFAULT_FILE
    return checked_path(Path(setting).expanduser().absolute())


def open_index(path: str | os.PathLike[str] | None, *, database_url: str | None = None,
               **kwargs: object) -> IndexBase:
    """The index for a deployment: Postgres full-text when `database_url` points at
    Postgres, else SQLite FTS5 in `path` (an absolute file path)."""
    if database_url and database_url.split(":", 1)[0] in _PG_SCHEMES:
        return PostgresSearchIndex(database_url, **kwargs)  # type: ignore[arg-type]
    return SearchIndex(checked_path(path), **kwargs)  # type: ignore[arg-type]


__all__ = [
    "DATE_MAX", "DATE_MIN", "Hit", "IndexBase", "Op", "PostgresSearchIndex", "QueryError",
    "SearchIndex", "SearchResults", "SearchUnavailable", "Term", "index_path", "open_index",
    "parse_date", "parse_query", "parse_tree",
]
