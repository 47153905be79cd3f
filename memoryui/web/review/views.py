"""Review queue and promotion: thin HTTP over `memoryui.review` (decisions kept by
`memoryui.review.state.LEDGER`).

Every page works without JavaScript (plain GET forms and POST forms with redirects);
htmx only enhances: the editor opens inside the queue, and after an action the touched
entries are swapped out of band (`_entries_oob.html`), so one response can update
several entries of a multi-select. Viewers see everything; curators act. Input is read
by the forms in `forms.py`; refusals become `web.common.error_page` (a 4xx).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memoryui import review
from memoryui.review.state import LEDGER
from memoryui.roles import CURATOR, VIEWER, require_role
from memoryui.store import Kind, StoreError
from memoryui.web.common import BadInput, actor_of, fragment_or_page, is_fragment, vary_on_htmx
from memoryui.web.guards import role_view
from memoryui.workspace import get_store

from . import forms
from .counts import counts_context
from .editor import editor, open_draft, save
from .helpers import RECENT, T, base_context, count, finish, next_url, urls, valid
from .meaning import mark

# -- queue and neighbours ------------------------------------------------------------------------

@require_role(VIEWER)
@require_GET
@vary_on_htmx
def queue(request: HttpRequest) -> HttpResponse:
    store = get_store()
    form = forms.QueueFilters(request.GET)
    filters = form.filters()
    q = review.build_queue(store, LEDGER, filters)
    if filters.status == "todo":
        mark(store, q.items)
    page = filters.page

    def link(**over: object) -> str:
        return "?" + urlencode(filters.as_query(**over))

    ctx = {
        "form": form, "errors": form.error_list(),
        "statuses": review.STATUSES, "recent": LEDGER.recent(RECENT),
        "prev_url": link(page=page - 1) if page > 1 else "",
        "next_url": link(page=page + 1) if page < q.pages else "",
        **(counts := counts_context(q)), "counts": counts,
        **base_context(request, store, request.get_full_path()),
    }
    return render(request, T + "queue.html", ctx, status=400 if form.errors else 200)


@role_view(VIEWER, "GET", htmx=True)
def entry(request: HttpRequest) -> HttpResponse:
    """One entry with its neighbours: the htmx fragment, or a page of its own."""
    store = get_store()
    data = valid(forms.Entries(request.GET))
    if len(data["entry"]) != 1:
        raise BadInput("entry: name exactly one entry")
    before, current, after = review.neighbours(store, LEDGER, data["entry"][0])
    mark(store, [current])
    ctx = {"before": before, "current": current, "after": after,
           **base_context(request, store, next_url(request, data["next"]))}
    if not is_fragment(request):  # the page lists recent promotions, as the queue does
        ctx["recent"] = LEDGER.recent(RECENT)
    return fragment_or_page(request, T + "entry.html", T + "_neighbours.html", ctx)


# -- promotion ------------------------------------------------------------------------------------

@role_view(CURATOR, "GET", "POST", htmx=True)
def promote(request: HttpRequest) -> HttpResponse:
    """GET: the editor prefilled with the entries in place. POST: save = one commit."""
    store = get_store()
    posted = request.method == "POST"
    data = valid((forms.Save if posted else forms.Promote)(
        request.POST if posted else request.GET))
    items = review.resolve(store, LEDGER, data["entry"])
    if not items:
        raise BadInput("choose at least one entry to promote")
    ctx = base_context(request, store, next_url(request, data["next"]))
    kind = data["kind"] or ctx["default_kind"]
    try:
        target = review.make_target(store, kind, data["scope"] or items[0].scope, data["name"])
    except StoreError as exc:
        if (not posted or data["refit"]) and kind in (Kind.WORLD.value, Kind.SKILL.value):
            # Let the lead type (or fix) the name right in the editor (their text kept).
            return editor(request, store, ctx, data, items=items, target=None, kind=kind,
                          name_error=str(exc) if data["name"] else "",
                          status=400 if data["name"] else 200, text=data["text"],
                          carried=data["path"])
        raise
    if posted and not data["refit"]:
        return save(request, store, ctx, data, items, target)
    return open_draft(request, store, ctx, data, items, target)


# -- dismiss, reopen, undo ------------------------------------------------------------------------

def _decide(request: HttpRequest, decide: Callable[..., list[review.Item]],
            said: Callable[[int], str]) -> HttpResponse:
    """Dismiss or reopen the posted entries: one decision each, then the flash `said` words."""
    data = valid(forms.Entries(request.POST))
    items = decide(get_store(), LEDGER, data["entry"], actor_of(request))
    return finish(request, items, next_url(request, data["next"]), said(len(items)))


@role_view(CURATOR, "POST", htmx=True)
def dismiss(request: HttpRequest) -> HttpResponse:
    return _decide(request, review.dismiss, lambda n: f"Dismissed {count(n)}.")


@role_view(CURATOR, "GET", htmx=True)
def dismiss_confirm(request: HttpRequest) -> HttpResponse:
    """Without JavaScript, "dismiss selected" asks here (a GET form cannot POST)."""
    store = get_store()
    data = valid(forms.Entries(request.GET))
    items = review.resolve(store, LEDGER, data["entry"])
    if not items:
        raise BadInput("select at least one entry first")
    return render(request, T + "dismiss_confirm.html",
                  {"items": items, "next": next_url(request, data["next"]), "urls": urls()})


@role_view(CURATOR, "POST", htmx=True)
def reopen(request: HttpRequest) -> HttpResponse:
    return _decide(request, review.reopen, lambda n: "1 entry is back in the queue." if n == 1
                   else f"{n} entries are back in the queue.")


@role_view(CURATOR, "POST", htmx=True)
def undo(request: HttpRequest, pk: int) -> HttpResponse:
    store = get_store()
    data = valid(forms.Entries(request.POST))
    promo = review.undo(store, LEDGER, pk, actor_of(request))
    where = f" (commit {promo.undo_commit_sha[:8]})" if promo.undo_commit_sha else ""
    messages.success(request, f"Undid the promotion into {promo.target_path}{where}; its "
                     "entries are back in the queue.")
    if request.htmx:
        # Entries come back into the queue wherever they belong: reload the page (the
        # message is shown there) rather than guess which of them this page holds.
        resp = HttpResponse("")
        resp["HX-Refresh"] = "true"
        return resp
    return HttpResponseRedirect(next_url(request, data["next"]))
