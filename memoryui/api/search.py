"""`GET /api/v1/search`: ranked full-text search for agents and tooling.

A scope token sees its own scope's files plus the shared ones (world topics, the global
memory, skills); an admin token sees everything. Query errors are 400s with a message a
model can act on.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from memoryui.api.auth import error, require_token
from memoryui.store import StoreError
from memoryui.store.layout import Kind
from memoryui.store.names import SCOPE_RE
from memoryui.workspace import get_search_index

DEFAULT_LIMIT, MAX_LIMIT = 20, 100
KINDS = tuple(k.value for k in Kind)


@require_token()
def search(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        resp = error("method_not_allowed", "use GET", 405)
        resp["Allow"] = "GET, HEAD"
        return resp
    token = request.token  # type: ignore[attr-defined]
    q = request.GET.get("q", "")
    scope = request.GET.get("scope", "").strip() or None
    kind = request.GET.get("kind", "").strip() or None
    raw_limit = request.GET.get("limit", "").strip()
    try:
        limit = int(raw_limit) if raw_limit else DEFAULT_LIMIT
    except ValueError:
        return error("invalid_arguments", f"limit must be a number from 1 to {MAX_LIMIT}", 400)
    if not 1 <= limit <= MAX_LIMIT:
        return error("invalid_arguments", f"limit must be a number from 1 to {MAX_LIMIT}", 400)
    if not q.strip():
        return error("invalid_arguments", "q is required: the words to search for", 400)
    if kind is not None and kind not in KINDS:
        return error("invalid_arguments",
                     f"unknown kind {kind!r}; use one of {', '.join(KINDS)}", 400)
    if scope is not None and not SCOPE_RE.match(scope):
        return error("invalid_arguments", f"invalid scope {scope!r}", 400)
    visible_to = None
    if not token.is_admin:
        if scope is not None and scope != token.scope:
            return error("forbidden", f"this token cannot read scope {scope!r}", 403)
        visible_to = token.scope
    try:
        results = get_search_index().search(
            q, scope=scope, kind=kind, visible_to=visible_to, limit=limit,
            date_from=request.GET.get("since") or None,
            date_to=request.GET.get("until") or None)
    except StoreError as exc:
        return error(exc.code, str(exc), exc.status)
    return JsonResponse({
        "query": q,
        "total": results.total,
        "results": [{
            "path": h.path,
            "kind": h.kind or None,
            "scope": h.scope or None,
            "date": h.date,
            "score": round(h.score, 9),
            "snippet": h.snippet_text,
            "highlights": [list(span) for span in h.highlights],
            "entry_id": h.entry_id,
        } for h in results.hits],
    }, json_dumps_params={"ensure_ascii": False})
