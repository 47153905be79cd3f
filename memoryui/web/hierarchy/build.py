"""The overview's hierarchy: queries over the file catalogue, at each request.

What the overview shows is small even on a large workspace: one row per scope (its
MEMORY.md, scratchpad and newest daily log, its counts, size and last change), the world
topics, skills, directives and other files. Each comes from the catalogue
(`memoryui.search.catalogue`), the one read model every process of an instance shares:
counts, sums and newest changes by scope are aggregate queries over its (scope, kind)
indexes, never a pass over every file in Python. A write is in the catalogue before it is
acknowledged, so the overview is never behind one. What a page reads is kept between
requests with the catalogue's generations it was read at (`kept`, `caches.OVERVIEWS` and
the others): a request that finds them unchanged reuses it, one that does not reads again.

A workspace seen for the first time has its catalogue filled once, in the background when
it is large: meanwhile the overview lists the scopes by name (their folders) and the
shared files, says it is indexing, and reloads itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from memoryui.caches import OVERVIEW_SHARED, OVERVIEWS, Shelf
from memoryui.search.catalogue import ALL, Catalogue, Entry
from memoryui.store import Kind, Store

from .model import Hierarchy, Item, ScopeSummary, newer

V = TypeVar("V")


def kept(shelf: Shelf[tuple[Any, Any]], key: Hashable, version: tuple, make: Callable[[], V]
         ) -> V:
    """`make()`, kept in `shelf` under `key` while `version` (the store, the catalogue's
    generations read before `make` reads the rows) stays the same."""
    got = shelf.get(key)
    if got is not None and got[0] == version:
        return got[1]
    value = make()
    shelf.put(key, (version, value))
    return value


def catalogue(store: Store) -> Catalogue | None:
    """The store's catalogue, current; None while a large workspace is first filled."""
    return Catalogue.ready(store)


def last_change(store: Store, path: str) -> dict | None:
    """A file's last commit as the catalogue has it (None: none yet, or still indexing)."""
    cat = catalogue(store)
    e = cat.entry(path) if cat is not None else None
    return e.last if e is not None else None


def item_of(store: Store, e: Entry) -> Item:
    """A catalogue entry as the pages show a file."""
    kind = Kind(e.kind) if e.kind else None
    item = Item(e.path, kind, (e.scope or None) if kind else None, e.name or None, e.size,
                e.mtime, e.last)
    if kind in store.layout.budgets:
        item.store = store
    return item


def build(store: Store) -> Hierarchy:
    """The whole hierarchy as the overview shows it, current as of this request."""
    cat = catalogue(store)
    if cat is None:
        return indexing(store)
    names = store.scopes()
    whole, files = cat.generations(ALL, "")
    key = (str(store.root), store.layout.key)

    def make() -> Hierarchy:
        # the shared files (thousands of world topics on a huge team) are read again only
        # when one of them changed, not at every agent's write to its own scope
        outside = kept(OVERVIEW_SHARED, key, (store, files),
                       lambda: [item_of(store, e) for e in cat.shared()])
        return _build(store, cat, names, outside)
    return kept(OVERVIEWS, key, (store, whole, tuple(names)), make)


def _build(store: Store, cat: Catalogue, names: list[str], outside: list[Item]) -> Hierarchy:
    h = Hierarchy(store.layout, built_at=time.time())
    for item in outside:
        h.place(store, {}, item)
    totals = cat.scope_totals()
    lasts = cat.scope_lasts()
    rows: dict[str, dict[str, Item]] = {}
    for e in [*cat.scope_files((Kind.MEMORY.value, Kind.SCRATCHPAD.value)),
              *cat.newest_daily()]:
        rows.setdefault(e.scope, {})[e.kind] = item_of(store, e)
    for name in sorted(set(names) | set(totals)):
        files, size, daily, notes = totals.get(name, (0, 0, 0, 0))
        got = rows.get(name, {})
        last = lasts.get(name)
        h.scopes[name] = ScopeSummary(name, got.get(Kind.MEMORY.value),
                                      got.get(Kind.SCRATCHPAD.value), got.get(Kind.DAILY.value),
                                      daily, notes, files, size, last)
        h.file_count += files
        h.size += size
        if newer(last, h.last_raw):
            h.last_raw = last
    h.scope_names = list(h.scopes)
    return h


def indexing(store: Store) -> Hierarchy:
    """What the overview shows while a large workspace is catalogued for the first time:
    every scope by name, the shared files as their folders hold them, nothing counted."""
    from .folders import listed_shared

    part = listed_shared(store)
    h = Hierarchy(store.layout, built_at=time.time(), indexing=True,
                  global_memory=part.global_memory, world=part.world, skills=part.skills,
                  directives=part.directives, other=part.other)
    h.scopes = {name: ScopeSummary(name, None, None, None, None, None, None, None, None)
                for name in part.scope_names}
    h.scope_names = list(h.scopes)
    return h
