"""One scope's files, the shared folders, and the sidebar: read from their own folders only.

Pages about one file or scope never build the whole hierarchy: they list the shared
folders (world, global memory, skills, directives) and the current scope's folder through
the store's one walker (`memoryui.store.walk`: no hidden names, never a symbolic link).
The shared folders are listed again only when the store's tree model says something
there (or a scope folder) changed: the model numbers every change it takes in (this
process's writes, new commits, the file watcher), as the overview's patched hierarchy does.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.template.loader import get_template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from memoryui.store import Kind, Store, StoreError, walk
from memoryui.store.kept import kept, put, under
from memoryui.web.links import scope_url

from .model import Hierarchy, ScopeNode, new_item

_addresses: dict[tuple[str, str], object] = {}
# Listings kept across requests, each with the tree model's version it was made at.
_shared: OrderedDict[tuple[str, str], tuple[int, Hierarchy]] = OrderedDict()
SCOPE_CACHE = 64
_scopes: OrderedDict[tuple[str, str, str], tuple[int, ScopeNode | None]] = OrderedDict()
_rendered_lock = threading.Lock()
# The sidebar's markup by listing and place, each with the listings it was rendered from.
RENDERED_KEEP = 32
_rendered: OrderedDict[tuple, tuple[Hierarchy, ScopeNode | None, SafeString]] = OrderedDict()


def _address(store: Store, path: str) -> object:
    """`store.address_of`, remembered: a path's address never changes within a layout."""
    key = (store.layout.key, path)
    try:
        return _addresses[key]
    except KeyError:
        pass
    if len(_addresses) > 100_000:
        _addresses.clear()
    addr = _addresses[key] = store.address_of(path)
    return addr


def _listing(store: Store, folder: str, *, depth: int | None = None) -> list[walk.Entry]:
    """The files below one workspace folder (an invalid folder lists nothing)."""
    folder = folder.strip("/")
    if folder:
        try:
            store.abspath(folder)
        except StoreError:
            return []
    return list(walk.walk(store.root, folder, depth=depth))


def scope_node(store: Store, scope: str) -> ScopeNode | None:
    """One scope's files, sizes and last changes, listing only its own folder.

    None when the scope has no folder. Listed again only after the tree model took in a
    change below the scope's folder (the last SCOPE_CACHE scopes asked for are kept).
    """
    return kept(store, _scopes, (str(store.root), store.layout.key, scope),
                lambda: _list_scope(store, scope), under(store.layout.scope_prefix(scope)),
                SCOPE_CACHE)


def _list_scope(store: Store, scope: str) -> ScopeNode | None:
    prefix = store.layout.scope_prefix(scope)
    if not store.is_dir(prefix.rstrip("/")):
        return None
    last = store.last_changes()
    node = ScopeNode(scope)
    for e in _listing(store, prefix):
        node.add(new_item(store, e.path, _address(store, e.path), e.size, e.mtime,
                          last.get(e.path)))
    node.daily.sort(key=lambda i: i.name or "", reverse=True)
    return node


def shared(store: Store) -> Hierarchy:
    """World topics, global memory, skills and directives outside any scope, plus the scope
    names: what every page's sidebar shows (listed again only after a change there)."""
    return kept(store, _shared, (str(store.root), store.layout.key),
                lambda: _list_shared(store), lambda h, p: _reaches_shared(store, h, p), 8)


def _reaches_shared(store: Store, h: Hierarchy, path: str) -> bool:
    """Whether a changed path may change the sidebar's shared part: anything but a file
    that exists inside a scope the sidebar already lists."""
    try:
        scope = getattr(_address(store, path), "scope", None)
        return not (scope and scope in h.scope_names and store.exists(path))
    except StoreError:
        return True


def _list_shared(store: Store) -> Hierarchy:
    """The sidebar's shared part. No last changes: the sidebar shows none, and right after
    a start the tree model may be reading them for seconds."""
    h = Hierarchy(store.layout)
    scopes: dict[str, ScopeNode] = {}
    seen: set[str] = set()
    for pat in store.layout.patterns:
        if pat.scoped:
            continue
        if "{" not in pat.template:  # one fixed file, e.g. memory/MEMORY.md
            folder = pat.template.rpartition("/")[0]
            entries = [e for e in _listing(store, folder, depth=1) if e.path == pat.template]
        else:
            folder = pat.template.split("{", 1)[0].rstrip("/")
            entries = _listing(store, folder) if folder else []
        for e in entries:
            if e.path in seen:
                continue
            addr = _address(store, e.path)
            if addr is None or addr.kind != pat.kind or addr.scope is not None:
                continue
            seen.add(e.path)
            h.place(store, scopes, new_item(store, e.path, addr, e.size, e.mtime, None))
    h.scope_names = store.scopes()
    return h


