"""Meaning on the review pages: related memories of an entry or a file, and the lead's
choice about a contradiction candidate (replace the old line, keep both, dismiss).

Thin over `memoryui.review.meaning` and `memoryui.review.contradictions`; the choices are
remembered by `memoryui.review.state.VERDICTS`. Every form works without JavaScript (a POST
and a redirect back); with htmx the touched card is swapped out of band, as after any
review action.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils import timezone

from memoryui import proposing, review
from memoryui.review import contradictions, meaning
from memoryui.review.similar import own_files
from memoryui.review.state import LEDGER, VERDICTS
from memoryui.roles import CURATOR, VIEWER, has_role
from memoryui.search import SearchUnavailable
from memoryui.store import Kind, Store
from memoryui.web.common import BadInput, actor_of, fragment_or_page
from memoryui.web.guards import role_view
from memoryui.web.links import file_url
from memoryui.workspace import get_search_index, get_store

from .forms import EntryKeys
from .helpers import T, base_context, done, next_url, urls, valid

log = logging.getLogger(__name__)
PROPOSALS_ON_FILE_PAGE = 200  # the newest open proposals a file's page compares with it


def mark(store: Store, items: Sequence[review.Item]) -> None:
    """Duplicates by meaning and contradiction candidates on the undecided cards shown."""
    todo = [it for it in items if it.status == "todo"]
    if todo:
        contradictions.mark(store, VERDICTS, todo)


def related_to(text: str, exclude: set[str]) -> list | None:
    """Related memories of `text`, outside the files in `exclude`; None when search by
    meaning is unavailable (no model, no index)."""
    try:
        return meaning.related(get_search_index(), text, exclude)
    except SearchUnavailable as exc:
        log.warning("related memories are unavailable: %s", exc)
        return None


def _one_entry(data: dict) -> Any:
    """The one entry a form names (a card acts on one entry at a time)."""
    if len(data["entry"]) != 1:
        raise BadInput("entry: name exactly one entry")
    return data["entry"][0]


class RelatedQuery(forms.Form):
    entry = EntryKeys(required=False)
    next = forms.CharField(required=False, max_length=2000)


@role_view(VIEWER, "GET", htmx=True)
def related(request: HttpRequest) -> HttpResponse:
    """An entry's related memories: the card's lazy fragment, or a page of its own."""
    store = get_store()
    data = valid(RelatedQuery(request.GET))
    (it,) = review.resolve(store, LEDGER, [_one_entry(data)])
    own = [p for p, _stamp in own_files(store, it.scope)]  # its card compares with it already
    ctx = {"it": it, "related": related_to(it.entry.text, {it.path, *own}),
           **base_context(request, store, next_url(request, data["next"]))}
    return fragment_or_page(request, T + "related.html", T + "_related.html", ctx)


class Choice(forms.Form):
    entry = EntryKeys()
    path = forms.CharField(max_length=1024)
    digest = forms.RegexField(regex=r"^[0-9a-f]{16}$", error_messages={
        "invalid": "not a line reference; reload the page"})
    choice = forms.ChoiceField(choices=[(c, c) for c in contradictions.CHOICES], error_messages={
        "invalid_choice": "choose replace, keep or dismiss"})
    next = forms.CharField(required=False, max_length=2000)


@role_view(CURATOR, "POST", htmx=True)
def conflict(request: HttpRequest) -> HttpResponse:
    """Replace the old line with the entry (a commit), keep both, or dismiss (remembered)."""
    store = get_store()
    data = valid(Choice(request.POST))
    key, path, digest, choice = _one_entry(data), data["path"], data["digest"], data["choice"]
    nxt = next_url(request, data["next"])
    if choice == contradictions.REPLACE:
        sha = contradictions.replace(store, LEDGER, VERDICTS, actor=actor_of(request),
                                     key=key, path=path, digest=digest)
        said = f"Replaced the line of {path} with the entry (commit {sha[:8]})."
    else:
        contradictions.decide(store, LEDGER, VERDICTS, user=actor_of(request).name, key=key,
                              path=path, digest=digest, choice=choice)
        said = ("Kept both; this pair is not flagged again." if choice == contradictions.KEEP
                else "Dismissed; this pair is not flagged again.")
    messages.success(request, said)
    if request.htmx:
        items = review.resolve(store, LEDGER, [key], missing_ok=True)
        mark(store, items)
        return done(request, items, nxt)
    return HttpResponseRedirect(nxt)


class FileMeaningQuery(forms.Form):
    path = forms.CharField(max_length=1024)


@role_view(VIEWER, "GET", htmx=True)
def file_meaning(request: HttpRequest) -> HttpResponse:
    """What meaning says about a curated file: contradiction candidates among recent entries
    and related memories elsewhere. The file's page loads it as a lazy fragment (embedding
    the file takes longer than the page itself); without JavaScript it is a page of its own."""
    store = get_store()
    path = valid(FileMeaningQuery(request.GET))["path"]
    text = store.read(path)
    addr = store.address_of(path)
    if text is None or not has_meaning_panels(addr.kind if addr else None):
        raise Http404(f"{path[:200]} is not a curated file")
    found = contradictions.in_file(store, LEDGER, VERDICTS, path, timezone.localdate())
    ctx = {"path": path, "related": related_to(text, {path}), "contradictions": found or [],
           "proposed": proposed_against(store, path),
           "can_act": has_role(request.user, CURATOR), "urls": urls(),
           "next": file_url(path)}
    return fragment_or_page(request, T + "file_meaning.html", T + "_file_meaning.html", ctx)


def proposed_against(store: Store, path: str) -> list[tuple[dict, Any]]:
    """({"p": proposal}, candidate): statements of the newest open proposals that may
    contradict a line of `path`, as a proposal card draws them; the lead decides on the
    proposal's own page."""
    views = proposing.open_proposals()[-PROPOSALS_ON_FILE_PAGE:]
    found = contradictions.against_file(store, VERDICTS, path, [
        (v.path, v.current_text, v.proposed_text) for v in views])
    return [({"p": views[i]}, c) for i, c in found]


def has_meaning_panels(kind: Kind | None) -> bool:
    """Whether a file's page offers related memories and contradictions (not a daily log:
    its entries have their own on the review cards)."""
    return kind is not None and kind != Kind.DAILY
