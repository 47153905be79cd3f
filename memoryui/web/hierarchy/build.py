"""The whole hierarchy, for the overview: built once, then patched with what changed.

The store's tree model numbers its changes (`version`) and says which paths changed since
a version (`changed_since`). A request asks the tree for its current state (re-stating only
changed paths) and patches a copy of the last hierarchy with those paths, so what the
overview shows after a write is exact and costs what the write touched, not a regroup of
every file (1.2 s at 200k files). A full build happens at a start, when the change log
cannot answer (thousands of paths at once, a history rewrite) and when the layout changes.

The first build after a start on a large workspace takes seconds (2 s at 200k files): the
overview saved before the start (`snapshot.py`) is served meanwhile, saying so, and the
build runs in a background thread. At the very first start there is nothing saved: the
scopes by name and the shared folders are served meanwhile (`snapshot.first_look`).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from memoryui.store import Store, memory
from memoryui.store.threadnames import named

from . import snapshot
from .model import Hierarchy, Item, ScopeNode, new_item, newer

log = logging.getLogger("memoryui.web")


@dataclass
class _Built:
    h: Hierarchy
    version: int


_built: dict[str, _Built] = {}
_built_lock = threading.Lock()
_serving: dict[str, Hierarchy] = {}  # a saved overview, while the first build runs
_replied: dict[str, threading.Event] = {}  # ... which waits for the first reply to go out
_building: dict[str, threading.Thread] = {}
_serving_lock = threading.Lock()
REPLY_WAIT = 2.0  # seconds the background build lets the first reply have the interpreter


def build(store: Store, *, then: Callable[[], object] | None = None) -> Hierarchy:
    """The whole hierarchy, current as of this request (see the module docstring); right
    after a start on a large workspace, the saved one (`saved_at` set) while the current
    one is built in the background, followed by `then` (work the page will want next).
    The page calls `keep` once it has answered.

    For the overview, which needs every scope's counts; pages about one scope or file use
    `scope_node` and `shared`, which list only their own folders.
    """
    saved = _saved_while_building(store, then)
    return saved if saved is not None else _current(store)


def keep(store: Store, h: Hierarchy, review_counts: dict[str, int]) -> None:
    """After the overview answered with `h`: save it for the next start (now and then), or
    if it was the saved one, let the background build begin."""
    if h.saved_at is None:
        snapshot.keep(store, h, review_counts)
    elif (replied := _replied.get(str(store.root))) is not None:
        replied.set()


def _saved_while_building(store: Store, then: Callable[[], object] | None) -> Hierarchy | None:
    key, model = str(store.root), store.tree_model
    replied = threading.Event()

    def work() -> None:
        # Building holds the interpreter for seconds; the reply that started it goes first
        # (a page that failed to say so is waited for REPLY_WAIT at most).
        replied.wait(REPLY_WAIT)
        try:
            _current(store)
            if then is not None:
                then()
        except Exception:  # noqa: BLE001 - the next request builds it
            log.exception("building the overview in the background failed")
        finally:
            with _serving_lock:
                _serving.pop(key, None)
                _replied.pop(key, None)
                _building.pop(key, None)

    with _serving_lock:
        saved = _serving.get(key)
        if saved is not None or key in _built or model.listed or not model.large:
            return saved
        # (nothing saved: the first start on this workspace; its scopes by name meanwhile)
        saved = snapshot.load(store) or snapshot.first_look(store)
        _serving[key], _replied[key] = saved, replied
        thread = _building[key] = threading.Thread(target=named(work), name="memoryui-hierarchy",
                                                   daemon=True)
        thread.start()
    return saved


def wait_for_build(store: Store, timeout: float | None = None) -> None:
    """Block until a background build (if any) ends (tests, bench)."""
    thread = _building.get(str(store.root))
    if thread is not None:
        thread.join(timeout)


def _current(store: Store) -> Hierarchy:
    key = str(store.root)
    model = store.tree_model
    with _built_lock:
        tree = store.tree()
        version = model.version
        prev = _built.get(key)
        if prev is not None and prev.h.layout is store.layout:
            changed = model.changed_since(prev.version)
            if changed is not None:
                h = _patch(store, prev.h, tree, changed) if changed else prev.h
                h.checking, h.history_pending = model.checking, model.history_pending
                _built[key] = _Built(h, version)
                return h
        # A full build: the old hierarchy goes first (while no page holds it, its 200k
        # items are freed before the new ones are made, not kept beside them)
        _built.pop(key, None)
        prev = None
        h = _rebuild(store, tree)
        _built[key] = _Built(h, version)
    memory.release()
    return h


def _rebuild(store: Store, tree: dict | None = None) -> Hierarchy:
    tree = store.tree() if tree is None else tree
    h = Hierarchy(store.layout, built_at=time.time())
    scopes = {name: ScopeNode(name) for name in store.scopes()}  # empty folders show too
    address = store.layout.address
    for path, info in sorted(tree.items()):  # nearly sorted already: cheap
        h.place(store, scopes, new_item(store, path, address(path), info.size, info.mtime,
                                        info.last))
    for node in scopes.values():
        node.daily.sort(key=lambda i: i.name or "", reverse=True)
    h.scopes = dict(sorted(scopes.items()))
    h.scope_names = list(h.scopes)
    h.checking = store.tree_model.checking
    h.history_pending = store.tree_model.history_pending
    return h


_TOP_LISTS = ("world", "skills", "directives", "other")
_NODE_LISTS = ("daily", "notes", "directives", "other")


def _patch(store: Store, old: Hierarchy, tree: dict, paths: set[str]) -> Hierarchy:
    """A copy of `old` with `paths` taken out and put back as the tree has them now.

    Copy-on-write: pages rendering the old hierarchy in other threads never see it change
    (its lists and nodes are copied where they change; `by_path`, 200k entries, is only
    read here and is changed in place).
    """
    h = copy.copy(old)
    h.scopes = dict(old.scopes)
    for name in _TOP_LISTS:
        setattr(h, name, list(getattr(old, name)))
    copied: set[str] = set()
    touched: set[str] = set()

    def node_for(scope: str) -> ScopeNode:
        node = h.scopes.get(scope)
        if node is None:
            node = h.scopes[scope] = ScopeNode(scope)
        elif scope not in copied:
            node = h.scopes[scope] = _copy_node(node)
        copied.add(scope)
        touched.add(scope)
        return node

    for path in paths:
        item = h.by_path.pop(path, None)
        if item is not None:
            h.file_count -= 1
            h.size -= item.size
            scope = item.scope if item.kind else store.layout.scope_of(path)
            if scope:
                _remove_from_node(node_for(scope), item)
            else:
                for name in _TOP_LISTS:
                    _remove(getattr(h, name), item)
                if h.global_memory is item:
                    h.global_memory = None
        info = tree.get(path)
        if info is None:
            continue
        new = new_item(store, path, store.layout.address(path), info.size, info.mtime,
                       info.last)
        scope = new.scope if new.kind else store.layout.scope_of(path)
        if scope:
            node_for(scope)
        h.place(store, h.scopes, new)
    for name in _TOP_LISTS:  # put back in path order (the overview lists them so)
        getattr(h, name).sort(key=_by_path)
    folders = None
    for scope in touched:
        node = h.scopes[scope]
        if not (node.memory or node.scratchpad or any(getattr(node, n) for n in _NODE_LISTS)):
            folders = set(store.scopes()) if folders is None else folders
            if scope not in folders:  # the scope's folder is gone too
                del h.scopes[scope]
                continue
        node.daily.sort(key=lambda i: i.name or "", reverse=True)
        for name in ("notes", "directives", "other"):
            getattr(node, name).sort(key=_by_path)
        node.__dict__.pop("months", None)
        _recount(node)
    if set(h.scopes) != set(old.scopes):
        h.scopes = dict(sorted(h.scopes.items()))
        h.scope_names = list(h.scopes)
    h.last_raw = _newest([n.last_raw for n in h.scopes.values()] +
                         [i.last_raw for name in _TOP_LISTS for i in getattr(h, name)] +
                         [h.global_memory.last_raw if h.global_memory else None])
    h.built_at = time.time()
    return h


def _by_path(item: Item) -> str:
    return item.path


def _copy_node(node: ScopeNode) -> ScopeNode:
    new = copy.copy(node)
    new.__dict__.pop("months", None)
    for name in _NODE_LISTS:
        setattr(new, name, list(getattr(node, name)))
    return new


def _remove(items: list[Item], item: Item) -> None:
    for i, it in enumerate(items):
        if it is item:
            del items[i]
            return


def _remove_from_node(node: ScopeNode, item: Item) -> None:
    if node.memory is item:
        node.memory = None
    elif node.scratchpad is item:
        node.scratchpad = None
    else:
        for name in _NODE_LISTS:
            _remove(getattr(node, name), item)


def _recount(node: ScopeNode) -> None:
    """A scope's totals from its items (a few hundred at most)."""
    items = [i for i in (node.memory, node.scratchpad) if i is not None]
    for name in _NODE_LISTS:
        items.extend(getattr(node, name))
    node.files = len(items)
    node.size = sum(i.size for i in items)
    node.last_raw = _newest([i.last_raw for i in items])


def _newest(lasts: list) -> object:
    best = None
    for last in lasts:
        if newer(last, best):
            best = last
    return best
