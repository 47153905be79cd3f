"""Reading memory: the overview, scope and file pages, raw text, the pending-count badge.

Thin views over the store and the hierarchy read model; the editor, create and delete are
in `editor.py`. Query strings are read by the forms in `forms.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import content_disposition_header

from memoryui.caches import PENDING_COUNTS
from memoryui.rendering import render_limit, render_markdown, too_large
from memoryui.roles import ADMIN, CURATOR, VIEWER, has_role, require_role
from memoryui.store import Kind, Store, parse_daily, version_of
from memoryui.store import names as store_names
from memoryui.store.layout import KIND_LABELS
from memoryui.web import hierarchy
from memoryui.web.common import error_page, is_fragment, vary, web_errors
from memoryui.web.review.meaning import has_meaning_panels
from memoryui.workspace import get_store

from .forms import FileQuery, OverviewQuery, ScopeQuery
from .overview import review_counts, scope_listing, world_listing

T = "web/browse/"


def title_of(path: str, item: hierarchy.Item | None) -> str:
    if item is None or item.kind is None:
        return path.rsplit("/", 1)[-1]
    if item.kind == Kind.DAILY:
        return f"Daily log {item.name}"
    if item.kind == Kind.WORLD:
        return f"World: {item.name}"
    if item.kind == Kind.GLOBAL:
        return "Global MEMORY.md"
    if item.kind == Kind.SKILL:
        return f"Skill: {item.name}"
    return item.label


def _raw_rows(text: str) -> list[tuple[int, str]]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return list(enumerate(lines, 1))


def _open_items(text: str | None) -> int:
    """Scratchpad open items: lines starting `- [ ]` or `* [ ]` after left-trimming."""
    return sum(1 for ln in (text or "").split("\n") if ln.lstrip().startswith(("- [ ]", "* [ ]")))


@require_role(VIEWER)
@web_errors
def overview(request: HttpRequest) -> HttpResponse:
    """The workspace at a glance; its scope and world tables filter, sort and page (htmx
    swaps the table HX-Target names as the lead types, and the other one out of band)."""
    store = get_store()
    h = hierarchy.build(store)
    form = OverviewQuery(request.GET)
    v, query = form.values(), form.query()
    target = request.headers.get("HX-Target", "") if is_fragment(request) else ""
    counts = {} if h.indexing else review_counts(store)
    ctx: dict = {"h": h, "query": query, "target": target,
                 "scopes": scope_listing(h.scope_list(), counts, q=v["q"], sort=v["sort"],
                                         page=v["page"], query=query),
                 "world": world_listing(h.world, q=v["wq"], sort=v["wsort"],
                                        page=v["wpage"], query=query)}
    if target in ("ov-scopes-table", "ov-world-table"):
        # the asked-for table, and the other one out of band: its links keep this query
        response = render(request, T + "_overview_tables.html", ctx)
    else:
        ctx.update({"world_over": sum(1 for w in h.world if w.budget and w.budget.state == "over"),
                    **hierarchy.sidebar(store)})
        response = render(request, T + "overview.html", ctx)
    return vary(response)


@require_role(VIEWER)
@web_errors
def pending_count(request: HttpRequest) -> HttpResponse:
    """Fragment: how many files changed outside memoryui (`git status`, cached briefly)."""
    store = get_store()
    key, head = str(store.root), store.head()
    cached = PENDING_COUNTS.get(key)
    if cached and cached[0] == head:
        count = cached[1]
    else:
        count = len(store.pending())
        PENDING_COUNTS.put(key, (head, count))
    return render(request, T + "_pending_count.html", {"count": count})


@require_role(VIEWER)
@web_errors
def scope(request: HttpRequest, scope: str) -> HttpResponse:
    store = get_store()
    store_names.validate_scope(scope)
    node = hierarchy.scope_node(store, scope)
    lay = store.layout
    if node is None:
        return error_page(request, f"There is no {lay.scope_term} named {scope!r} in this "
                          "workspace.", 404, title=f"No such {lay.scope_term}")
    open_items = _open_items(store.read(node.scratchpad.path)) if node.scratchpad else 0
    months = [m.key for m in node.months]
    open_month = ScopeQuery(request.GET).value()
    if open_month not in months:
        open_month = months[0] if months else ""
    ctx = {"node": node, "open_month": open_month, "open_items": open_items, "layout": lay,
           "kinds": {k.value for k in lay.kinds()}, "can_create": has_role(request.user, CURATOR),
           **hierarchy.sidebar(store, scope=scope, node=node)}
    return render(request, T + "scope.html", ctx)


FileView = Callable[[HttpRequest, Store, str, str, str | None], HttpResponse]


def existing_file(view: FileView) -> Callable[[HttpRequest, str], HttpResponse]:
    """A page about a file that exists: `view(request, store, path, text, version)`; a file
    that does not answers the missing page (with a way to create it)."""

    @wraps(view)
    def read(request: HttpRequest, path: str) -> HttpResponse:
        store = get_store()
        text, version = store.read_versioned(path)
        if text is None:
            return missing(request, store, path)
        return view(request, store, path, text, version)

    return read


@require_role(VIEWER)
@web_errors
@existing_file
def file_page(request: HttpRequest, store: Store, path: str, text: str,
              version: str | None) -> HttpResponse:
    size = len(text.encode())
    item = hierarchy.item_for(store, path, size, hierarchy.last_change(store, path))
    lines = hierarchy.count_lines(text)
    budget = store.layout.budget(item.kind) if item.kind else None
    view = FileQuery(request.GET).value()
    ctx = {
        "path": path, "item": item, "text": text, "version": version, "view": view,
        "size": size, "size_text": hierarchy.fmt_bytes(size), "lines": lines,
        "budget": hierarchy.budget_view(budget, size, lines) if budget else None,
        "cut": hierarchy.agent_cut(store.layout, item.kind, text),
        "title": title_of(path, item),
        "can_edit": has_role(request.user, CURATOR), "can_delete": has_role(request.user, ADMIN),
        **hierarchy.sidebar(store, current_path=path),
    }
    ctx["too_large"] = too_large_note(text)
    if ctx["too_large"]:  # offered raw and as a download, never rendered or drawn by line
        return render(request, T + "file.html", ctx)
    if view == "raw":
        ctx["rows"] = _raw_rows(text)
    elif item.kind == Kind.DAILY:
        ctx["entries"] = [{"e": e, "html": render_markdown(e.text)} for e in parse_daily(text)]
    else:
        ctx["html"] = render_markdown(text)
    ctx["meaning_panels"] = has_meaning_panels(item.kind)
    return render(request, T + "file.html", ctx)


def too_large_note(text: str) -> dict | None:
    """Sizes for `_too_large.html` when `text` is over the render limit, else None."""
    if not too_large(text):
        return None
    return {"size": hierarchy.fmt_bytes(len(text.encode("utf-8", "surrogatepass"))),
            "limit": hierarchy.fmt_bytes(render_limit())}


def missing(request: HttpRequest, store: Store, path: str) -> HttpResponse:
    """404 for a file that does not exist, with a way to create it when the layout knows it."""
    addr = store.address_of(path)
    create = None
    if addr is not None and has_role(request.user, CURATOR):
        q = {"kind": addr.kind.value}
        if addr.scope:
            q["scope"] = addr.scope
        if addr.name:
            q["name"] = addr.name
        create = reverse("new_file") + "?" + urlencode(q)
    ctx = {"path": path, "create": create, "addr": addr,
           "kind_label": KIND_LABELS.get(addr.kind) if addr else None}
    return render(request, T + "missing.html", ctx, status=404)


@require_role(VIEWER)
@web_errors
def raw(request: HttpRequest, path: str) -> HttpResponse:
    data = get_store().read_bytes(path)
    if data is None:
        return HttpResponse(f"{path} does not exist\n", status=404,
                            content_type="text/plain; charset=utf-8")
    resp = HttpResponse(data, content_type="text/plain; charset=utf-8")
    resp["ETag"] = f'"{version_of(data)}"'
    if "download" in request.GET:
        resp["Content-Disposition"] = content_disposition_header(
            True, path.rsplit("/", 1)[-1])
    return resp
