"""A file's history and a scope's history: one `git log` per page, newest first."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from memoryui.roles import VIEWER, require_role
from memoryui.store import ABSENT, InvalidName, NotFound, names
from memoryui.web.common import BadInput, render_page, web_errors
from memoryui.web.links import file_url
from memoryui.workspace import get_store

from .forms import WHO_ACTOR, ActivityForm, first_error
from .rows import about_file, by_day, page_number, pager, rows

HISTORY_PAGE = 30


@about_file
def file_history(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    page = page_number(request)
    actor = _actor_filter(request)
    infos = store.log(path, limit=HISTORY_PAGE + 1, offset=(page - 1) * HISTORY_PAGE,
                      actor=actor.removeprefix("git:") or None)
    has_next = len(infos) > HISTORY_PAGE
    shown = rows(infos[:HISTORY_PAGE], path)
    current, version = store.read_versioned(path)
    if not shown and page == 1 and current is None:
        raise NotFound(f"{path} has no history")
    if shown and page == 1 and current is not None and not shown[0].deleted and not actor:
        shown[0].latest = True
    return render_page(request, "web/history/file_history.html", {
        "path": path, "address": store.address_of(path), "exists": current is not None,
        "base": version or ABSENT, "groups": by_day(shown),
        "pager": pager(request, page, has_next), "file_href": file_url(path),
        "restore_action": reverse("restore", args=[path]),
        "actor": "" if actor.endswith(":") else actor, "who": request.GET.get("who", ""),
        "filtered": bool(actor),
    }, path=path)


def _actor_filter(request: HttpRequest) -> str:
    """`?actor=` (agent:<scope>, user:<name> or a git author) or `?who=agents|people`
    (any agent / any person), checked like activity's filters."""
    form = ActivityForm({"actor": request.GET.get("actor", ""),
                         "who": request.GET.get("who", "")}, kinds=[])
    if not form.is_valid():
        raise BadInput(first_error(form))
    return form.cleaned_data["actor"] or WHO_ACTOR.get(form.cleaned_data["who"], "")


@require_GET
@require_role(VIEWER)
@web_errors
def scope_history(request: HttpRequest, scope: str) -> HttpResponse:
    try:
        names.validate_scope(scope)
    except InvalidName as exc:
        raise BadInput(str(exc)) from None
    store = get_store()
    page = page_number(request)
    infos = store.log(scope=scope, limit=HISTORY_PAGE + 1, offset=(page - 1) * HISTORY_PAGE)
    if not infos and page == 1 and scope not in store.scopes():
        raise NotFound(f"there is no scope {scope!r}")
    has_next = len(infos) > HISTORY_PAGE
    return render_page(request, "web/history/scope_history.html", {
        "scope": scope, "groups": by_day(rows(infos[:HISTORY_PAGE])),
        "pager": pager(request, page, has_next), "scope_term": store.layout.scope_term,
        "activity_query": urlencode({"scope": scope}),
    }, scope=scope)
