"""Where passages and their vectors are stored: a table in the SQLite index file, or a table
in the index's Postgres database (float32 vectors as a BLOB / bytea; numpy does the math).

pgvector is not used: with the sign-bit pass done in each process (see `vectors.py`), the
database only hands over a few hundred rows by id per query, the same on both backends.

Row ids only grow (SQLite's AUTOINCREMENT, a Postgres sequence taken under a transaction
lock), so a process learns what is new by asking for the ids above the last it read. The
generation (`vec_gen` in the index's meta table) moves at every change of the rows,
`vec_removed` names the last generation that removed any (most writes only add: a daily
log's new entry), and `vec_model` names the model that embedded them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS passages(
    id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, scope TEXT NOT NULL,
    kind TEXT NOT NULL, shared INTEGER NOT NULL, heading TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, entry_id TEXT,
    hash TEXT NOT NULL, text TEXT NOT NULL, code BLOB NOT NULL, vec BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS passages_path ON passages(path)
"""
POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS memoryui_passages(
    id bigserial PRIMARY KEY, path text NOT NULL, scope text NOT NULL, kind text NOT NULL,
    shared boolean NOT NULL, heading text NOT NULL, start_line integer NOT NULL,
    end_line integer NOT NULL, entry_id text, hash text NOT NULL, text text NOT NULL,
    code bytea NOT NULL, vec bytea NOT NULL);
