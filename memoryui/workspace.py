"""The process-wide Store built from settings (the only Django-to-store bridge)."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

from django.conf import settings

from memoryui.caches import WORKSPACE_PATHS
from memoryui.rendering import render_limit
from memoryui.search import IndexBase, SearchIndex, SearchUnavailable, index_path, open_index
from memoryui.store import Store, diffs
from memoryui.store.gitrepo import GitRepo
from memoryui.store.sync import RemoteConfig, Syncer, TransportError, bootstrap, start_background

log = logging.getLogger("memoryui")

diffs.diff_limit = render_limit  # the store's diffs stop where the pages' rendering does
_store: Store | None = None
_index: IndexBase | None = None
_lock = threading.Lock()


def _workspace() -> Path:
    """The configured workspace's real path (resolving it at every request was a dozen
    system calls on every view's path, /healthz's included)."""
    configured = settings.MEMORYUI_WORKSPACE
    real = WORKSPACE_PATHS.get(configured)
    if real is None:
        real = Path(configured).resolve()
        WORKSPACE_PATHS.put(configured, real)
    return real


def get_store() -> Store:
    global _store
    if _store is None or _store.root != _workspace() or \
            _store.layout.key != settings.MEMORYUI_LAYOUT:
        with _lock:
            if _store is None or _store.root != _workspace() or \
                    _store.layout.key != settings.MEMORYUI_LAYOUT:
                _bootstrap_sync()
                _store = Store(settings.MEMORYUI_WORKSPACE, settings.MEMORYUI_LAYOUT,
                               commit_delay=settings.MEMORYUI_COMMIT_DELAY,
                               secrets=settings.MEMORYUI_SECRETS)
                _attach_index(_store)
    return _store


# -- sync with a git remote (sync-core) ------------------------------------------------------
_syncer: Syncer | None = None
_sync_thread: threading.Thread | None = None


def sync_config() -> RemoteConfig | None:
    """MEMORYUI_REMOTE and friends as one value; None when no remote is configured."""
    if not getattr(settings, "MEMORYUI_REMOTE", ""):
        return None
    return RemoteConfig(settings.MEMORYUI_REMOTE, settings.MEMORYUI_REMOTE_BRANCH or None,
                        settings.MEMORYUI_SYNC_INTERVAL, settings.MEMORYUI_SYNC_PUSH,
                        settings.MEMORYUI_SYNC_TIMEOUT)


def _bootstrap_sync() -> None:
    """Clone into an empty workspace or check the histories relate (docs/sync.md).

    Raises SyncError when refused, or when an empty workspace cannot reach its remote; a
    workspace with history starts anyway when the remote is down (rounds check it later).
    """
    config = sync_config()
    if config is None:
        return
    root = settings.MEMORYUI_WORKSPACE
    try:
        outcome = bootstrap(root, config)
    except TransportError:
        if GitRepo(root.resolve()).head() is None:
            raise
        log.warning("sync: the remote %s is unreachable at start; rounds will retry",
                    config.display_url())
        return
    if outcome != "ready":
        log.info("sync: bootstrap of the workspace: %s (remote %s)", outcome, config.display_url())


def get_syncer() -> Syncer | None:
    """The process-wide Syncer following the process-wide store; None without a remote."""
    global _syncer
    config = sync_config()
    if config is None:
        return None
    store = get_store()
    syncer = _syncer
    if syncer is None or syncer.store is not store or syncer.config != config:
        with _lock:
            if _syncer is None or _syncer.store is not store or _syncer.config != config:
                _syncer = Syncer(store, config)
            syncer = _syncer
    return syncer


def start_sync_thread(standby: bool = False) -> threading.Thread | None:
    """Background rounds in this process (one thread; None when sync is off or on demand).
    `standby` (a server's worker): a round runs only while no committer process is alive,
    which otherwise runs them (`manage.py committer`)."""
    global _sync_thread
    config = sync_config()
    if config is None or config.interval <= 0:
        return None
    get = _standby_syncer if standby else get_syncer
    with _lock:
        if _sync_thread is None or not _sync_thread.is_alive():
            _sync_thread = start_background(get, config.interval)
    return _sync_thread


def _standby_syncer() -> Syncer | None:
    return None if get_store().committer.running else get_syncer()


def _attach_index(store: Store) -> None:
    """Every write through this store updates the search index (a broken index never
    blocks a write: the store logs listener errors and the next catch-up repairs it)."""
    global _index
    if _index is not None:
        _index.close()
    where = _search_db(store)
    try:
        _index = open_index(where, database_url=_search_database_url())
        _index.attach(store)
    except Exception:  # noqa: BLE001
        log.exception("search index unavailable at %s", where)
        _index = None


def _search_database_url() -> str | None:
    """DATABASE_URL when the search index lives in Postgres, else None (SQLite per instance)."""
    backend = getattr(settings, "MEMORYUI_SEARCH_BACKEND", "auto")
    if backend == "sqlite" or (backend == "auto" and settings.MEMORYUI_REMOTE):
        return None
    return os.environ.get("DATABASE_URL")


def _search_db(store: Store) -> Path:
    """The SQLite index file: MEMORYUI_SEARCH_DB, or the workspace's .git/memoryui when unset
    and a sync remote is configured (each instance's clone keeps its own index)."""
    if settings.MEMORYUI_REMOTE and not os.environ.get("MEMORYUI_SEARCH_DB", "").strip():
        return index_path(None, store.root)  # one index per clone: instances may share VAR_DIR
    return index_path(getattr(settings, "MEMORYUI_SEARCH_DB", None), store.root)


def get_search_index() -> IndexBase:
    """The search index following the process-wide store (built on first use)."""
    store = get_store()
    index = _index
    if index is None or index.store is not store or (
            isinstance(index, SearchIndex) and index.path != _search_db(store)):
        with _lock:
            if _index is None or _index.store is not store or (
                    isinstance(_index, SearchIndex) and _index.path != _search_db(store)):
                if _index is not None and _index.enqueue in store.listeners:
                    store.listeners.remove(_index.enqueue)
                _attach_index(store)
            index = _index
    if index is None:
        raise SearchUnavailable("the search index could not be opened; see the server log")
    return index


def reset_store() -> None:
    """Forget the cached Store (tests switch workspaces between cases)."""
    global _store, _index, _syncer
    with _lock:
        if _store is not None:
            _store.close()
        _store = None
        _syncer = None
        if _index is not None:
            _index.close()
        _index = None
