"""The Sync page, "Sync now", publishing and discarding, and the header badge's fragment.

Thin views over `memoryui.store.sync.Syncer` (reached through `workspace.get_syncer()`): the domain
decides what a round, a publish or a discard does; these views translate forms to calls
and results to flashes. Viewers read; curators and admins act.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import TypeVar

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memoryui import workspace
from memoryui.roles import CURATOR, VIEWER, has_role, require_role
from memoryui.store import names as store_names
from memoryui.store.sync import FileState, RoundResult, Syncer
from memoryui.web.common import (
    FileView,
    actor_of,
    file_views,
    fragment_or_page,
    render_page,
    vary,
    web_errors,
)
from memoryui.web.diffview import text_diff
from memoryui.web.guards import View, stack

from .context import current_status
from .forms import DiscardForm, PublishForm, first_error

T = "web/sync/"
INLINE_DIFFS = 25  # more changed files load their diff on demand
OFF = "sync is off: no remote is configured (set MEMORYUI_REMOTE)"
READ = stack(require_GET, require_role(VIEWER), web_errors)
ACT = stack(require_POST, require_role(CURATOR), web_errors)
Posted = TypeVar("Posted", PublishForm, DiscardForm)


def syncer_or_404() -> Syncer:
    syncer = workspace.get_syncer()
    if syncer is None:
        raise Http404(OFF)
    return syncer


@dataclass
class FileRow:
    """One row of the changed-files table: a file's state and, for the first rows, its diff."""

    path: str
    state: str
    diff: list[FileView] | None = None

    @property
    def publishable(self) -> bool:
        return self.state != "conflict"


def _diff(syncer: Syncer, path: str) -> list[FileView]:
    """The remote tip's version -> the local one, as the history pages draw diffs."""
    remote, local = syncer.compare_texts(path)
    return file_views([text_diff(remote, local, path)])


def _rows(syncer: Syncer, states: list[FileState]) -> list[FileRow]:
    return [FileRow(fs.path, fs.state, _diff(syncer, fs.path) if i < INLINE_DIFFS else None)
            for i, fs in enumerate(states)]


def _page(request: HttpRequest, syncer: Syncer | None, *, status: int = 200,
          form: PublishForm | DiscardForm | None = None) -> HttpResponse:
    """The Sync page; `form` is a posted form shown again with its errors."""
    ctx: dict = {"status": None, "rows": [], "can_act": has_role(request.user, CURATOR)}
    if syncer is not None:
        ctx["status"] = syncer.status()
        ctx["rows"] = _rows(syncer, syncer.file_states())
        ctx["conflict_paths"] = {c.path for c in ctx["status"].conflicts}
    ctx["publish_form"] = form if isinstance(form, PublishForm) else PublishForm()
    ctx["discard_form"] = form if isinstance(form, DiscardForm) else None
    ctx["form_errors"] = [first_error(form)] if form is not None and form.errors else []
    return render_page(request, T + "sync.html", ctx, status=status)


@READ
def sync_page(request: HttpRequest) -> HttpResponse:
    """The remote, the last rounds, the conflicts and the files not on the remote yet."""
    return _page(request, workspace.get_syncer())


def _flash(request: HttpRequest, result: RoundResult, done: str = "") -> None:
    text = result.summary()
    if done:
        text = f"{done} {text}"
    if result.error:
        messages.error(request, text)
    elif result.conflicts or not result.ran:
        messages.warning(request, text)
    else:
        messages.success(request, text)


def _posted(form_class: type[Posted]
            ) -> Callable[[Callable[[HttpRequest, Syncer, Posted], HttpResponse]], View]:
    """The view is handed the syncer and its posted form, valid; an invalid form shows the
    page again with its errors (a 400)."""

    def deco(act: Callable[[HttpRequest, Syncer, Posted], HttpResponse]) -> View:
        @wraps(act)
        def view(request: HttpRequest) -> HttpResponse:
            syncer = syncer_or_404()
            form = form_class(request.POST)
            if not form.is_valid():
                return _page(request, syncer, status=400, form=form)
            return act(request, syncer, form)

        return view

    return deco


@ACT
def sync_now(request: HttpRequest) -> HttpResponse:
    """One round now (waiting for a background round in progress), then the page."""
    result = syncer_or_404().round(blocking=True)
    _flash(request, result)
    return redirect("sync")


@ACT
@_posted(PublishForm)
def publish(request: HttpRequest, syncer: Syncer, form: PublishForm) -> HttpResponse:
    """Push the chosen files' local versions to the remote as one commit by the curator."""
    result = syncer.publish(form.chosen(), actor=actor_of(request),
                            message=form.cleaned_data["message"])
    if result.error is None and not result.published:
        messages.info(request, "Nothing to publish: the chosen files match the remote.")
    else:
        _flash(request, result)
    return redirect("sync")


@ACT
@_posted(DiscardForm)
def discard(request: HttpRequest, syncer: Syncer, form: DiscardForm) -> HttpResponse:
    """Bring the chosen files back to the remote's version (a commit by the curator)."""
    changed = syncer.discard(form.cleaned_data["paths"], actor=actor_of(request))
    if changed:
        messages.success(request, f"Brought back to the remote's version: {', '.join(changed)}.")
    else:
        messages.info(request, "Nothing changed: those files already match the remote.")
    return redirect("sync")


@READ
def file_diff(request: HttpRequest, path: str) -> HttpResponse:
    """One file's diff, remote -> local (a fragment for htmx, else a page)."""
    syncer = syncer_or_404()
    store_names.validate_relpath(path)
    ctx = {"path": path, "files": _diff(syncer, path)}
    return fragment_or_page(request, T + "diff.html", T + "_diff.html", ctx, sidebar=True)


@require_GET
@require_role(VIEWER)
def badge(request: HttpRequest) -> HttpResponse:
    """The header badge alone, for its periodic refresh."""
    return vary(render(request, T + "_badge.html", {"sync_status": current_status()}))