CREATE INDEX IF NOT EXISTS memoryui_passages_path ON memoryui_passages(path)
"""
_COLUMNS = ("path, scope, kind, shared, heading, start_line, end_line, entry_id, hash, text, "
            "code, vec")
CHUNK = 500  # ids or paths per statement (SQLite's bound-parameter limit)
WRITE_LOCK = 8246157  # Postgres: one vector writer at a time, so ids commit in order


class VectorStorage:
    """The passage table of one index. `connect` gives the calling thread's connection;
    writes take the connection of the keyword index's open transaction."""

    def __init__(self, connect: Callable[[], Any], *, postgres: bool) -> None:
        self._connect = connect
        self.postgres = postgres
        self.table = "memoryui_passages" if postgres else "passages"
        self.meta = "memoryui_fts_meta" if postgres else "meta"

    # -- SQL in one dialect ---------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        sql = sql.replace("{t}", self.table).replace("{m}", self.meta)
        return sql.replace("?", "%s") if self.postgres else sql

    def _in(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        if self.postgres:
            return f"{column} = ANY(%s)", [list(values)]
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)

    def _chunked(self, conn: Any, sql: str, column: str, values: Sequence[Any]
                 ) -> list[tuple]:
        out: list[tuple] = []
        for i in range(0, len(values), CHUNK):
            cond, params = self._in(column, values[i:i + CHUNK])
            out.extend(conn.execute(self._sql(sql).replace("{in}", cond), params).fetchall())
        return out

    @staticmethod
    def schema(postgres: bool) -> list[str]:
        text = POSTGRES_SCHEMA if postgres else SQLITE_SCHEMA
        return [s for s in text.strip().split(";\n") if s.strip()]

    # -- writing (inside the index's transaction) ------------------------------------------
    def lock(self, conn: Any) -> None:
        if self.postgres:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))

    def clear(self, conn: Any) -> None:
        self.lock(conn)
        conn.execute(self._sql("DELETE FROM {t}"))

    def old_rows(self, conn: Any, paths: Sequence[str]) -> list[tuple]:
        """(id, path, hash, start, end, heading, entry_id, scope, kind, shared) of `paths`."""
        rows = self._chunked(conn, "SELECT id, path, hash, start_line, end_line, heading, "
                             "entry_id, scope, kind, shared FROM {t} WHERE {in}", "path",
                             list(dict.fromkeys(paths)))
        return [(*r[:9], bool(r[9])) for r in rows]

    def delete_paths(self, conn: Any, paths: Sequence[str]) -> None:
        self.lock(conn)
        for i in range(0, len(paths), CHUNK):
            cond, params = self._in("path", paths[i:i + CHUNK])
            conn.execute(self._sql(f"DELETE FROM {{t}} WHERE {cond}"), params)

    def delete_ids(self, conn: Any, ids: Sequence[int]) -> None:
        self.lock(conn)
        for i in range(0, len(ids), CHUNK):
            cond, params = self._in("id", ids[i:i + CHUNK])
            conn.execute(self._sql(f"DELETE FROM {{t}} WHERE {cond}"), params)

    def relines(self, conn: Any, rows: Iterable[tuple]) -> None:
        """(heading, start, end, entry_id, scope, kind, shared, id): a kept passage moved."""
        self._many(conn, "UPDATE {t} SET heading = ?, start_line = ?, end_line = ?, "
                   "entry_id = ?, scope = ?, kind = ?, shared = ? WHERE id = ?", rows)

    def insert(self, conn: Any, rows: Iterable[tuple]) -> None:
        self.lock(conn)
        self._many(conn, f"INSERT INTO {{t}}({_COLUMNS}) VALUES "
                   f"({', '.join('?' * 12)})", rows)

    def _many(self, conn: Any, sql: str, rows: Iterable[tuple]) -> None:
        if self.postgres:
            conn.cursor().executemany(self._sql(sql), list(rows))
        else:
            conn.executemany(self._sql(sql), rows)

    def bump(self, conn: Any, model: str, removed: bool) -> None:
        """A new generation: every process reads what changed at its next query (the new
        rows only, unless rows were `removed`: `vec_removed` is then this generation)."""
        current = conn.execute(self._sql("SELECT value FROM {m} WHERE key = 'vec_gen'")
                               ).fetchone()
        try:
            generation = int(current[0]) + 1 if current else 1
        except ValueError:
            generation = 1
        values = [("vec_gen", str(generation)), ("vec_model", model)]
        if removed:
            values.append(("vec_removed", str(generation)))
        for key, value in values:
            conn.execute(self._sql("INSERT INTO {m}(key, value) VALUES (?, ?) ON CONFLICT "
                                   "(key) DO UPDATE SET value = excluded.value"), (key, value))

    # -- reading -------------------------------------------------------------------------
    def _value(self, key: str) -> str:
        row = self._connect().execute(self._sql("SELECT value FROM {m} WHERE key = ?"),
                                      (key,)).fetchone()
        return str(row[0]) if row else ""

    def generation(self) -> tuple[str, str]:
        """(the generation, the last one that removed rows), in one read."""
        got = dict(self._connect().execute(self._sql(
            "SELECT key, value FROM {m} WHERE key IN ('vec_gen', 'vec_removed')")).fetchall())
        return str(got.get("vec_gen", "")), str(got.get("vec_removed", ""))

    def model(self) -> str:
        """The model the stored vectors come from ("" before any were written)."""
        return self._value("vec_model")

    def count(self) -> int:
        return int(self._connect().execute(self._sql("SELECT count(*) FROM {t}")
                                           ).fetchone()[0])

    def rows_after(self, last_id: int) -> Iterable[tuple]:
        """(id, scope, kind, shared, code) of the rows after `last_id`, in id order."""
        return self._connect().execute(self._sql(
            "SELECT id, scope, kind, shared, code FROM {t} WHERE id > ? ORDER BY id"),
            (last_id,))

    def live_ids(self) -> Iterable[int]:
        return (r[0] for r in self._connect().execute(self._sql("SELECT id FROM {t}")))

    def vectors_of(self, ids: Sequence[int]) -> list[tuple]:
        """(id, path, vec) by id: what ranking by exact cosine reads."""
        return self._chunked(self._connect(), "SELECT id, path, vec FROM {t} WHERE {in}",
                             "id", list(ids))

    def fetch(self, ids: Sequence[int]) -> list[tuple]:
        """(id, path, scope, kind, heading, start, end, text, entry_id) by id."""
        return self._chunked(self._connect(), "SELECT id, path, scope, kind, heading, "
                             "start_line, end_line, text, entry_id FROM {t} WHERE {in}",
                             "id", list(ids))

    def passages_of(self, path: str) -> list[tuple]:
        """(id, start, end, heading, text) of a file's passages, in order (tests, tooling):
        a passage embedded again gets a new id."""
        return [tuple(r) for r in self._connect().execute(self._sql(
            "SELECT id, start_line, end_line, heading, text FROM {t} WHERE path = ? "
            "ORDER BY start_line"), (path,))]
