"""What every review view shares: validated input, the way back, the fixed URLs, the
target choosers, and the answer after an action (entries swapped out of band for htmx)."""

from __future__ import annotations

from urllib.parse import quote

from django import forms as django_forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from memoryui import review
from memoryui.review.state import LEDGER
from memoryui.roles import CURATOR, has_role
from memoryui.store import Kind, Store
from memoryui.store.layout import KIND_LABELS
from memoryui.web.common import BadInput, vary
from memoryui.workspace import get_store

from .counts import after_action

T = "web/review/"
RECENT = 8


def valid(form: django_forms.Form) -> dict:
    """The form's cleaned data, or BadInput (400) naming the first bad field."""
    if not form.is_valid():
        field, errors = next(iter(form.errors.items()))
        raise BadInput(f"{field}: {errors[0]}" if field != "__all__" else errors[0])
    return form.cleaned_data


def next_url(request: HttpRequest, value: str | None) -> str:
    """Where to go back to: a same-site path only (never an open redirect)."""
    if value and value.startswith("/") and url_has_allowed_host_and_scheme(
            value, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return value
    return reverse("review")


def urls() -> dict[str, str]:
    """The area's fixed URLs, reversed once per request (an entry card uses several)."""
    return {name: reverse(f"review_{name}") for name in
            ("entry", "promote", "dismiss", "dismiss_confirm", "reopen", "related",
             "contradiction")} | {
        "queue": reverse("review"), "preview": reverse("preview")}


def choices(store: Store) -> dict:
    """What the target choosers offer in this layout."""
    kinds = review.target_kinds(store)
    default = review.default_kind(store)
    return {
        "target_kinds": [(k.value, "MEMORY.md of a scope" if k == Kind.MEMORY
                          else KIND_LABELS[k]) for k in kinds],
        "kind_values": [k.value for k in kinds],
        "default_kind": default.value if default else "",
        "world_names": review.existing_names(store, Kind.WORLD),
        "skill_names": review.existing_names(store, Kind.SKILL),
    }


def base_context(request: HttpRequest, store: Store, nxt: str) -> dict:
    return {"can_act": has_role(request.user, CURATOR), "next": nxt,
            "next_q": quote(nxt, safe=""), "urls": urls(), **choices(store)}


def done(request: HttpRequest, items: list[review.Item], nxt: str, *,
         bulk_done: bool = False, recent: bool = False) -> HttpResponse:
    """htmx: every touched entry (and the message area) swapped out of band."""
    store = get_store()
    ctx = {"items": items, "bulk_done": bulk_done, **base_context(request, store, nxt),
           **after_action(request, store)}
    if recent:
        ctx["recent"] = LEDGER.recent(RECENT)
        ctx["show_recent"] = True
    resp = render(request, T + "_entries_oob.html", ctx)
    resp["HX-Reswap"] = "none"
    return vary(resp)


def finish(request: HttpRequest, items: list[review.Item], nxt: str, text: str, **kw: bool
           ) -> HttpResponse:
    """After an action: the flash, then the swapped entries (htmx) or a redirect."""
    messages.success(request, text)
    if request.htmx:
        return done(request, items, nxt, **kw)
    return HttpResponseRedirect(nxt)


def count(n: int) -> str:
    return "1 entry" if n == 1 else f"{n} entries"
