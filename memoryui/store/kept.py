"""Listings kept across requests until a change reaches them.

A page that shows a folder (the sidebar's world topics and scopes, a scope's files, the
review queue's target names) used to walk it at every request: 15 ms a walk of 2,000 world
topics, three of them per review page. The store's tree model numbers every change it takes
in (this process's writes, new commits, the file watcher's reports), so a listing kept with
the model's version is listed again only when a path changed since reaches it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .workspace import Store

T = TypeVar("T")
_lock = threading.Lock()


def kept(store: Store, cache: OrderedDict, key: tuple, list_: Callable[[], T],
         reaches: Callable[[T, str], bool], keep: int) -> T:
    """`list_()`, or the value kept under `key` when no path the model took in since it was
    made `reaches` it (the last `keep` keys are kept). Before the tree is first held (a first
    page after a start) it is listed now and the tree in the background: no page waits for
    the whole tree."""
    model = store.tree_model
    if not model.listed:
        model.list_in_background()
        return list_()
    store.tree()  # take in what changed since the last request, numbered by the model
    version = model.version
    with _lock:
        cached = cache.get(key)
    if cached is not None:
        seen, value = cached
        changed = set() if seen == version else model.changed_since(seen)
        if changed is None or any(reaches(value, p) for p in changed):
            cached = None
    if cached is None:
        value = list_()
    with _lock:
        put(cache, key, (version, value), keep)
    return value


def put(cache: OrderedDict, key: object, value: object, keep: int) -> None:
    """`cache[key] = value` as the newest of at most `keep` (the caller holds its lock)."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > keep:
        cache.popitem(last=False)


def under(folder: str) -> Callable[[Any, str], bool]:
    """`reaches` for a listing of `folder`: a path inside it, or a folder above it (a
    deleted or renamed parent is reported by its own path)."""
    prefix = folder.strip("/") + "/" if folder.strip("/") else ""

    def reaches(_value: object, path: str) -> bool:
        return path.startswith(prefix) or prefix.startswith(path.rstrip("/") + "/")

    return reaches
