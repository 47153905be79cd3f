"""One way every UI area answers a refusal: a readable page (or an htmx flash) with a 4xx.

Store errors carry their own status (400, 404, 409, 413, 507 for a full disk); a request
parameter a person can correct is `BadInput` (400). Nothing here is ever a 500: unexpected
errors are left to Django, which renders templates/500.html and logs the traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from memoryui.store import StoreError
from memoryui.web import hierarchy
from memoryui.workspace import get_store

ERROR_TEMPLATE = "web/error.html"
TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 409: "Conflict",
          413: "Too large", 507: "The disk is full"}


class BadInput(Exception):
    """A request parameter a person can correct; answered with a 400 and the message."""

    status = 400


def first_error(form: object, fallback: str = "") -> str:
    """One message for a refusal: the form's first problem, as the person should read it."""
    for errs in form.errors.values():  # type: ignore[attr-defined]
        return str(errs[0])
    return fallback


def cleaned(form: object) -> dict:
    """The form's cleaned data, or BadInput (400) with its first problem."""
    if not form.is_valid():  # type: ignore[attr-defined]
        raise BadInput(first_error(form))
    return form.cleaned_data  # type: ignore[attr-defined]


def error_page(request: HttpRequest, message: str, status: int = 400, *,
               title: str | None = None, back: str | None = None) -> HttpResponse:
    """The error page, or for an htmx request the message as a flash swapped out of band.

    htmx does not swap 4xx answers by default; `HX-Reswap: none` marks this one as "only
    the message area changes", which app.js lets through.
    """
    htmx = getattr(request, "htmx", None)
    if htmx and not htmx.history_restore_request:
        messages.error(request, message)
        response = render(request, "_messages.html", {"oob": True}, status=status)
        response["HX-Reswap"] = "none"
    else:
        ctx = {"title": title or TITLES.get(status, "Cannot do that"), "message": message,
               "status": status, "back": back, "changed_nothing": request.method == "POST",
               **_sidebar()}
        response = render(request, ERROR_TEMPLATE, ctx, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def _sidebar() -> dict:
    """The hierarchy sidebar, unless reading the workspace is itself what fails (a full
    disk, a broken store): an error page must render whatever state the store is in."""
    try:
        return hierarchy.sidebar(get_store())
    except (OSError, StoreError):
        return {}


def web_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Store refusals, bad parameters and "not found" become `error_page`, never a 500.

    PermissionDenied is left to Django (templates/403.html), like role checks.
    """

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except PermissionDenied:
            raise
        except BadInput as exc:
            return error_page(request, str(exc), 400)
        except Http404 as exc:
            return error_page(request, str(exc) or "not found", 404)
        except StoreError as exc:
            return error_page(request, str(exc), getattr(exc, "status", 400) or 400)

    return wrapped
