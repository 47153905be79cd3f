"""Postgres full-text search (tsvector + GIN index, ts_rank) in the app database.

Same behaviour as the SQLite index: field weights, recency by row number, the same query
language, filters, visibility and snippets. Used when DATABASE_URL points at Postgres, so
several instances share one index. Every text a person types goes in as a bound parameter.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any
from urllib.parse import urlsplit

from memoryui.store import Kind

from .base import SCHEMA_VERSION, SNIPPET_TOKENS, TIE_BUCKETS_PER_DECADE, IndexBase, Row
from .catalogue import Catalogue
from .catalogue_db import PostgresCatalogueDb
from .documents import Doc
from .filters import Filters
from .query import Node, QueryError, SearchUnavailable, Term
from .snippets import LEXEME_RE, highlight_text
from .vectors import WRITE_BATCH, VectorWriter
from .vectors_db import VectorStorage

log = logging.getLogger("memoryui.search")

_TABLES = ("memoryui_fts_files", "memoryui_fts_meta", "memoryui_passages")
DEADLOCK_TRIES = 3  # a write Postgres aborts to break a deadlock is tried again, this often
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memoryui_fts_meta(key text PRIMARY KEY, value text NOT NULL);
CREATE SEQUENCE IF NOT EXISTS memoryui_fts_seq;
CREATE TABLE IF NOT EXISTS memoryui_fts_files(
    id bigint PRIMARY KEY, path text NOT NULL UNIQUE, scope text NOT NULL, kind text NOT NULL,
    shared boolean NOT NULL, name text NOT NULL, date text NOT NULL,
    recency double precision NOT NULL, size bigint NOT NULL, mtime_ns bigint NOT NULL,
    title text NOT NULL, body text NOT NULL, tsv tsvector NOT NULL);
CREATE INDEX IF NOT EXISTS memoryui_fts_files_tsv ON memoryui_fts_files USING gin(tsv);
CREATE INDEX IF NOT EXISTS memoryui_fts_files_scope ON memoryui_fts_files(scope, kind);
CREATE INDEX IF NOT EXISTS memoryui_fts_files_date ON memoryui_fts_files(date)
"""
# Weights by tsvector label: D body 1, C path 0.5, B headings 5, A name 10 (as in SQLite).
_WEIGHTS = "'{0.1, 0.05, 0.5, 1.0}'"
_TSV = ("setweight(to_tsvector('simple', %s), 'A') || setweight(to_tsvector('simple', %s), "
        "'B') || setweight(to_tsvector('simple', %s), 'C') || "
        "setweight(to_tsvector('simple', %s), 'D')")
_LABEL = {"name": "A", "title": "B", "path": "C", "body": "D"}
_ERRORS = ("The search index is not available right now ({}); try again, or run "
           "`python3 manage.py reindex`.")


def _words(text: str) -> str:
    """A path or name as words for the 'simple' parser (it would keep a path as one token)."""
    return " ".join(LEXEME_RE.findall(text))


def _batches(docs: Iterable[Doc], size: int) -> Iterator[list[Doc]]:
    it = iter(docs)
    while batch := list(islice(it, size)):
        yield batch


def to_tsquery_sql(node: Node, params: list[str]) -> str:
    """The tree as SQL building a tsquery; every user text goes in as a bound parameter."""
    if isinstance(node, Term):
        if not node.prefix and not node.column:
            params.append(node.text)
            return "phraseto_tsquery('simple', %s)"
        words = [w.lower() for w in LEXEME_RE.findall(node.text)]
        label = _LABEL[node.column] if node.column else ""
        parts = [f"'{w}':{label}" if label else f"'{w}'" for w in words]
        if node.prefix:
            parts[-1] = f"'{words[-1]}':*{label}"
        params.append(" <-> ".join(parts))
        return "to_tsquery('simple', %s)"
    left = to_tsquery_sql(node.left, params)
    right = to_tsquery_sql(node.right, params)
    if node.op == "NOT":
        return f"({left} && !!{right})"
    return f"({left} {'&&' if node.op == 'AND' else '||'} {right})"


