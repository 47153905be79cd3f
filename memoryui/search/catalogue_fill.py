"""The file catalogue's first fill: every file of a workspace with its last commit.

It streams: the walk's files go in BATCH rows at a time, then the history, newest first,
gives each row still without a commit its last one (the database keeps the first it gets,
so no process holds a map of every path). A fill of 200k files so never builds lists of
200k rows in the process that makes it, and each batch is a short transaction of its own:
writers of other catalogues in the same database do not wait behind a whole fill. Rows
are invisible to the pages until the last transaction marks the catalogue filled.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from memoryui.store import history, walk

from .catalogue_db import CatalogueDb, Cursor
from .catalogue_reads import _FIELDS, _LAST

if TYPE_CHECKING:
    from memoryui.store import Store

BATCH = 1_000  # rows a fill writes in one transaction
T = TypeVar("T")


def batches(items: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    """`items` in lists of at most `size`."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def row_of(store: Store, e: walk.Entry, last: dict | None) -> tuple:
    """A file's catalogue row: its place in the layout, size, stamp and last commit."""
    addr = store.layout.address(e.path)
    scope = addr.scope if addr else store.layout.scope_of(e.path)
    return (e.path, scope or "", addr.kind.value if addr else "",
            (addr.name or "") if addr else "", e.size, int(e.mtime * 1_000_000_000),
            *_last_values(last))


def _last_values(last: dict | None) -> tuple:
    if not last:
        return ("", "", "", 0, "")
    return tuple(last.get(k) or ("" if k != "time" else 0) for k in _LAST)


def _many(db: CatalogueDb, sql: str, rows: list[tuple]) -> None:
    def apply(cur: Cursor) -> None:
        cur.executemany(sql, rows)
    db.write(apply)


def fill_rows(db: CatalogueDb, store: Store, head: str | None) -> set[str]:
    """Replace the catalogue's rows by the workspace's files, with their last commits as of
    `head`; the scopes seen."""
    t = db.files

    def clear(cur: Cursor) -> None:
        cur.execute(f"DELETE FROM {t}")
        cur.execute(f"DELETE FROM {db.scopes}")
    db.write(clear)
    scopes: set[str] = set()
    marks = ", ".join("?" * len(_FIELDS.split(", ")))
    for chunk in batches(walk.walk(store.root)):
        rows = [row_of(store, e, None) for e in chunk]
        scopes.update(str(r[1]) for r in rows)
        _many(db, f"INSERT INTO {t}({_FIELDS}) VALUES ({marks})", rows)
    if head is None:
        return scopes
    sets = ", ".join(f"{k} = ?" for k in _LAST)
    for changes in batches(history.last_changes(store.root, None, head), BATCH * 4):
        # newest first: a row takes the first commit it meets, the later ones find it set
        _many(db, f"UPDATE {t} SET {sets} WHERE path = ? AND sha = ''",
              [(*_last_values(info), path) for path, info in changes])
    return scopes
