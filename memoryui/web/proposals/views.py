"""The inbox of proposed changes (/review/proposals/): thin HTTP over
`memoryui.proposing`, which keeps the proposals, their decisions and the merges.

Viewers read; curators approve, edit then approve, and reject (one, or a selection with
the filters). Every page works without JavaScript (plain forms, redirects); htmx swaps the
decided card in place. A decision another curator made first is a 409 naming who and when;
a stale proposal that cannot merge opens the conflict view (its editor), never overwriting
the newer file. A contradiction candidate on a card is kept or dismissed (remembered).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html

from memoryui import proposing
from memoryui.proposing import ProposalView
from memoryui.review import contradictions
from memoryui.review.state import VERDICTS
from memoryui.roles import CURATOR, VIEWER, has_role
from memoryui.store.merge import has_conflict_markers
from memoryui.web.common import actor_of, error_page, normalize_text, render_page, vary
from memoryui.web.diffsource import prefers_prose
from memoryui.web.guards import role_view
from memoryui.web.review.helpers import next_url, valid
from memoryui.workspace import get_store

from . import display, forms
from .editing import conflict_page, deleted_page, editor_page, seen_version

T = "web/proposals/"
MARKERS = ("The text still contains conflict markers (<<<<<<<, =======, >>>>>>>): keep one "
           "side or combine them, then approve.")


def _found(pk: str) -> ProposalView:
    try:
        return proposing.get(pk)
    except proposing.NotFound:
        raise Http404(f"There is no proposal {pk[:40]!r}.") from None


def back(request: HttpRequest, value: str | None) -> str:
    """Where to go after a decision: a same-site `next`, else the inbox."""
    nxt = next_url(request, value)
    return nxt if nxt != reverse("review") else reverse("review_proposals")


def page_context(request: HttpRequest) -> dict:
    """What every card needs: may this person act, the Source | Rendered switch, `next`."""
    url = reverse("diff_view_mode")
    here = request.get_full_path()
    toggle = {"current": "rendered" if prefers_prose(request) else "source",
              "source": url + "?" + urlencode({"mode": "source", "next": here}),
              "rendered": url + "?" + urlencode({"mode": "rendered", "next": here})}
    return {"can_act": has_role(request.user, CURATOR), "toggle": toggle, "next": here}


@role_view(VIEWER, "GET")
def inbox(request: HttpRequest) -> HttpResponse:
    form = forms.Filters(request.GET)
    data = valid(form)
    found = proposing.open_proposals(scope=data["scope"] or None,
                                     proposer=data["proposer"] or None,
                                     kind=data["kind"] or None)
    pages = max(1, -(-len(found) // forms.PAGE_SIZE))
    page = min(data["page"] or 1, pages)
    shown = found[(page - 1) * forms.PAGE_SIZE: page * forms.PAGE_SIZE]
    query = form.query()

    def link(n: int) -> str:
        return "?" + urlencode({**query, "page": n})

    ctx = {
        **page_context(request), "filters": data, "query": query,
        "total": len(found), "page": page, "pages": pages,
        "prev_url": link(page - 1) if page > 1 else "",
        "next_url": link(page + 1) if page < pages else "",
        "cards": display.cards(get_store(), shown, prose=prefers_prose(request)),
        "proposers": sorted({p.proposer for p in found}), "kinds": forms.KINDS,
    }
    return render_page(request, T + "inbox.html", ctx, scope=data["scope"] or None)


@role_view(VIEWER, "GET")
def detail(request: HttpRequest, pk: str) -> HttpResponse:
    p = _found(pk)
    store = get_store()
    c = display.card(store, p, prose=prefers_prose(request))
    display.mark_conflicts(store, [c])
    ctx = {**page_context(request), "single": True, "c": c}
    return render_page(request, T + "detail.html", ctx, path=p.path)


def decided(request: HttpRequest, exc: proposing.AlreadyDecided) -> HttpResponse:
    """409: someone decided first; the message says who and when."""
    return error_page(request, display.decided_text(exc.view), 409, title="Already decided",
                      back=reverse("proposal", args=[exc.view.id]))


def _done(request: HttpRequest, pk: str, nxt: str) -> HttpResponse:
    """After a decision: htmx swaps the card (now decided) in place, else a redirect."""
    if request.htmx:
        store = get_store()
        c = display.card(store, proposing.get(pk), prose=prefers_prose(request))
        display.mark_conflicts(store, [c])
        return vary(render(request, T + "_decided_oob.html",
                           {**page_context(request), "c": c, "next": nxt}))
    return HttpResponseRedirect(nxt)


def _approved(request: HttpRequest, p: ProposalView, sha: str) -> None:
    messages.success(request, format_html(
        'Approved the proposal for {} <a href="{}">in commit {}</a>.', p.path,
        reverse("commit", args=[sha]), sha[:8]))


def _changed(request: HttpRequest, p: ProposalView, seen: str) -> HttpResponse | None:
    """409 when the agent extended its proposal after the curator opened it."""
    if seen and seen != display.stamp(p):
        return error_page(request, f"{p.proposer} changed this proposal since you opened "
                          "it: review it again.", 409, title="Changed since",
                          back=reverse("proposal", args=[p.id]))
    return None


@role_view(CURATOR, "POST", htmx=True)
def approve(request: HttpRequest, pk: str) -> HttpResponse:
    data = valid(forms.Approve(request.POST))
    p = _found(pk)
    nxt = back(request, data["next"])
    if (changed := _changed(request, p, data["updated"])) is not None:
        return changed
    actor = actor_of(request)
    try:
        sha = proposing.approve(pk, actor.name, actor.email, recreate=data["recreate"])
    except proposing.AlreadyDecided as exc:
        return decided(request, exc)
    except proposing.MergeConflict:
        return conflict_page(request, _found(pk), nxt)
    except proposing.FileDeleted:
        return deleted_page(request, _found(pk), nxt)
    _approved(request, p, sha)
    return _done(request, pk, nxt)


@role_view(CURATOR, "GET", "POST", htmx=True)
def edit(request: HttpRequest, pk: str) -> HttpResponse:
    """GET: the editor (the conflict view when a stale proposal cannot merge). POST: the
    edited text lands as the approved version."""
    p = _found(pk)
    if not p.available:
        return error_page(request, "This proposal's commits have not reached this instance "
                          "yet: sync, then try again.", 409, title="Not here yet")
    if request.method == "GET":
        return editor_page(request, p, back(request, request.GET.get("next")))
    data = valid(forms.Edited(request.POST))
    nxt = back(request, data["next"])
    text = normalize_text(data["text"])
    if (changed := _changed(request, p, data["updated"])) is not None:
        return changed
    if has_conflict_markers(text):
        return editor_page(request, p, nxt, text=text, error=MARKERS, status=400)
    if data["seen"] and data["seen"] != seen_version(p):
        return conflict_page(request, p, nxt, text=text)
    actor = actor_of(request)
    try:
        # The curator typed this text for the file: a file deleted meanwhile comes back.
        sha = proposing.approve(pk, actor.name, actor.email, edited_text=text, recreate=True)
    except proposing.AlreadyDecided as exc:
        return decided(request, exc)
    except proposing.MergeConflict:
        return conflict_page(request, _found(pk), nxt, text=text)
    _approved(request, p, sha)
    return _done(request, pk, nxt)


@role_view(CURATOR, "GET", "POST", htmx=True)
def reject(request: HttpRequest, pk: str) -> HttpResponse:
    """GET: the reason form (its own page without JavaScript). POST: rejected."""
    p = _found(pk)
    if request.method == "GET":
        return render_page(request, T + "reject.html", {
            **page_context(request), "c": display.card(get_store(), p, prose=False),
            "next": back(request, request.GET.get("next"))}, path=p.path)
    data = valid(forms.Reject(request.POST))
    actor = actor_of(request)
    try:
        proposing.reject(pk, actor.name, data["reason"], approver_email=actor.email)
    except proposing.AlreadyDecided as exc:
        return decided(request, exc)
    messages.success(request, f"Rejected the proposal for {p.path}.")
    return _done(request, pk, back(request, data["next"]))


@role_view(CURATOR, "POST", htmx=True)
def bulk(request: HttpRequest) -> HttpResponse:
    """Approve or reject the selection, one decision each; what could not be decided (a
    conflict, a deleted file, another curator first) stays as it is and is listed."""
    data = valid(forms.Bulk(request.POST))
    actor = actor_of(request)
    done = 0
    skipped: list[str] = []
    for pk in data["id"]:
        try:
            if data["action"] == "approve":
                proposing.approve(pk, actor.name, actor.email)
            else:
                proposing.reject(pk, actor.name, data["reason"], approver_email=actor.email)
            done += 1
        except proposing.NotFound:
            skipped.append(f"{pk} (no such proposal)")
        except proposing.AlreadyDecided as exc:
            skipped.append(f"{pk} ({display.decided_text(exc.view)})")
        except proposing.MergeConflict:
            skipped.append(f"{pk} (conflicts with the current file: open it to resolve)")
        except proposing.FileDeleted:
            skipped.append(f"{pk} (its file was deleted since: open it to decide)")
    verb = "Approved" if data["action"] == "approve" else "Rejected"
    if done:
        messages.success(request, f"{verb} {done} proposal{'s' if done != 1 else ''}.")
    if skipped:
        messages.warning(request, "Left open: " + "; ".join(skipped))
    nxt = back(request, data["next"])
    if request.htmx:
        resp = HttpResponse("")
        resp["HX-Redirect"] = nxt  # the page's cards, counts and pages all change
        return vary(resp)
    return HttpResponseRedirect(nxt)


@role_view(CURATOR, "POST", htmx=True)
def conflict(request: HttpRequest, pk: str) -> HttpResponse:
    """Keep both or dismiss a contradiction candidate (remembered; nothing changes). The
    proposal itself is approved or rejected with its own buttons."""
    data = valid(forms.Conflict(request.POST))
    p = _found(pk)
    if p.status != "open" or not p.available:
        return error_page(request, "This proposal is not open here: there is nothing to "
                          "flag on it.", 409, title="Not open",
                          back=reverse("proposal", args=[p.id]))
    contradictions.decide_proposal(
        get_store(), VERDICTS, user=actor_of(request).name,
        proposal=(p.path, p.current_text, p.proposed_text), statement=data["statement"],
        path=data["path"], digest=data["digest"], choice=data["choice"])
    messages.success(request, "Kept both; this pair is not flagged again."
                     if data["choice"] == contradictions.KEEP
                     else "Dismissed; this pair is not flagged again.")
    return _done(request, pk, back(request, data["next"]))
