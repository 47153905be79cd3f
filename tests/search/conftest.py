"""The index under test, on each backend: SQLite FTS5 in a file, Postgres in a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryui.search import PostgresSearchIndex, SearchIndex
from memoryui.store import Store
from tests.pg import pg_database


@pytest.fixture(params=["sqlite", "postgres"])
def index(request, tmp_path: Path, store: Store) -> Iterator[SearchIndex]:
    """The index under test, on each backend (Postgres: a fresh database per test)."""
    if request.param == "sqlite":
        idx = SearchIndex(tmp_path / "search.sqlite3", catch_up_interval=0, background=False)
    else:
        idx = PostgresSearchIndex(pg_database(request.getfixturevalue("pg_server")),
                                  catch_up_interval=0, background=False)
    idx.attach(store)
    yield idx
    idx.close()
