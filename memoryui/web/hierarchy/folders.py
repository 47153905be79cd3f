"""One scope, the shared files and the sidebar: queries over the file catalogue.

Pages about one file or scope never build the whole hierarchy: they ask the catalogue
(`memoryui.search.catalogue`, indexed by scope and kind) for the shared files (world,
global memory, skills, directives) and the current scope's files. While a large workspace
is catalogued for the first time they list those folders through the store's one walker
instead (`memoryui.store.walk`: no hidden names, never a symbolic link).

The shared part and each scope are kept by the catalogue's generation of their rows
(`caches.SHARED_FILES`, `caches.SCOPE_NODES`), and the sidebar's markup by the very listing
and scope it was rendered from (`caches.SIDEBARS`): a page after a write, an outside edit
the scan found or a commit reads and renders again what that changed, and only that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.template.loader import get_template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from memoryui.caches import SCOPE_NODES, SHARED_FILES, SIDEBARS
from memoryui.store import Kind, Store, StoreError, walk
from memoryui.web.links import scope_url

from .build import catalogue, item_of, kept
from .model import Hierarchy, ScopeNode, new_item


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
    """One scope's files, sizes and last changes; None when the scope has no folder."""
    prefix = store.layout.scope_prefix(scope)
    if not store.is_dir(prefix.rstrip("/")):
        return None
    cat = catalogue(store)
    if cat is not None:
        return kept(SCOPE_NODES, (str(store.root), store.layout.key, scope),
                    (store, cat.generations(scope)),
                    lambda: _scope_node(store, scope, [item_of(store, e)
                                                       for e in cat.scope(scope)]))
    # (the first fill runs: the folder as it is, no last changes yet)
    return _scope_node(store, scope, [
        new_item(store, f.path, store.address_of(f.path), f.size, f.mtime, None)
        for f in _listing(store, prefix)])


def _scope_node(store: Store, scope: str, items: list) -> ScopeNode:
    node = ScopeNode(scope)
    for item in items:
        node.add(item)
    node.daily.sort(key=lambda i: i.name or "", reverse=True)
    return node


def shared(store: Store) -> Hierarchy:
    """World topics, global memory, skills and directives outside any scope, plus the scope
    names: what every page's sidebar shows."""
    cat = catalogue(store)
    if cat is None:
        return listed_shared(store)
    names = store.scopes()

    def make() -> Hierarchy:
        h = Hierarchy(store.layout)
        for e in cat.shared(other=False):
            h.place(store, {}, item_of(store, e))
        h.scope_names = names
        return h
    return kept(SHARED_FILES, (str(store.root), store.layout.key),
                (store, cat.generations(""), tuple(names)), make)


def listed_shared(store: Store) -> Hierarchy:
    """The sidebar's shared part listed from its folders (while the catalogue is first
    filled). No last changes: the sidebar shows none."""
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
            addr = store.address_of(e.path)
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
            node: ScopeNode | None = None, h: Hierarchy | None = None) -> dict[str, Any]:
    """Context for `{% include "web/_sidebar.html" %}`; any page can add it.

    `current_path` marks the open file (and expands its scope); `scope` expands a scope
    without a file (scope pages, scope history); pass `node` when the page already has it.
    Asks only for the shared files and the current scope's, never the whole tree; `h`: a
    hierarchy the page already has, which holds the shared part (the overview's).
    """
    h = h if h is not None else shared(store)
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
    named `url_name`, rendered once per listing, open scope and place."""
    h, node = sb["h"], sb["scope"]
    key = (id(h), id(node), sb["current_path"], sb["current_scope"], sb["current_kind"],
           sb["current_month"], url_name)
    got = SIDEBARS.get(key)
    if got is not None and got[0] is h and got[1] is node:
        return mark_safe(got[2])
    html = get_template("web/_hierarchy.html").render({"sidebar": sb, "url_name": url_name})
    SIDEBARS.put(key, (h, node, html))
    return mark_safe(html)