class PostgresSearchIndex(IndexBase):
    """The index in Postgres tables next to the app's own."""

    backend = "postgres"

    def __init__(self, dsn: str, *, catch_up_interval: float = 5.0,
                 background: bool = True) -> None:
        super().__init__(catch_up_interval=catch_up_interval, background=background)
        import psycopg  # optional dependency: pip install 'memoryui[postgres]'

        self._psycopg = psycopg
        self.dsn = dsn
        self._local = threading.local()
        self.catalogue = Catalogue(PostgresCatalogueDb(dsn))
        with self._conn().transaction():
            cur = self._conn().cursor()
            cur.execute("SELECT pg_advisory_xact_lock(8246155)")  # one creator at a time
            cur.execute("SELECT to_regclass('memoryui_fts_meta')")
            if cur.fetchone()[0] is not None:
                cur.execute("SELECT value FROM memoryui_fts_meta WHERE key = 'schema'")
                row = cur.fetchone()
                if row is None or row[0] != SCHEMA_VERSION:  # an older index: rebuilt
                    for table in _TABLES:
                        cur.execute(f"DROP TABLE IF EXISTS {table}")
            for stmt in [*_SCHEMA.strip().split(";\n"), *VectorStorage.schema(True)]:
                cur.execute(stmt)
            cur.execute("INSERT INTO memoryui_fts_meta VALUES ('schema', %s) "
                        "ON CONFLICT (key) DO NOTHING", (SCHEMA_VERSION,))
        self.vectors = VectorStorage(self._conn, postgres=True)

    @property
    def location(self) -> str:
        """The database, without user or password."""
        url = urlsplit(self.dsn)
        return f"Postgres at {url.hostname or 'localhost'}:{url.port or 5432}{url.path}"

    def _identity(self, store: object) -> str:
        # Several instances share one Postgres, each with its own clone of the workspace
        # (wherever it lives on disk): the layout is what must match.
        return f"layout:{store.layout.key}"  # type: ignore[attr-defined]

    def _conn(self):  # noqa: ANN202 - psycopg is optional
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or getattr(self._local, "pid", None) != os.getpid():
            conn = self._psycopg.connect(self.dsn, autocommit=True)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def _meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM memoryui_fts_meta WHERE key = %s",
                                   (key,)).fetchone()
        return row[0] if row else None

    def _reset(self, identity: str) -> None:
        conn = self._conn()
        with conn.transaction():
            conn.execute("DELETE FROM memoryui_fts_files")
            self.vectors.clear(conn)
            conn.execute("DELETE FROM memoryui_fts_meta WHERE key <> 'schema'")
            conn.execute("INSERT INTO memoryui_fts_meta VALUES ('identity', %s) "
                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (identity,))

    def _write(self, docs: Iterable[Doc], removed: Iterable[str], meta: dict[str, str],
               clear: bool = False) -> None:
        gone = list(removed)
        if clear or not isinstance(docs, list):  # a build's stream: read once
            self._write_once(docs, gone, meta, clear)
            return
        # Processes index overlapping files at once (each drains what it served, and a
        # catch-up takes in what others wrote): each takes the passages' write lock first
        # (`_write_once`), then the rows in path order, so none waits on another in a
        # cycle. A transaction Postgres still aborts to break a deadlock (a reader locking
        # rows of its own) is written again (its documents are in hand), as Postgres's
        # documentation advises.
        docs = sorted(docs, key=lambda d: d.path)
        gone.sort()
        for attempt in range(1, DEADLOCK_TRIES + 1):
            try:
                self._write_once(docs, gone, meta, clear)
                return
            except self._psycopg.errors.DeadlockDetected:
                if attempt == DEADLOCK_TRIES:
                    raise
                log.info("search index write chosen to break a deadlock: written again")

    def _write_once(self, docs: Iterable[Doc], gone: list[str], meta: dict[str, str],
                    clear: bool) -> None:
        conn = self._conn()
        with conn.transaction():
            # The passages' write lock before any row: a write that removes files, or
            # passes a batch, takes it before some of its rows, and one that took rows
            # first would then wait on it in a cycle.
            self.vectors.lock(conn)
            cur = conn.cursor()
            if clear:
                cur.execute("DELETE FROM memoryui_fts_files")
            vectors = VectorWriter(self.vectors, conn, clear=clear,
                                   daily=self._daily_memo())
            if gone:
                cur.execute("DELETE FROM memoryui_fts_files WHERE path = ANY(%s)", (gone,))
                vectors.remove(gone)
            # in batches: the vectors are written between two (psycopg holds the
            # connection for the whole of an executemany)
            for batch in _batches(docs, WRITE_BATCH):
                self._insert(cur, batch)
                for d in batch:
                    vectors.add(d)
                vectors.flush()
            vectors.finish()
            for key, value in sorted(meta.items()):
                cur.execute("INSERT INTO memoryui_fts_meta VALUES (%s, %s) ON CONFLICT (key) "
                            "DO UPDATE SET value = excluded.value", (key, value))

    def _vector_transaction(self, fn: Callable[[Any], object]) -> None:
        conn = self._conn()
        with conn.transaction():
            fn(conn)

    @staticmethod
    def _insert(cur: Any, docs: list[Doc]) -> None:
        rows = ((d.path, d.scope, d.kind, d.shared, d.name, d.date, d.recency, d.size,
                 d.mtime_ns, d.title, d.body, _words(d.name), d.title, _words(d.path),
                 d.body) for d in docs)
        cur.executemany(
            "INSERT INTO memoryui_fts_files(id, path, scope, kind, shared, name, date, "
            "recency, size, mtime_ns, title, body, tsv) VALUES (nextval('memoryui_fts_seq'),"
            f" %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {_TSV}) ON CONFLICT (path) DO "
            "UPDATE SET id = nextval('memoryui_fts_seq'), scope = excluded.scope, kind = "
            "excluded.kind, shared = excluded.shared, name = excluded.name, date = "
            "excluded.date, recency = excluded.recency, size = excluded.size, mtime_ns = "
            "excluded.mtime_ns, title = excluded.title, body = excluded.body, "
            "tsv = excluded.tsv", rows)

    def _after_rebuild(self) -> None:
        self._conn().execute("ANALYZE memoryui_fts_files")

    def count(self) -> int:
        self.drain()
        return self._conn().execute("SELECT count(*) FROM memoryui_fts_files").fetchone()[0]

    def indexed_rows(self) -> Iterable[tuple[str, int, int]]:
        self.drain()
        return self._conn().execute("SELECT path, size, mtime_ns FROM memoryui_fts_files")

    def _stamps(self, paths: Sequence[str]) -> dict[str, tuple[int, int]]:
        return {p: (s, m) for p, s, m in self._conn().execute(
            "SELECT path, size, mtime_ns FROM memoryui_fts_files WHERE path = ANY(%s)",
            (list(paths),))}

    def _file_rows(self, paths: Sequence[str]) -> dict[str, tuple]:
        return {r[0]: r[1:] for r in self._conn().execute(
            "SELECT path, scope, kind, name, date, recency FROM memoryui_fts_files "
            "WHERE path = ANY(%s)", (list(paths),))}

    @staticmethod
    def _where(filters: Filters, params: list) -> str:
        where = ["tsv @@ q.query"]
        if filters.scope:
            where.append("scope = ANY(%s)")
            params.append(filters.scope)
        if filters.kind:
            where.append("kind = ANY(%s)")
            params.append(filters.kind)
        if filters.visible_to:
            where.append("(scope = %s OR shared)")
            params.append(filters.visible_to)
        elif filters.visible_to is not None:  # a token bound to no scope
            where.append("shared")
        if filters.date_from:
            where.append("date >= %s")
            params.append(filters.date_from.isoformat())
        if filters.date_to:
            where.append("date <= %s")
            params.append(filters.date_to.isoformat())
        return " AND ".join(where)

    def _run(self, sql: str, params: list, query: str) -> list:
        try:
            return self._conn().execute(sql, params).fetchall()
        except self._psycopg.errors.SyntaxError as exc:  # tsquery syntax (cannot happen)
            raise QueryError(f"Could not understand the search {query!r}: {exc}") from None
        except self._psycopg.Error as exc:
            raise SearchUnavailable(_ERRORS.format(exc)) from None

    def _paths(self, tree: Node, query: str, filters: Filters) -> set[str]:
        params: list = []
        tsq = to_tsquery_sql(tree, params)
        where = self._where(filters, params)
        return {r[0] for r in self._run(
            f"SELECT path FROM memoryui_fts_files, (SELECT {tsq} AS query) q WHERE {where}",
            params, query)}

    def _query(self, tree: Node, query: str, filters: Filters, limit: int, offset: int,
               with_total: bool) -> tuple[list[Row], int]:
        params: list = []
        tsq = to_tsquery_sql(tree, params)
        where = self._where(filters, params)
        bucket = f"round(log(greatest(score, 1e-12)::numeric) * {TIE_BUCKETS_PER_DECADE}) DESC"
        rows = self._run(
            f"WITH q AS (SELECT {tsq} AS query), hits AS ("
            f"SELECT * FROM (SELECT id, path, scope, kind, name, date, recency, title, body, "
            f"ts_rank({_WEIGHTS}::float4[], tsv, q.query) AS score "
            f"FROM memoryui_fts_files, q WHERE {where}) ranked "
            f"ORDER BY {bucket}, id DESC LIMIT %s OFFSET %s) "
            "SELECT path, scope, kind, name, date, recency, score, title, body "
            f"FROM hits ORDER BY {bucket}, id DESC", [*params, limit, offset], query)
        rows = [(path, sc, kd, name, date, recency, score,
                 highlight_text(body, tree, SNIPPET_TOKENS), highlight_text(title, tree),
                 highlight_text(path, tree),
                 body if kd == Kind.DAILY.value else None)
                for path, sc, kd, name, date, recency, score, title, body in rows]
        total = len(rows) + offset
        if with_total and (len(rows) == limit or offset):
            count_params: list = []
            count_tsq = to_tsquery_sql(tree, count_params)
            count_where = self._where(filters, count_params)
            total = self._run(f"SELECT count(*) FROM memoryui_fts_files, "
                              f"(SELECT {count_tsq} AS query) q WHERE {count_where}",
                              count_params, query)[0][0]
        return rows, total
