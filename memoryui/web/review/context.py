""""What <scope> sees": the text its framework injects at session start, and what changed
in it since a date. Thin over `memoryui.tools.context` (the tools' own builders), with the
since-diff drawn by `web.diffview`. Viewers may read; agent tokens never reach UI pages.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlencode

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from memoryui.roles import VIEWER
from memoryui.store import InvalidName
from memoryui.store import names as store_names
from memoryui.tools.context import (
    TOKEN_METHOD,
    session_context,
    snapshot_before,
)
from memoryui.web.common import (
    BadInput,
    DateField,
    file_views,
    fragment_or_page,
)
from memoryui.web.diffview import text_diff
from memoryui.web.guards import role_view
from memoryui.web.hierarchy import budget_view
from memoryui.workspace import get_store

from .helpers import T, valid

SINCE_DAYS = 7


class ContextQuery(forms.Form):
    """`?since=YYYY-MM-DD` (default a week ago) and `?day=YYYY-MM-DD` (the session's day,
    default today): dates a person can correct, so a bad one is a 400, not a default."""

    since = DateField()
    day = DateField()


def _local_noon(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12)).astimezone()


@role_view(VIEWER, "GET", htmx=True)
def context_page(request: HttpRequest, scope: str) -> HttpResponse:
    store = get_store()
    term = store.layout.scope_term
    try:
        store_names.validate_scope(scope)
    except InvalidName:
        raise Http404(f"There is no {term} named {scope!r} in this workspace.") from None
    if scope not in store.scopes():
        raise Http404(f"There is no {term} named {scope!r} in this workspace.")
    query = valid(ContextQuery(request.GET))
    now = dt.datetime.now().astimezone()
    day = query.get("day") or now.date()
    since = query.get("since") or day - dt.timedelta(SINCE_DAYS)
    if since > day:
        raise BadInput("since: the date must not be after the session's day")
    current = session_context(store, scope, _local_noon(day) if query.get("day") else now)
    before = snapshot_before(store, since)
    old_text = session_context(before, scope, _local_noon(since)).text if before else ""
    diff = file_views([text_diff(old_text, current.text, f"what {scope} sees")])[0]
    files = [(f, budget_view(f.budget, f.size, f.lines) if f.budget else None)
             for f in current.files]
    ctx = {
        "scope": scope, "term": term, "ctx": current, "files": files,
        "total_budget": budget_view(current.cap, current.size, current.lines)
        if current.cap else None,
        "token_method": TOKEN_METHOD, "since": since, "day": day,
        "day_given": bool(query.get("day")), "before": before, "diff": diff,
        "changed": bool(diff.diff.hunks),
        "review_url": reverse("review") + "?" + urlencode({"scope": scope}),
        "scope_url": reverse("scope", args=[scope]),
    }
    return fragment_or_page(request, T + "context.html", T + "_context_diff.html", ctx,
                            sidebar=True, scope=scope)
