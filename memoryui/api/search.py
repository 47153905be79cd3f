"""`GET /api/v1/search`: ranked full-text search for agents and tooling.

A scope token sees what the layout's one read rule lets it read (`Layout.readable_by`): its
own scope's files plus the shared ones (world topics, the global memory, skills, directives
outside scopes); an admin token sees everything. Every bad parameter is a 400 with a message a
model can act on; a query error also says where (`position`, `column`, and a two-line `caret`).

`mode=hybrid` (the default) ranks by keywords and meaning together (`search/hybrid.py`);
`mode=keyword` by keywords alone; a hybrid search meaning could not help says why in
`notice`.

The API matches words exactly as typed (`escal` finds only "escal"; `escal*` is the prefix):
an agent's query is complete when sent. The search page's box is the one that treats the
last word as a prefix, because there a person is still typing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict

from memoryui.api.auth import error, require_token
from memoryui.search import QueryError, parse_date
from memoryui.search.hybrid import MODES
from memoryui.store import StoreError
from memoryui.store.layout import Kind
from memoryui.store.names import SCOPE_RE
from memoryui.workspace import get_search_index

DEFAULT_LIMIT, MAX_LIMIT = 20, 100
KINDS = tuple(k.value for k in Kind)


class BadParam(ValueError):
    def __init__(self, message: str, **extra: object) -> None:
        super().__init__(message)
        self.extra = extra


@dataclass(frozen=True)
class SearchParams:
    q: str
    scope: str | None
    kind: str | None
    limit: int
    since: dt.date | None
    until: dt.date | None
    mode: str = "hybrid"

    @classmethod
    def parse(cls, get: QueryDict) -> SearchParams:
        """The query string, checked: BadParam names the parameter at fault."""
        q = get.get("q", "")

        def text(name: str) -> str | None:
            return get.get(name, "").strip() or None

        raw_limit = text("limit")
        try:
            limit = int(raw_limit) if raw_limit else DEFAULT_LIMIT
        except ValueError:
            limit = 0
        if not 1 <= limit <= MAX_LIMIT:
            raise BadParam(f"limit must be a number from 1 to {MAX_LIMIT}", param="limit")
        if not q.strip():
            raise BadParam("q is required: the words to search for", param="q")
        kind, scope = text("kind"), text("scope")
        if kind is not None and kind not in KINDS:
            raise BadParam(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}", param="kind")
        if scope is not None and not SCOPE_RE.match(scope):
            raise BadParam(f"invalid scope {scope!r}", param="scope")
        dates: dict[str, dt.date | None] = {}
        for name in ("since", "until"):
            raw = text(name)
            try:
                dates[name] = parse_date(raw, name) if raw else None
            except QueryError as exc:
                raise BadParam(f"{name}: {exc}", param=name) from None
        if dates["since"] and dates["until"] and dates["since"] > dates["until"]:
            raise BadParam(f"since ({dates['since']}) is after until ({dates['until']})",
                           param="since")
        mode = text("mode") or "hybrid"
        if mode not in MODES:
            raise BadParam(f"unknown mode {mode[:40]!r}; use hybrid or keyword", param="mode")
        return cls(q, scope, kind, limit, dates["since"], dates["until"], mode)


def _query_error(exc: QueryError) -> JsonResponse:
    extra: dict[str, object] = {}
    if exc.position is not None:
        extra = {"position": exc.position, "column": exc.column, "caret": exc.caret}
    return error(exc.code, str(exc), exc.status, **extra)


@require_token()
def search(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        resp = error("method_not_allowed", "use GET", 405)
        resp["Allow"] = "GET, HEAD"
        return resp
    token = request.token
    try:
        p = SearchParams.parse(request.GET)
    except BadParam as exc:
        return error("invalid_arguments", str(exc), 400, **exc.extra)
    visible_to = None
    if not token.is_admin:
        if p.scope is not None and p.scope != token.scope:
            return error("forbidden", f"this token cannot read scope {p.scope!r}", 403)
        visible_to = token.scope or ""  # no scope: the shared files only
    try:
        results = get_search_index().search(
            p.q, scope=p.scope, kind=p.kind, visible_to=visible_to, limit=p.limit,
            date_from=p.since, date_to=p.until, mode=p.mode)
    except QueryError as exc:
        return _query_error(exc)
    except StoreError as exc:
        return error(exc.code, str(exc), exc.status)
    extra = {"notice": results.notice} if results.notice else {}
    return JsonResponse({
        "query": p.q,
        "total": results.total,
        "mode": results.mode,
        **extra,
        "results": [{
            "path": h.path,
            "kind": h.kind or None,
            "scope": h.scope or None,
            "date": h.date,
            "changed": h.changed.isoformat(),
            "score": round(h.score, 9),
            "snippet": h.snippet_text,
            "highlights": [list(span) for span in h.highlights],
            "entry_id": h.entry_id,
        } for h in results.hits],
    }, json_dumps_params={"ensure_ascii": False})
