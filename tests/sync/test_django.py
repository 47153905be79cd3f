"""The Django side of sync: settings, the process-wide syncer, the review queue."""

from __future__ import annotations

import datetime as dt

import pytest

from memoryui.review.queue import Filters, build_queue
from memoryui.review.state import OrmLedger
from memoryui.workspace import get_store, get_syncer, reset_store


@pytest.fixture
def remote_settings(settings, tmp_path, file_url):
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_SEARCH_DB = tmp_path / "search.sqlite3"
    settings.MEMORYUI_REMOTE = file_url
    reset_store()
    yield settings
    reset_store()


def test_no_remote_no_syncer(settings, tmp_path) -> None:
    settings.MEMORYUI_WORKSPACE = tmp_path / "ws"
    settings.MEMORYUI_REMOTE = ""
    reset_store()
    assert get_syncer() is None
    reset_store()


def test_remote_entries_enter_the_review_queue(db, remote_settings, native, file_url) -> None:
    host = native(file_url)
    now = dt.datetime.now()
    host.remember("learned on the native host: rotate the deploy key monthly", now)
    host.commit()
    host.push()
    store = get_store()  # bootstrap clones the remote
    syncer = get_syncer()
    assert syncer is not None and syncer.store is store
    assert store.head() == host.head()

    host.remember("a second native entry, fetched by a round", now)
    host.commit()
    host.push()
    assert syncer.round(blocking=True).integrated == 1
    queue = build_queue(store, OrmLedger(), Filters.default(now.date()))
    bodies = {item.entry.body for item in queue.items}
    assert {"learned on the native host: rotate the deploy key monthly",
            "a second native entry, fetched by a round"} <= bodies
    assert syncer.status().state == "synced"
