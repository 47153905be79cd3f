"""Pages and htmx fragments: which one a request gets, and `Vary: HX-Request` on both.

A view that may answer with a fragment must say so to caches on every answer (the page and
the fragment share a URL), so every helper here patches `Vary: HX-Request`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.vary import vary_on_headers

from memoryui.roles import CURATOR, has_role
from memoryui.web import hierarchy
from memoryui.workspace import get_store

if TYPE_CHECKING:
    from django_htmx.middleware import HtmxDetails

# Decorator form for views that build their own responses (fragments, redirects).
vary_on_htmx = vary_on_headers("HX-Request")


def is_fragment(request: HttpRequest) -> bool:
    """An htmx request that wants a fragment (a history-restore reload wants the page)."""
    htmx: HtmxDetails | None = getattr(request, "htmx", None)  # django_htmx's middleware
    if not htmx:
        return False
    return not htmx.history_restore_request


def vary(response: HttpResponse) -> HttpResponse:
    patch_vary_headers(response, ("HX-Request",))
    return response


def render_page(request: HttpRequest, template: str, ctx: dict, *, status: int = 200,
                path: str | None = None, scope: str | None = None) -> HttpResponse:
    """A full page with the hierarchy sidebar (`path`'s file or `scope` open) and
    `can_curate`; Vary: HX-Request set."""
    ctx = {**hierarchy.sidebar(get_store(), current_path=path, scope=scope), **ctx}
    ctx.setdefault("can_curate", has_role(request.user, CURATOR))
    return vary(render(request, template, ctx, status=status))


def fragment_or_page(request: HttpRequest, page_template: str, fragment_template: str,
                     ctx: dict, *, status: int = 200, fragment_status: int | None = None,
                     sidebar: bool = False, path: str | None = None,
                     scope: str | None = None) -> HttpResponse:
    """The fragment for htmx, else the page; Vary: HX-Request on both.

    `fragment_status` defaults to `status`; pass 200 when a 4xx fragment must still be
    swapped in (htmx drops 4xx bodies). `sidebar=True` renders the page via `render_page`.
    """
    if is_fragment(request):
        code = status if fragment_status is None else fragment_status
        return vary(render(request, fragment_template, ctx, status=code))
    if sidebar:
        return render_page(request, page_template, ctx, status=status, path=path, scope=scope)
    return vary(render(request, page_template, ctx, status=status))
