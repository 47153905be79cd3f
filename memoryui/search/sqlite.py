"""The SQLite FTS5 index: one file, safe for several processes (WAL, busy timeout).

Scope, kind, shared and date filters are tokens in a hidden `tags` column joined into the
MATCH, so a filtered search costs no more than an open one. Every word a person types reaches
FTS5 as a quoted string (`to_fts5`), never as syntax.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from memoryui.store import StoreError

from .base import SCHEMA_VERSION, SNIPPET_TOKENS, TIE_BUCKETS_PER_DECADE, WEIGHTS, IndexBase, Row
from .catalogue import Catalogue
from .catalogue_db import SqliteCatalogueDb, sqlite_connection, sqlite_transaction
from .documents import Doc
from .filters import DATE_MAX, DATE_MIN, Filters, date_terms
from .query import Node, QueryError, SearchUnavailable, Term, parse_tree
from .vectors import VectorWriter
from .vectors_db import VectorStorage

SHARED_TAG = "shared0"
# A name a missing setting turns into when printed: never an index file.
MISSING_NAMES = frozenset({"None", "none", "null", "undefined", "nil", ""})

_FTS = """CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    name, title, body, path, tags,
    tokenize = 'unicode61 remove_diacritics 2', prefix = '3')"""  # see PREFIX_MIN_CHARS
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
{_FTS};
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, scope TEXT NOT NULL,
    kind TEXT NOT NULL, name TEXT NOT NULL, date TEXT NOT NULL, recency REAL NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS files_date ON files(date);
INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', '{SCHEMA_VERSION}')
"""


def to_fts5(node: Node) -> str:
    if isinstance(node, Term):
        quoted = '"' + node.text.replace('"', '""') + '"' + ("*" if node.prefix else "")
        return f"{node.column} : {quoted}" if node.column else quoted
    return f"({to_fts5(node.left)} {node.op} {to_fts5(node.right)})"


def parse_query(query: str, *, prefix_last: bool = False) -> str:
    """What a person types, as a safe FTS5 expression (every word a quoted string)."""
    return to_fts5(parse_tree(query, prefix_last=prefix_last))


def scope_tag(scope: str) -> str:
    # Hex keeps any scope name one token whatever the tokenizer does with '-' or '_'; the
    # trailing digit keeps any future stemmer off it.
    return f"s{scope.encode().hex()}0"


def kind_tag(kind: str) -> str:
    return f"k{kind or 'other'}0"


def tags(doc: Doc) -> str:
    out = [scope_tag(doc.scope), kind_tag(doc.kind)]
    if doc.shared:
        out.append(SHARED_TAG)
    d = doc.date.replace("-", "")
    if len(d) == 8 and d.isdigit():
        out += [f"m{d[:6]}", f"d{d}"]
    return " ".join(out)


def _friendly(exc: sqlite3.Error, query: str) -> StoreError:
    msg = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and (
            msg.startswith("fts5") or "syntax error" in msg or "unterminated" in msg
            or "no such column" in msg or "malformed MATCH" in msg):
        detail = msg.removeprefix("fts5: ")
        return QueryError(f"Could not understand the search {query.strip()!r} ({detail}). "
                          'Use words, "exact phrases", prefix*, OR, NOT and parentheses.')
    return SearchUnavailable(f"The search index is not available right now ({msg}); "
                             "try again, or run `python3 manage.py reindex`.")


def _day(value: str, default: dt.date) -> dt.date:
    try:
        return min(max(dt.date.fromisoformat(value), DATE_MIN), DATE_MAX)
    except ValueError:
        return default


def checked_path(path: object) -> Path:
    """The index file: an absolute path, never one made from a missing setting ("None")."""
    if path is None or not isinstance(path, str | os.PathLike):
        raise ValueError(f"the search index needs a file path, not {path!r}")
    p = Path(path)
    if p.name in MISSING_NAMES or not str(path).strip():
        raise ValueError(f"refusing {str(path)!r} as the search index file: it looks like a "
                         "missing setting (set MEMORYUI_SEARCH_DB, or leave it unset)")
    if not p.is_absolute():
        raise ValueError(f"the search index file must be an absolute path, not {str(path)!r}")
    return p


INSERT_BATCH = 1_000  # rows a rebuild inserts at once (the files are not all held)
AUTOMERGE, CRISISMERGE = 4, 16  # FTS5's defaults, restored after a rebuild


def _empty(conn: sqlite3.Connection) -> None:
    """Drop every row: the FTS table is dropped and made anew, since FTS5 deletes rows one
    by one, tokenizing each again (35 s of a 90 s rebuild at 200k files)."""
    conn.execute("DROP TABLE IF EXISTS fts")
    conn.execute(_FTS)
    conn.execute("DELETE FROM files")


