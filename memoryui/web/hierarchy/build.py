"""The whole hierarchy, for the overview: one pass over the store's cached `tree()`.

Cached for as long as the store hands back the same tree object. Workspaces with more
files than BACKGROUND_ABOVE are regrouped in a background thread (grouping 20,000 files
costs about 100 ms, a full walk more): a page is served from the last build while a
thread rebuilds it after a new commit, or TREE_TTL seconds after the last build (when the
store re-walks for changes made outside memoryui). Smaller workspaces rebuild at once, so
what they show is exact.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from memoryui.store import Store
from memoryui.store.workspace import TREE_TTL

from .model import Hierarchy, ScopeNode, new_item

log = logging.getLogger("memoryui.web")

BACKGROUND_ABOVE = 2_000  # files
MAX_STALE = 2 * TREE_TTL + 30  # seconds; older than this, a request rebuilds and waits


@dataclass
class _Built:
    tree: object
    h: Hierarchy
    head: str | None
    at: float  # time.monotonic() of the build
    refreshing: bool = False


_built: dict[str, _Built] = {}
_built_lock = threading.Lock()


def build(store: Store) -> Hierarchy:
    """The whole hierarchy from the store's cached tree (rebuilt only when the tree is).

    For the overview, which needs every scope's counts; pages about one scope or file use
    `scope_node` and `shared`, which list only their own folders.
    """
    key = str(store.root)
    prev = _built.get(key)
    now = time.monotonic()
    if prev is not None and prev.h.layout is store.layout:
        if prev.h.files > BACKGROUND_ABOVE and now - prev.at < MAX_STALE:
            if store.head() != prev.head or now - prev.at > TREE_TTL:
                _refresh_in_background(store, prev)
            return prev.h
        if store.tree() is prev.tree:
            return prev.h
    return _rebuild(store)


def _rebuild(store: Store) -> Hierarchy:
    started = time.monotonic()
    head = store.head()
    tree = store.tree()
    h = Hierarchy(store.layout, built_at=time.time())
    scopes = {name: ScopeNode(name) for name in store.scopes()}  # empty folders show too
    for path, info in tree.items():
        h.place(store, scopes, new_item(store, path, info.address, info.size, info.mtime,
                                        info.last))
    for node in scopes.values():
        node.daily.sort(key=lambda i: i.name or "", reverse=True)
    h.scopes = dict(sorted(scopes.items()))
    h.scope_names = list(h.scopes)
    with _built_lock:
        _built[str(store.root)] = _Built(tree, h, head, started)
    return h


def _refresh_in_background(store: Store, prev: _Built) -> None:
    with _built_lock:
        if prev.refreshing:
            return
        prev.refreshing = True

    def work() -> None:
        try:
            _rebuild(store)
        except Exception:  # noqa: BLE001 - the next request rebuilds at once instead
            log.exception("background hierarchy rebuild failed")
            with _built_lock:
                _built.pop(str(store.root), None)

    threading.Thread(target=work, name="memoryui-hierarchy", daemon=True).start()
