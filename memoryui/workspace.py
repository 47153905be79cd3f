"""The process-wide Store built from settings (the only Django-to-store bridge)."""

from __future__ import annotations

import threading

from django.conf import settings

from memoryui.store import Store

_store: Store | None = None
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
    return _store


def reset_store() -> None:
    """Forget the cached Store (tests switch workspaces between cases)."""
    global _store
    with _lock:
        if _store is not None:
            _store.close()
        _store = None
