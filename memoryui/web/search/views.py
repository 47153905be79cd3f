"""The search page: ranked, highlighted results across every memory file.

Thin over `memoryui.search`: a form reads the query string, the index answers, and the
template renders. Typing updates the results through htmx (`_results.html`); without
JavaScript the same form is a plain GET and the same fragment is part of the full page.
The box treats the last word as a prefix (`escal` finds "escalation"), on every request, so
a URL always shows the same results whether htmx or a reload fetched it.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse

from memoryui.rendering import marked_html
from memoryui.roles import VIEWER, require_role
from memoryui.search import Hit, QueryError
from memoryui.store import StoreError
from memoryui.store.layout import KIND_LABELS, Kind
from memoryui.web.common import fragment_or_page
from memoryui.web.links import file_url, scope_url
from memoryui.workspace import get_search_index, get_store

from .forms import MAX_PAGE, MODE_CHOICES, SearchForm

T = "web/search/"
PAGE_SIZE = 20
KIND_VALUES = frozenset(k.value for k in Kind)
# app.css has badge colours for these kinds; the global memory shares MEMORY.md's.
BADGES = {k: k for k in ("world", "memory", "daily", "note", "scratchpad", "skill",
                         "directive")} | {"global": "memory"}


def _entry_label(entry_id: str | None) -> str:
    """Entry ids start with the entry's time (HHMM) or "u" for untimed text."""
    if not entry_id:
        return ""
    hhmm = entry_id[:4]
    return f"entry at {hhmm[:2]}:{hhmm[2:]}" if hhmm.isdigit() else "untimed entry"


def _result_rows(hits: list[Hit]) -> list[dict]:
    rows = []
    for h in hits:
        url = file_url(h.path) + (f"#e-{h.entry_id}" if h.entry_id else "")
        kind = Kind(h.kind) if h.kind in KIND_VALUES else None
        rows.append({
            "hit": h,
            "url": url,
            "kind_label": KIND_LABELS[kind] if kind else "Other file",
            "badge": BADGES.get(h.kind, "directive"),
            "scope_url": scope_url(h.scope) if h.scope else "",
            # HTML is made in rendering.py only, from the hit's (text, is_match) spans.
            "path_html": marked_html(h.path_spans),
            "title_html": marked_html(h.title_spans) if h.has_title_match else "",
            "snippet_html": marked_html(h.snippet_spans),
            "entry_label": _entry_label(h.entry_id),
        })
    return rows


def _query_error(exc: QueryError) -> dict | None:
    """The query cut at the place the error points to, for the template to mark."""
    if exc.position is None or exc.query is None:
        return None
    before, at, after = exc.parts()
    return {"before": before, "at": at or " ", "after": after, "column": exc.column}


@require_role(VIEWER)
def search(request: HttpRequest) -> HttpResponse:
    store = get_store()
    kinds = [(k.value, KIND_LABELS[k]) for k in store.layout.kinds()]
    form = SearchForm(request.GET, kinds=kinds)
    valid = form.is_valid()
    q = form.text("q").strip()
    page = form.page_number()
    errors, error_at, results, status = form.messages(), None, None, 200
    if errors:
        status = 400
    elif q:
        try:
            results = get_search_index().search(
                q, scope=form.text("scope") or None, kind=form.text("kind") or None,
                date_from=form.date("from"), date_to=form.date("to"), limit=PAGE_SIZE,
                offset=(page - 1) * PAGE_SIZE, prefix_last=True,
                mode=form.text("mode") or "hybrid")
        except QueryError as exc:
            errors, error_at, status = [exc.message], _query_error(exc), exc.status
        except StoreError as exc:
            errors, status = [str(exc)], exc.status
    raw = {name: request.GET.get(name, "").strip()
           for name in ("scope", "kind", "from", "to", "mode")}
    params = {k: v for k, v in (("q", q), *raw.items()) if v}
    pages = {}
    if results is not None:
        # The index fetches one page of hits and counts them all in one query: the pages
        # are over the result positions, at most MAX_PAGE of them.
        positions = Paginator(range(min(results.total, MAX_PAGE * PAGE_SIZE)), PAGE_SIZE)
        if page > 1:
            pages["prev"] = "?" + urlencode({**params, "page": page - 1})
        if page < positions.num_pages:
            pages["next"] = "?" + urlencode({**params, "page": page + 1})
    ctx = {
        "form": form, "valid": valid, "q": q, "scope": raw["scope"], "kind": raw["kind"],
        "date_from": raw["from"], "date_to": raw["to"], "page": page, "kinds": kinds,
        "mode": form.text("mode") or "hybrid", "modes": MODE_CHOICES,
        "scope_term": store.layout.scope_term, "results": results,
        "rows": _result_rows(results.hits) if results else [], "errors": errors,
        "error_at": error_at, "pages": pages,
        "ms": round(results.seconds * 1000, 1) if results else None,
        "first": (page - 1) * PAGE_SIZE + 1,
        "last": (page - 1) * PAGE_SIZE + (len(results.hits) if results else 0),
    }
    # htmx does not swap 4xx bodies: the fragment carries the message with a 200.
    return fragment_or_page(request, T + "search.html", T + "_results.html", ctx,
                            status=status, fragment_status=200)
