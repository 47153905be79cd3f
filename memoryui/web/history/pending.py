"""Pending changes: files changed outside memoryui, committed or discarded by a curator.

One `git status` per page (the store's `pending()`). An item the store refuses (a symbolic
or hard link, something that is not a regular file) is shown with its reason and can only
be discarded: it is never read, diffed or committed. Each committable file is scanned for
the secrets its change adds (memoryui/secrets), so the warning comes before the commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from memoryui.roles import CURATOR, VIEWER, require_role
from memoryui.secrets import Finding
from memoryui.store import Actor, InvalidName, NotFound, Store, walk
from memoryui.store.history import StatusEntry
from memoryui.web.common import (
    BadInput,
    actor_of,
    fragment_or_page,
    is_fragment,
    render_page,
    vary_on_htmx,
    web_errors,
)
from memoryui.web.diffview import FileView, anchor_for, file_views, text_diff
from memoryui.workspace import get_store

from .forms import CommittedQuery, PendingCommitForm, PendingDiscardForm, first_error, pending_path

PENDING_INLINE_DIFFS = 25  # more pending files load their diff on demand
F = TypeVar("F", PendingCommitForm, PendingDiscardForm)


@dataclass
class PendingItem:
    path: str
    status: str
    owner: Actor
    refused: str | None = None  # why it cannot be committed (e.g. a symbolic link)
    diff: FileView | None = None
    secrets: list[Finding] = field(default_factory=list)  # in the lines the change adds

    @property
    def anchor(self) -> str:
        return anchor_for(self.path)

    @property
    def diffs(self) -> list[FileView]:
        return [self.diff] if self.diff else []

    @property
    def secret_kinds(self) -> list[str]:
        return sorted({f.kind for f in self.secrets})

    @property
    def owner_label(self) -> str:
        return self.owner.trailer if self.owner.kind != "external" else "workspace (no scope)"


def _item(store: Store, entry: StatusEntry) -> PendingItem:
    return PendingItem(entry.path, entry.status, store.owner_of(entry.path), entry.refused)


def _read_working(store: Store, path: str) -> str | None:
    data = walk.read_nofollow(store.root, path)
    return None if data is None else data.decode("utf-8", "replace")


def _look(store: Store, item: PendingItem, *, draw: bool) -> None:
    """Fill in the secrets the item's change adds and, with `draw`, its diff: HEAD's
    version against the working file, diffed in memory (no git command).

    Nothing for a refused item (nothing behind a link is ever read) or a name the store's
    readers do not take.
    """
    if item.refused:
        return
    path = item.path
    try:
        old = store.file_at(path, "HEAD") if store.head() else None
        new = None if item.status == "deleted" else _read_working(store, path)
    except InvalidName:
        return
    if new is not None:
        item.secrets = store.secrets.added(old, new)
    if draw:
        item.diff = file_views([text_diff(old, new, path)])[0]


@require_GET
@require_role(VIEWER)
@web_errors
def pending(request: HttpRequest) -> HttpResponse:
    store = get_store()
    items = [_item(store, e) for e in store.pending()]
    committable = [it for it in items if not it.refused]
    for n, item in enumerate(committable):
        _look(store, item, draw=n < PENDING_INLINE_DIFFS)
    return render_page(request, "web/history/pending.html", {
        "items": items, "committed": CommittedQuery(request.GET).shas(), "only": None,
        "inline_limit": PENDING_INLINE_DIFFS, "committable": committable,
        "refused": [it for it in items if it.refused],
    })


@require_GET
@require_role(VIEWER)
@web_errors
def pending_diff(request: HttpRequest, path: str) -> HttpResponse:
    try:
        path = pending_path(path)
    except InvalidName as exc:
        raise BadInput(str(exc)) from None
    store = get_store()
    entry = next((e for e in store.pending() if e.path == path), None)
    if entry is None:
        raise NotFound(f"{path} has no pending change")
    item = _item(store, entry)
    _look(store, item, draw=True)
    return fragment_or_page(request, "web/history/pending.html",
                            "web/history/_pending_diff.html", {
                                "item": item, "items": [item], "committed": [], "only": path,
                                "inline_limit": 1,
                                "committable": [] if item.refused else [item],
                                "refused": [item] if item.refused else []},
                            sidebar=True, path=path)


def _chosen(request: HttpRequest, form_class: type[F]) -> F:
    form = form_class(request.POST)
    if not form.is_valid():
        raise BadInput(first_error(form))
    return form


@require_role(CURATOR)
@require_POST
@web_errors
def pending_commit(request: HttpRequest) -> HttpResponse:
    form = _chosen(request, PendingCommitForm)
    d = form.cleaned_data
    if not d["paths"]:
        messages.error(request, "Select at least one file to commit.")
        return redirect("pending")
    me = d["attribute"] == "me"
    store = get_store()
    shas = store.commit_pending(d["paths"], actor=actor_of(request) if me else None,
                                message=d["message"].strip() or None)
    refused = getattr(shas, "refused", [])
    for e in refused:
        messages.warning(request, f"Not committed: {e.path} is {e.refused}.")
    if not shas:
        if not refused:
            messages.warning(request, "Nothing was committed: the selected files no longer "
                                      "have pending changes.")
        return redirect("pending")
    who = f"you ({request.user.get_username()})" if me else "the owning scopes"
    count = len(d["paths"]) - len(refused)
    messages.success(request, f"Committed {count} file(s) in {len(shas)} commit(s), "
                              f"attributed to {who}.")
    return redirect(reverse("pending") + "?" + CommittedQuery.encode(list(shas)))


@vary_on_htmx
@require_role(CURATOR)
@require_POST
@web_errors
def pending_discard(request: HttpRequest) -> HttpResponse:
    form = _chosen(request, PendingDiscardForm)
    paths = form.cleaned_data["paths"]
    if not paths:
        messages.error(request, "Select at least one file to discard.")
        return redirect("pending")
    store = get_store()
    if not form.confirmed:
        pending_now = {e.path: e for e in store.pending()}
        items = [_item(store, pending_now[p]) for p in paths if p in pending_now]
        return render_page(request, "web/history/discard_confirm.html", {"items": items})
    done = store.discard_pending(paths)
    if done:
        messages.success(request, f"Discarded the outside changes to {len(done)} file(s): "
                                  + ", ".join(done[:10]) + (" …" if len(done) > 10 else ""))
    else:
        messages.warning(request, "Nothing was discarded: the selected files no longer have "
                                  "pending changes.")
    if is_fragment(request):
        return HttpResponseClientRedirect(reverse("pending"))
    return redirect("pending")
