"""The process-wide Store built from settings (the only Django-to-store bridge)."""

from __future__ import annotations

import logging
import os
import threading

from django.conf import settings

from memoryui.store import Store
from memoryui.store.search import SearchIndex, open_index

log = logging.getLogger("memoryui")

_store: Store | None = None
_index: SearchIndex | None = None
_lock = threading.Lock()


def get_store() -> Store:
    global _store
    if _store is None or _store.root != settings.MEMORYUI_WORKSPACE.resolve() or \
            _store.layout.key != settings.MEMORYUI_LAYOUT:
        with _lock:
            if _store is None or _store.root != settings.MEMORYUI_WORKSPACE.resolve() or \
                    _store.layout.key != settings.MEMORYUI_LAYOUT:
                _store = Store(settings.MEMORYUI_WORKSPACE, settings.MEMORYUI_LAYOUT,
                               commit_delay=settings.MEMORYUI_COMMIT_DELAY)
                _attach_index(_store)
    return _store


def _attach_index(store: Store) -> None:
    """Every write through this store updates the search index (a broken index never
    blocks a write: the store logs listener errors and the next catch-up repairs it)."""
    global _index
    if _index is not None:
        _index.close()
    try:
        _index = open_index(settings.MEMORYUI_SEARCH_DB,
                            database_url=os.environ.get("DATABASE_URL"))
        _index.attach(store)
    except Exception:  # noqa: BLE001
        log.exception("search index unavailable at %s", settings.MEMORYUI_SEARCH_DB)
        _index = None


def get_search_index() -> SearchIndex:
    """The search index following the process-wide store (built on first use)."""
    store = get_store()
    index = _index
    if index is None or index.store is not store or (
            index.backend == "sqlite" and index.path != settings.MEMORYUI_SEARCH_DB):
        with _lock:
            if _index is None or _index.store is not store or (
                    _index.backend == "sqlite" and _index.path != settings.MEMORYUI_SEARCH_DB):
                if _index is not None and _index.enqueue in store.listeners:
                    store.listeners.remove(_index.enqueue)
                _attach_index(store)
            index = _index
    if index is None:
        from memoryui.store.search import SearchUnavailable
        raise SearchUnavailable("the search index could not be opened; see the server log")
    return index


def reset_store() -> None:
    """Forget the cached Store (tests switch workspaces between cases)."""
    global _store, _index
    with _lock:
        if _store is not None:
            _store.close()
        _store = None
        if _index is not None:
            _index.close()
        _index = None