def per_scope(h: Hierarchy, name: str, markup: Callable[[str], str]) -> list[str]:
    """`markup(scope)` for each of the listing's scope names, made once per listing (it is
    never changed in place) and kept on it under `name`: a page that lists every scope (500
    on a large team) joins kept strings instead of rendering as many template nodes."""
    names = tuple(h.scope_names)
    cached = getattr(h, name, None)
    if cached is None or cached[0] != names:
        cached = (names, [markup(n) for n in names])
        setattr(h, name, cached)
    return cached[1]


def scope_options(h: Hierarchy, selected: str = "", keep_unknown: bool = False
                  ) -> SafeString:
    """`<option>`s of every scope for a scope menu, `selected` marked; `keep_unknown` adds
    a selected scope that has no folder (a filter in use stays shown)."""
    options = per_scope(h, "_scope_options",
                        lambda n: format_html('<option value="{}">{}</option>', n, n))
    if selected:
        chosen = format_html('<option value="{}" selected>{}</option>', selected, selected)
        if selected in h.scope_names:
            at = h.scope_names.index(selected)
            options = [*options[:at], chosen, *options[at + 1:]]
        elif keep_unknown:
            options = [*options, chosen]
    return mark_safe("".join(options))


def _scope_items(h: Hierarchy) -> list[str]:
    return per_scope(h, "_scope_items",
                     lambda n: format_html('\n    <li><a href="{}">{}</a></li>', scope_url(n), n))


def sidebar(store: Store, current_path: str | None = None, scope: str | None = None,
            node: ScopeNode | None = None, saved: Hierarchy | None = None) -> dict[str, Any]:
    """Context for `{% include "web/_sidebar.html" %}`; any page can add it.

    `current_path` marks the open file (and expands its scope); `scope` expands a scope
    without a file (scope pages, scope history); pass `node` when the page already has it.
    Lists only the shared folders and the current scope's folder, never the whole tree;
    `saved`: the overview saved before a start, which has the shared part (and says so).
    """
    h = saved if saved is not None else shared(store)
    current_scope = scope
    current_kind = None
    current_month = None
    if current_path:
        try:
            addr = store.address_of(current_path)
        except StoreError:
            addr = None
        current_kind = addr.kind.value if addr else None
        current_scope = current_scope or (addr.scope if addr else None) or \
            store.layout.scope_of(current_path)
        if addr and addr.kind == Kind.DAILY:
            current_month = (addr.name or "")[:7]
    if current_scope and (node is None or node.name != current_scope):
        try:
            node = scope_node(store, current_scope)
        except StoreError:
            node = None
    if node is not None and current_month is None and node.daily:
        current_month = (node.daily[0].name or "")[:7]
    items = _scope_items(h)
    at = h.scope_names.index(node.name) if node is not None and node.name in h.scope_names \
        else len(items)
    return {"sidebar": {
        # the other scopes' links, written once per listing (500 scopes on a large team)
        "scopes_before": mark_safe("".join(items[:at])),
        "scopes_after": mark_safe("".join(items[at + 1:])),
        "expanded": at < len(items),
        "h": h,
        "current_path": current_path or "",
        "current_scope": current_scope or "",
        "current_kind": current_kind or "",
        "current_month": current_month or "",
        "scope": node,
    }}


def sidebar_html(sb: dict[str, Any], url_name: str | None) -> SafeString:
    """The sidebar's markup (web/_hierarchy.html) for `sidebar()`'s context on the page
    named `url_name`, rendered once per listing and place and then reused.

    The listings never change once made (a change makes new ones, copy on write), so the
    markup is keyed by their identity and kept with them: an entry is reused only while it
    holds the very objects asked about, and entries of an older shared listing are dropped
    (they would pin it). The saved overview of a first look is not kept.
    """
    h, node = sb["h"], sb["scope"]
    key = (id(h), id(node), sb["current_path"], sb["current_scope"], sb["current_kind"],
           sb["current_month"], url_name)
    keep = h.saved_at is None
    if keep:
        with _rendered_lock:
            hit = _rendered.get(key)
        if hit is not None and hit[0] is h and hit[1] is node:
            return hit[2]
    html = mark_safe(get_template("web/_hierarchy.html").render(
        {"sidebar": sb, "url_name": url_name}))
    if keep:
        with _rendered_lock:
            # what an older shared listing rendered is never asked for again: let it go
            for stale in [k for k, (was, _n, _m) in _rendered.items() if was is not h]:
                del _rendered[stale]
            put(_rendered, key, (h, node, html), RENDERED_KEEP)
    return html
