"""The Postgres index written by several processes at once: one write after another, rows
locked in one order, and a write Postgres aborts to break a deadlock written again."""

from __future__ import annotations

import logging
import threading

import pytest

from memoryui.search import PostgresSearchIndex
from memoryui.search.vectors_db import WRITE_LOCK
from memoryui.store import Store
from tests.pg import pg_database
from tests.search.helpers import note, paths
from tests.waiting import wait_for

psycopg = pytest.importorskip("psycopg")


def test_postgres_indexes_writing_the_same_files_at_once_never_deadlock(store, pg_server,
                                                                        caplog):
    """Two processes index the same two files at once, listed in opposite orders (each
    drains what it served; a catch-up takes in what the other wrote). Both write their rows
    in one order, so neither waits on the other in a cycle and Postgres aborts nothing."""
    caplog.set_level(logging.INFO, logger="memoryui.search")
    dsn = pg_database(pg_server)
    first, second = _two_notes_changed_since_indexed(dsn, store)
    gate = psycopg.connect(dsn, autocommit=False)  # holds both writers at their first row
    watch = psycopg.connect(dsn, autocommit=True)
    gate.execute("SELECT 1 FROM memoryui_fts_files WHERE path = ANY(%s) FOR UPDATE",
                 ([first, second],))
    failed: list[BaseException] = []

    def update(order: list[str]) -> None:
        index = PostgresSearchIndex(dsn, catch_up_interval=0, background=False)
        index.attach(store)
        try:
            index.update(order)
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)
        finally:
            index.close()

    writers = [threading.Thread(target=update, args=(order,))
               for order in ([first, second], [second, first])]
    for writer in writers:
        writer.start()
    try:
        wait_for("both writers to wait for a locked row", lambda: watch.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        ).fetchone()[0] >= 2)
        gate.commit()  # let both go at once
    finally:
        gate.close()
        for writer in writers:
            writer.join(120)
        watch.close()
    assert not failed, failed
    assert "deadlock" not in caplog.text
    assert _indexed(dsn, store, "kestrel") == [first, second]


def test_a_postgres_write_chosen_to_break_a_deadlock_is_written_again(store, pg_server):
    """Two processes draining at once may upsert the same files in opposite orders; Postgres
    then aborts one transaction. That write is tried again, so no process loses what it
    indexed (here the other side is a plain connection locking the rows in the other order)."""
    dsn = pg_database(pg_server)
    first, second = _two_notes_changed_since_indexed(dsn, store)
    index = PostgresSearchIndex(dsn, catch_up_interval=0, background=False)
    index.attach(store)
    other = psycopg.connect(dsn, autocommit=False)
    watch = psycopg.connect(dsn, autocommit=True)
    other.execute("SET deadlock_timeout = '60s'")  # the index's transaction is the victim
    other.execute("SELECT 1 FROM memoryui_fts_files WHERE path = %s FOR UPDATE", (second,))
    writer, failed = _updating(index, [first, second])
    try:
        wait_for("the index's write to wait for the locked row", lambda: watch.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        ).fetchone()[0] >= 1)
        # the opposite order: Postgres finds the cycle and aborts the index's transaction
        other.execute("SELECT 1 FROM memoryui_fts_files WHERE path = %s FOR UPDATE", (first,))
        other.commit()
    finally:
        other.close()
        writer.join(120)
        watch.close()
    assert not failed, failed
    assert _indexed(dsn, store, "kestrel") == [first, second]


def test_a_postgres_index_write_waiting_for_another_holds_no_row(store, pg_server):
    """A write waits for the one before it (the passages' write lock) before it locks any
    row: one that removes files or spans batches takes that lock before some of its rows,
    so a write holding rows while it waited could close a cycle with it."""
    dsn = pg_database(pg_server)
    first, second = _two_notes_changed_since_indexed(dsn, store)
    holder = psycopg.connect(dsn, autocommit=False)  # another writer, mid-transaction
    watch = psycopg.connect(dsn, autocommit=True)
    holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
    index = PostgresSearchIndex(dsn, catch_up_interval=0, background=False)
    index.attach(store)
    writer, failed = _updating(index, [first, second])
    try:
        wait_for("the index's write to wait for the other writer", lambda: watch.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'advisory'"
        ).fetchone()[0] >= 1)
        with psycopg.connect(dsn, autocommit=False) as probe:  # both rows are free
            locked = probe.execute("SELECT path FROM memoryui_fts_files WHERE path = ANY(%s) "
                                   "ORDER BY path FOR UPDATE NOWAIT", ([first, second],))
            assert [row[0] for row in locked.fetchall()] == [first, second]
            probe.rollback()
    finally:
        holder.commit()
        holder.close()
        writer.join(120)
        watch.close()
    assert not failed, failed
    assert _indexed(dsn, store, "kestrel") == [first, second]


def _updating(index: PostgresSearchIndex, paths: list[str]
              ) -> tuple[threading.Thread, list[BaseException]]:
    """`index.update(paths)` started in a thread of its own, and the errors it meets."""
    failed: list[BaseException] = []

    def update() -> None:
        try:
            index.update(paths)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failed.append(exc)
        finally:
            index.close()

    writer = threading.Thread(target=update)
    writer.start()
    return writer, failed


def _two_notes_changed_since_indexed(dsn: str, store: Store) -> tuple[str, str]:
    """Two notes indexed as drafts, then rewritten with "kestrel": rows to update."""
    first = note(store, "ops-bot", "first", "first draft\n")
    second = note(store, "ops-bot", "second", "second draft\n")
    seed = PostgresSearchIndex(dsn, catch_up_interval=0, background=False)
    seed.attach(store)
    try:
        seed.update([first, second])
    finally:
        seed.close()
    note(store, "ops-bot", "first", "first kestrel\n")
    note(store, "ops-bot", "second", "second kestrel\n")
    return first, second


def _indexed(dsn: str, store: Store, word: str) -> list[str]:
    """The paths a fresh reader of the index finds for `word`."""
    reader = PostgresSearchIndex(dsn, catch_up_interval=0, background=False)
    reader.attach(store)
    try:
        return sorted(paths(reader.search(word, catch_up=False)))
    finally:
        reader.close()
