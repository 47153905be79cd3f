"""Restore: bring a file back as it was at a commit, as a new commit (never a rewrite)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from memoryui.roles import CURATOR, require_role
from memoryui.store import ABSENT, Conflict, Store
from memoryui.web.common import BadInput, actor_of, render_page, saved, web_errors
from memoryui.web.common.conflicts import Names, conflict_sides
from memoryui.web.links import file_url
from memoryui.workspace import get_store

from .forms import RestoreForm, first_error
from .rows import checked_path, commit_id


@require_role(CURATOR)
@require_POST
@web_errors
def restore(request: HttpRequest, path: str) -> HttpResponse:
    path = checked_path(path)
    form = RestoreForm(request.POST)
    if not form.is_valid():
        raise BadInput(first_error(form))
    d = form.cleaned_data
    store = get_store()
    full = commit_id(store, d["rev"])
    old = store.file_at(path, full)
    if old is None and not store.exists(path):
        messages.info(request, f"{path} did not exist at {full[:8]} and does not exist now: "
                               "nothing to restore.")
        return redirect("file_history", path=path)
    try:
        result = store.restore(path, full, actor=actor_of(request), expect=d["base"],
                               message=d["message"].strip() or None)
    except Conflict as exc:
        return _conflict(request, store, path, full, old, exc)
    if not result.changed:
        messages.info(request, f"{path} is already the same as at {full[:8]}; "
                               "no commit was needed.")
    else:
        messages.success(request, saved(f"Restored {path} as of {full[:8]}", result))
    return redirect("file_history", path=path)


def _conflict(request: HttpRequest, store: Store, path: str, rev: str, old: str | None,
              exc: Conflict) -> HttpResponse:
    """Someone changed the file since the page loaded: show what they did, overwrite nothing."""
    names = Names("the current file", "", f"the version from {rev[:8]}", ids="restore")
    return render_page(request, "web/history/restore_conflict.html", {
        "path": path, "rev": rev, "message": str(exc),
        "sides": conflict_sides(path, None, exc.current, old, names, base_known=False),
        "base": exc.version or ABSENT, "exists": exc.current is not None,
        "file_href": file_url(path),
    }, status=409, path=path)
