"""Where the file catalogue is stored: a SQLite file beside the search index, or tables in
the index's Postgres database.

The SQLite catalogue has a file of its own because SQLite has one writer per file: every
write of a memory file updates its catalogue row before it is acknowledged, and must not
wait behind the index's long transactions (a drain tokenizing a big log, a rebuild).
SQL is written once with `?` placeholders; the Postgres side turns them into `%s`.
A thread's SQLite connection and a write transaction are made here for both SQLite files
(`sqlite_connection`, `sqlite_transaction`).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

CATALOGUE_SCHEMA = "2"
_COLUMNS = """path {text} PRIMARY KEY, scope {text} NOT NULL, kind {text} NOT NULL,
    name {text} NOT NULL, size {int} NOT NULL, mtime_ns {int} NOT NULL,
    sha {text} NOT NULL DEFAULT '', author {text} NOT NULL DEFAULT '',
    actor {text} NOT NULL DEFAULT '', time {int} NOT NULL DEFAULT 0,
    subject {text} NOT NULL DEFAULT ''"""
# One row per scope, what the overview shows of it, kept in the same transactions as the
# files: counting 200k files by scope at each request took seconds.
_SCOPES = """scope {text} PRIMARY KEY, files {int} NOT NULL, size {int} NOT NULL,
    daily {int} NOT NULL, notes {int} NOT NULL, newest_daily {text} NOT NULL,
    sha {text} NOT NULL, author {text} NOT NULL, actor {text} NOT NULL, time {int} NOT NULL,
    subject {text} NOT NULL"""


def sqlite_connection(local: threading.local, path: Path) -> sqlite3.Connection:
    """This thread's connection to the SQLite file at `path`, made again in a forked child."""
    conn: sqlite3.Connection | None = getattr(local, "conn", None)
    if conn is None or getattr(local, "pid", None) != os.getpid():
        conn = sqlite3.connect(path, timeout=15.0, isolation_level=None,
                               check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=15000")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # 2 MB a connection: there is one per thread, and a worker's 16 pool threads each
        # get one as they serve searches; the pages are in the OS's cache anyway
        conn.execute("PRAGMA cache_size=-2000")
        local.conn, local.pid = conn, os.getpid()
    return conn


def sqlite_transaction(conn: sqlite3.Connection,
                       fn: Callable[[sqlite3.Connection], object]) -> object:
    """`fn` in one write transaction: one writer at a time, across processes."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        out = fn(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return out


class Cursor(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...

    def executemany(self, sql: str, rows: Any) -> Any: ...


class CatalogueDb:
    """The storage primitives the catalogue needs, on either backend."""

    files = "catalogue"  # the table names
    meta = "catalogue_meta"
    scopes = "catalogue_scopes"

    def use(self, identity: str) -> None:
        """Keep the catalogue of the workspace `identity` names (its root and layout)."""

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        raise NotImplementedError

    def write(self, fn: Callable[[Cursor], object]) -> object:
        """`fn(cursor)` in one transaction; catalogue writers (every process) take turns."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class SqliteCatalogueDb(CatalogueDb):
    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        path.parent.mkdir(parents=True, exist_ok=True)

        def create(cur: Cursor) -> None:
            row = None
            if cur.execute("SELECT 1 FROM sqlite_master WHERE name = 'catalogue_meta'"
                           ).fetchone():
                row = cur.execute("SELECT value FROM catalogue_meta WHERE key = 'schema'"
                                  ).fetchone()
            if row is not None and row[0] != CATALOGUE_SCHEMA:
                for t in ("catalogue", "catalogue_meta", "catalogue_scopes"):
                    cur.execute(f"DROP TABLE IF EXISTS {t}")
            cur.execute("CREATE TABLE IF NOT EXISTS catalogue_scopes("
                        + _SCOPES.format(text="TEXT", int="INTEGER") + ")")
            cur.execute("CREATE TABLE IF NOT EXISTS catalogue_meta("
                        "key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            cur.execute("CREATE TABLE IF NOT EXISTS catalogue("
                        + _COLUMNS.format(text="TEXT", int="INTEGER") + ")")
            _indexes(cur)
            cur.execute("INSERT OR IGNORE INTO catalogue_meta VALUES ('schema', ?)",
                        (CATALOGUE_SCHEMA,))

        self.write(create)

    def _conn(self) -> sqlite3.Connection:
        return sqlite_connection(self._local, self.path)

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self._conn().execute(sql, params).fetchall()

    def write(self, fn: Callable[[Cursor], object]) -> object:
        return sqlite_transaction(self._conn(), fn)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _indexes(cur: Cursor, t: str = "catalogue") -> None:
    # pages ask by scope and kind (a scope's files, every daily log of a week, world topics)
    cur.execute(f"CREATE INDEX IF NOT EXISTS {t}_scope ON {t}(scope, kind, name)")
    cur.execute(f"CREATE INDEX IF NOT EXISTS {t}_kind ON {t}(kind, name)")
    cur.execute(f"CREATE INDEX IF NOT EXISTS {t}_time ON {t}(scope, time)")


class _PgCursor:
    """A psycopg cursor taking the catalogue's `?` placeholders."""

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._cur.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._cur.executemany(sql.replace("?", "%s"), rows)

    def fetchone(self) -> Any:
        return self._cur.fetchone()


class PostgresCatalogueDb(CatalogueDb):
    """Tables named after the workspace: the instances sharing one database each keep the
    catalogue of their own clone (its sizes, stamps and writes not yet committed)."""

    LOCK = 8246156  # the advisory lock catalogue writers take turns on

    def __init__(self, dsn: str) -> None:
        import psycopg  # optional dependency, as for the index

        self._psycopg = psycopg
        self.dsn = dsn
        self._local = threading.local()

    def use(self, identity: str) -> None:
        t = "memoryui_catalogue_" + hashlib.sha1(identity.encode()).hexdigest()[:16]
        if t == self.files:
            return
        self.files, self.meta, self.scopes = t, t + "_meta", t + "_scopes"

        def create(cur: Cursor) -> None:
            cur.execute(f"SELECT to_regclass('{t}_meta')")
            if cur.fetchone()[0] is not None:  # type: ignore[attr-defined]
                cur.execute(f"SELECT value FROM {t}_meta WHERE key = 'schema'")
                row = cur.fetchone()  # type: ignore[attr-defined]
                if row is None or row[0] != CATALOGUE_SCHEMA:
                    for name in (t, f"{t}_meta", f"{t}_scopes"):
                        cur.execute(f"DROP TABLE IF EXISTS {name}")
            cur.execute(f"CREATE TABLE IF NOT EXISTS {t}_scopes("
                        + _SCOPES.format(text="text", int="bigint") + ")")
            cur.execute(f"CREATE TABLE IF NOT EXISTS {t}_meta("
                        "key text PRIMARY KEY, value text NOT NULL)")
            cur.execute(f"CREATE TABLE IF NOT EXISTS {t}("
                        + _COLUMNS.format(text="text", int="bigint") + ")")
            _indexes(cur, t)
            cur.execute(f"INSERT INTO {t}_meta VALUES ('schema', ?) "
                        "ON CONFLICT (key) DO NOTHING", (CATALOGUE_SCHEMA,))

        self.write(create)

    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed or getattr(self._local, "pid", None) != os.getpid():
            conn = self._psycopg.connect(self.dsn, autocommit=True)
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        return self._conn().execute(sql.replace("?", "%s"), params).fetchall()

    def write(self, fn: Callable[[Cursor], object]) -> object:
        conn = self._conn()
        with conn.transaction():
            cur = conn.cursor()
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (self.LOCK,))
            return fn(_PgCursor(cur))

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