def _insert(conn: sqlite3.Connection, fts_rows: list[tuple], file_rows: list[tuple]) -> None:
    conn.executemany("INSERT INTO fts(rowid, name, title, body, path, tags) "
                     "VALUES (?, ?, ?, ?, ?, ?)", fts_rows)
    conn.executemany("INSERT INTO files(id, path, scope, kind, name, date, recency, "
                     "size, mtime_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", file_rows)


class SearchIndex(IndexBase):
    """The SQLite FTS5 index in one file."""

    backend = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, catch_up_interval: float = 5.0,
                 background: bool = True) -> None:
        self.path = checked_path(path)
        super().__init__(catch_up_interval=catch_up_interval, background=background)
        self._local = threading.local()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # its own file: a write's catalogue row never waits behind an index transaction
        self.catalogue = Catalogue(SqliteCatalogueDb(self.path.with_name(
            f"{self.path.stem}-catalogue{self.path.suffix}")))

        def create(conn: sqlite3.Connection) -> None:
            version = None
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                version = row[0] if row else None
            if version not in (None, SCHEMA_VERSION):
                for table in ("fts", "files", "meta", "passages"):
                    conn.execute(f"DROP TABLE IF EXISTS {table}")
            for stmt in [*_SCHEMA.strip().split(";\n"), *VectorStorage.schema(False)]:
                conn.execute(stmt)

        self._transaction(create)
        self.vectors = VectorStorage(self._conn, postgres=False)

    @property
    def location(self) -> str:
        return str(self.path)

    # -- connections ---------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        return sqlite_connection(self._local, self.path)

    def _transaction(self, fn: Callable[[sqlite3.Connection], object]) -> object:
        return sqlite_transaction(self._conn(), fn)

    def _vector_transaction(self, fn: Callable[[sqlite3.Connection], object]) -> None:
        self._transaction(fn)

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _reset(self, identity: str) -> None:
        def reset(conn: sqlite3.Connection) -> None:
            _empty(conn)
            self.vectors.clear(conn)
            conn.execute("DELETE FROM meta WHERE key <> 'schema'")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('identity', ?)", (identity,))
        self._transaction(reset)

    # -- writing ---------------------------------------------------------------------------
    def _write(self, docs: Iterable[Doc], removed: Iterable[str], meta: dict[str, str],
               clear: bool = False) -> None:
        """Replace the rows of `docs` (renumbered as the newest) and drop `removed`, with
        their passages."""
        removed = list(removed)

        def apply(conn: sqlite3.Connection) -> None:
            if clear:
                _empty(conn)
                # no merging while every row goes in: `_after_rebuild` merges once (a rebuild
                # of 200k files spent half its index time merging segments it merged again)
                conn.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)")
                conn.execute("INSERT INTO fts(fts, rank) VALUES ('crisismerge', 2000)")
            next_id = (conn.execute("SELECT max(id) FROM files").fetchone()[0] or 0) + 1
            stale: list[tuple[int]] = []
            fts_rows, file_rows = [], []
            vectors = VectorWriter(self.vectors, conn, clear=clear,
                                   daily=self._daily_memo())
            for d in vectors.feed(docs):
                if not clear:
                    row = conn.execute("SELECT id FROM files WHERE path = ?",
                                       (d.path,)).fetchone()
                    if row:
                        stale.append((row[0],))
                fts_rows.append((next_id, d.name, d.title, d.body, d.path, tags(d)))
                file_rows.append((next_id, d.path, d.scope, d.kind, d.name, d.date, d.recency,
                                  d.size, d.mtime_ns))
                next_id += 1
                if clear and len(fts_rows) >= INSERT_BATCH:  # nothing stale: insert as read
                    _insert(conn, fts_rows, file_rows)
                    fts_rows, file_rows = [], []
            for p in removed:
                row = conn.execute("SELECT id FROM files WHERE path = ?", (p,)).fetchone()
                if row:
                    stale.append((row[0],))
            if stale:
                conn.executemany("DELETE FROM fts WHERE rowid = ?", stale)
                conn.executemany("DELETE FROM files WHERE id = ?", stale)
            _insert(conn, fts_rows, file_rows)
            vectors.remove(removed)
            vectors.finish()
            conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                             list(meta.items()))
        self._transaction(apply)

    def _after_rebuild(self) -> None:
        # Merge the b-tree segments: fewer segments to read per query. Then back to FTS5's
        # own merging for the updates that follow.
        def optimize(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
            conn.execute(f"INSERT INTO fts(fts, rank) VALUES ('automerge', {AUTOMERGE})")
            conn.execute(f"INSERT INTO fts(fts, rank) VALUES ('crisismerge', {CRISISMERGE})")
        self._transaction(optimize)

    # -- reading ---------------------------------------------------------------------------
    def count(self) -> int:
        self.drain()
        return self._conn().execute("SELECT count(*) FROM files").fetchone()[0]

    def indexed_rows(self) -> Iterable[tuple[str, int, int]]:
        self.drain()
        return self._conn().execute("SELECT path, size, mtime_ns FROM files")

    def _stamps(self, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        conn = self._conn()
        for i in range(0, len(paths), 500):  # SQLite's bound-parameter limit
            chunk = paths[i:i + 500]
            out.update((p, (s, m)) for p, s, m in conn.execute(
                "SELECT path, size, mtime_ns FROM files WHERE path IN "
                f"({', '.join('?' * len(chunk))})", chunk))
        return out

    def _file_rows(self, paths: Sequence[str]) -> dict[str, tuple]:
        out: dict[str, tuple] = {}
        conn = self._conn()
        for i in range(0, len(paths), 500):
            chunk = list(paths[i:i + 500])
            out.update((r[0], r[1:]) for r in conn.execute(
                "SELECT path, scope, kind, name, date, recency FROM files WHERE path IN "
                f"({', '.join('?' * len(chunk))})", chunk))
        return out

    def _date_range(self, filters: Filters) -> list[str] | None:
        """Date tokens for the filter, clamped to the dates the index holds (so a wide range
        costs no more than the data); [] when nothing can match."""
        if filters.date_from is None and filters.date_to is None:
            return None
        lo, hi = self._conn().execute("SELECT min(date), max(date) FROM files").fetchone()
        if lo is None or hi is None:
            return []
        first = max(filters.date_from or DATE_MIN, _day(lo, DATE_MIN))
        last = min(filters.date_to or DATE_MAX, _day(hi, DATE_MAX))
        return date_terms(first, last) if first <= last else []

    def _match(self, tree: Node, filters: Filters) -> str:
        """The FTS5 MATCH expression: the query, AND the filters as tokens of `tags`."""
        parts = []
        if filters.scope:
            parts.append(" OR ".join(f'"{scope_tag(s)}"' for s in filters.scope))
        if filters.kind:
            parts.append(" OR ".join(f'"{kind_tag(k)}"' for k in filters.kind))
        if filters.visible_to:  # the token's own scope, and what every scope reads
            parts.append(f'"{scope_tag(filters.visible_to)}" OR "{SHARED_TAG}"')
        elif filters.visible_to is not None:  # a token bound to no scope: shared files only
            parts.append(f'"{SHARED_TAG}"')
        dates = self._date_range(filters)
        if dates is not None:
            parts.append(" OR ".join(f'"{t}"' for t in dates) if dates else '"__none__"')
        # The words never reach the hidden tags column.
        expr = f"{{name title body path}} : ({to_fts5(tree)})"
        return " AND ".join([expr, *(f"tags : ({p})" for p in parts)])

    def _paths(self, tree: Node, query: str, filters: Filters) -> set[str]:
        try:
            return {r[0] for r in self._conn().execute(
                "SELECT f.path FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?",
                (self._match(tree, filters),))}
        except sqlite3.Error as exc:
            raise _friendly(exc, query) from None

    def _query(self, tree: Node, query: str, filters: Filters, limit: int, offset: int,
               with_total: bool) -> tuple[list[Row], int]:
        full = self._match(tree, filters)
        expr = to_fts5(tree)
        w = ", ".join(str(x) for x in WEIGHTS)
        conn = self._conn()
        try:
            # Ranking reads no stored column: BM25, then the row number (= recency).
            ranked = conn.execute(
                f"SELECT rowid, bm25(fts, {w}) AS s FROM fts WHERE fts MATCH ? "
                f"ORDER BY round(log(max(-s, 1e-12)) * {TIE_BUCKETS_PER_DECADE}) DESC, "
                f"rowid DESC LIMIT ? OFFSET ?", (full, limit, offset)).fetchall()
            total = len(ranked) + offset
            if with_total and (len(ranked) == limit or offset):
                total = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                     (full,)).fetchone()[0]
            if not ranked:
                return [], total
            ids = [r[0] for r in ranked]
            qmarks = ", ".join("?" * len(ids))
            meta = {r[0]: r[1:] for r in conn.execute(
                f"SELECT id, path, scope, kind, name, date, recency FROM files "
                f"WHERE id IN ({qmarks})", ids)}
            marks = {r[0]: r[1:] for r in conn.execute(
                f"SELECT rowid, snippet(fts, 2, char(2), char(3), '\u2026', {SNIPPET_TOKENS}), "
                f"highlight(fts, 1, char(2), char(3)), highlight(fts, 3, char(2), char(3)), "
                f"body FROM fts WHERE fts MATCH ? AND rowid IN ({qmarks})", [expr, *ids])}
        except sqlite3.Error as exc:
            raise _friendly(exc, query) from None
        rows = []
        for rid, score in ranked:
            if rid in meta:  # else deleted between the reads
                snip, title, path_m, body = marks.get(rid, ("", "", "", None))
                rows.append((*meta[rid], -float(score), snip, title, path_m, body))
        return rows, total

    def stats(self) -> dict:
        self.drain()
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        return {**super().stats(), "bytes": size}
