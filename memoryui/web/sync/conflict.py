"""The three-way merge view of one sync conflict, and saving the curator's resolution.

The view shows the common base, this instance's version (as it is now: agents may have
written since) and the remote's newest version, with a merge of the two to start from
(`merge3`, conflict markers where both changed the same lines). Saving calls
`Syncer.resolve` against the versions the curator saw: if an agent rewrote the local file
or the remote edited it again meanwhile, nothing is saved and the view comes back with the
newer texts and the curator's own text kept in the editor.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from memoryui.roles import CURATOR, VIEWER, has_role, require_role
from memoryui.store import ABSENT, Conflict, Store, version_of
from memoryui.store import names as store_names
from memoryui.store.merge import has_conflict_markers, merge3
from memoryui.store.sync import ConflictChanged, SyncConflict, Syncer
from memoryui.web.common import (
    actor_of,
    error_page,
    file_views,
    preview_context,
    render_page,
    web_errors,
)
from memoryui.web.diffview import text_diff

from .forms import ResolveForm, first_error
from .views import T, syncer_or_404

LABELS = ("this instance", "common base", "the remote")


def _start_text(store: Store, base: str | None, ours: str | None, theirs: str | None
                ) -> tuple[str, int]:
    """What the editor starts from: a merge of both sides, or the side that still exists."""
    if ours is None or theirs is None:
        return (ours if ours is not None else theirs or ""), 0
    result = merge3(base or "", ours, theirs, store.git.state_dir, LABELS)
    if result is None:
        return ours, 0
    return result.text, result.conflicts


def _render(request: HttpRequest, syncer: Syncer, path: str, record: SyncConflict, *,
            text: str | None = None, message: str = "", error: str = "", stale: str = "",
            delete: bool = False, status: int = 200) -> HttpResponse:
    store = syncer.store
    base, ours, theirs = syncer.conflict_texts(path)
    merged, regions = _start_text(store, base, ours, theirs)
    if text is None:
        text = merged
    ctx = {
        "path": path, "record": record, "base": base, "ours": ours, "theirs": theirs,
        "text": text, "regions": regions, "markers": has_conflict_markers(text),
        "ours_diff": file_views([text_diff(base, ours, path)]),
        "theirs_diff": file_views([text_diff(base, theirs, path)]),
        "expect": version_of(ours) if ours is not None else ABSENT,
        "message": message or f"sync: resolve the conflict in {path}",
        "error": error, "stale": stale, "delete": delete,
        "one_side_deleted": ours is None or theirs is None,
        "preview": preview_context(store, text, path=path),
        "can_act": has_role(request.user, CURATOR),
    }
    return render_page(request, T + "conflict.html", ctx, status=status, path=path)


@require_http_methods(["GET", "POST"])
@require_role(VIEWER)
@web_errors
def conflict(request: HttpRequest, path: str) -> HttpResponse:
    """GET: the merge view. POST (curators): save the resolution as a commit."""
    if request.method == "POST" and not has_role(request.user, CURATOR):
        raise PermissionDenied("resolving a sync conflict needs the curator role")
    syncer = syncer_or_404()
    store_names.validate_relpath(path)
    record = syncer.conflict(path)
    if record is None:
        return error_page(request, f"{path} has no open sync conflict: it was resolved, or "
                          "the remote and this instance agree on it now.", 404,
                          back=reverse("sync"))
    if request.method == "GET":
        return _render(request, syncer, path, record)
    return _save(request, syncer, path, record)


def _save(request: HttpRequest, syncer: Syncer, path: str,
          record: SyncConflict) -> HttpResponse:
    form = ResolveForm(request.POST)
    if not form.is_valid():
        return _render(request, syncer, path, record, error=first_error(form), status=400)
    data = form.cleaned_data
    text, delete = data["text"], data["delete"]
    keep = {"text": text, "message": data["message"], "delete": delete}
    if not delete and has_conflict_markers(text) and not data["allow_markers"]:
        return _render(request, syncer, path, record, status=400, error=(
            "The text still contains conflict markers (<<<<<<<, =======, >>>>>>>). Resolve "
            "them, or tick “Save with the markers”."), **keep)
    try:
        sha = syncer.resolve(path, None if delete else text, actor=actor_of(request),
                             message=data["message"] or None,
                             expect_theirs=data["theirs"] or None,
                             expect=data["expect"] or None)
    except ConflictChanged:
        fresh = syncer.conflict(path) or record
        return _render(request, syncer, path, fresh, status=409, stale=(
            "The remote changed this file again while you were merging. Nothing was saved: "
            "its newest version is below; your text is still in the editor."), **keep)
    except Conflict:
        return _render(request, syncer, path, record, status=409, stale=(
            "This file changed here while you were merging (an agent wrote to it). Nothing "
            "was saved: the current version is below; your text is still in the editor."),
            **keep)
    what = "Deleted" if delete else "Resolved"
    messages.success(request, f"{what} {path} in commit {sha[:8]}. The next round publishes "
                              "it to the remote.")
    return redirect("sync")
