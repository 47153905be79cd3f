"""The search page: ranked, highlighted results across every memory file.

Thin over `memoryui.store.search`: the view reads the form, asks the index, and renders.
Typing updates the results through htmx (`_results.html`); without JavaScript the same form
is a plain GET and the same fragment is part of the full page.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from memoryui.roles import VIEWER, require_role
from memoryui.store import StoreError
from memoryui.store.layout import KIND_LABELS, Kind
from memoryui.workspace import get_search_index, get_store

T = "web/search/"
PAGE_SIZE = 20
MAX_PAGE = 50
KIND_VALUES = frozenset(k.value for k in Kind)
# app.css has badge colours for these kinds; the global memory shares MEMORY.md's.
BADGES = {k: k for k in ("world", "memory", "daily", "note", "scratchpad", "skill",
                         "directive")} | {"global": "memory"}


def _page(raw: str | None) -> int:
    try:
        return min(max(int(raw or 1), 1), MAX_PAGE)
    except ValueError:
        return 1


def _entry_label(entry_id: str | None) -> str:
    """Entry ids start with the entry's time (HHMM) or "u" for untimed text."""
    if not entry_id:
        return ""
    hhmm = entry_id[:4]
    return f"entry at {hhmm[:2]}:{hhmm[2:]}" if hhmm.isdigit() else "untimed entry"


def _result_rows(hits: list) -> list[dict]:
    rows = []
    for h in hits:
        url = "/f/" + quote(h.path)
        if h.entry_id:
            url += f"#e-{h.entry_id}"
        kind = Kind(h.kind) if h.kind in KIND_VALUES else None
        rows.append({
            "hit": h,
            "url": url,
            "kind_label": KIND_LABELS[kind] if kind else "Other file",
            "badge": BADGES.get(h.kind, "directive"),
            "scope_url": "/s/" + quote(h.scope) + "/" if h.scope else "",
            "has_title_match": "\x02" in h.title,
            "entry_label": _entry_label(h.entry_id),
        })
    return rows


@require_role(VIEWER)
def search(request: HttpRequest) -> HttpResponse:
    store = get_store()
    q = request.GET.get("q", "").strip()
    scope = request.GET.get("scope", "").strip()
    kind = request.GET.get("kind", "").strip()
    date_from = request.GET.get("from", "").strip()
    date_to = request.GET.get("to", "").strip()
    page = _page(request.GET.get("page"))
    kinds = [(k.value, KIND_LABELS[k]) for k in store.layout.kinds()]
    error, results, status = "", None, 200
    if kind and kind not in {k for k, _ in kinds}:
        error, status = f"Unknown kind {kind!r}.", 400
    elif q:
        try:
            results = get_search_index().search(
                q, scope=scope or None, kind=kind or None, date_from=date_from or None,
                date_to=date_to or None, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        except StoreError as exc:
            error, status = str(exc), exc.status
    params = {k: v for k, v in (("q", q), ("scope", scope), ("kind", kind),
                                ("from", date_from), ("to", date_to)) if v}
    pages = {}
    if results is not None:
        if page > 1:
            pages["prev"] = "?" + urlencode({**params, "page": page - 1})
        if results.total > page * PAGE_SIZE and page < MAX_PAGE:
            pages["next"] = "?" + urlencode({**params, "page": page + 1})
    ctx = {
        "q": q, "scope": scope, "kind": kind, "date_from": date_from, "date_to": date_to,
        "page": page, "kinds": kinds, "scopes": store.scopes(),
        "scope_term": store.layout.scope_term, "results": results,
        "rows": _result_rows(results.hits) if results else [], "error": error,
        "pages": pages, "ms": round(results.seconds * 1000, 1) if results else None,
        "first": (page - 1) * PAGE_SIZE + 1,
        "last": (page - 1) * PAGE_SIZE + (len(results.hits) if results else 0),
    }
    if request.htmx:
        # htmx does not swap 4xx bodies: the message is shown with a 200 instead.
        return render(request, T + "_results.html", ctx)
    return render(request, T + "search.html", ctx, status=status)
