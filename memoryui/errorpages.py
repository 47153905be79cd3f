"""Django's own error answers (handler400/403/404/500 and error statuses Django makes without
a view): JSON for API clients, the styled pages for people.

An API client is any request under /api/ or /mcp, or one whose Accept header prefers JSON
to HTML; it gets the documented `{"error": {"code", "message"}}` body, never an HTML page.
"""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader
from django.utils.cache import patch_vary_headers

from memoryui.middleware import is_api, json_answer, json_error

# The UI's one error page (web/common/errors.py renders it for the views' refusals).
ERROR_TEMPLATE = "web/error.html"

MESSAGES = {400: "bad request: the server could not read this request",
            403: "permission denied", 404: "not found",
            405: "this method is not allowed here"}


def wants_json(request: HttpRequest) -> bool:
    """API paths, and clients that ask for JSON before HTML."""
    if is_api(request):
        return True
    try:
        return request.get_preferred_type(["text/html", "application/json"]) == (
            "application/json")
    except ValueError:  # an Accept header Django cannot parse is no preference
        return False


def _message(exception: BaseException | None, status: int) -> str:
    """The exception's own sentence when it has one (Http404("no such file")), else the
    status's plain one. Django's resolver 404 carries a dict of tried patterns: not shown."""
    text = str(exception.args[0]) if exception and exception.args and isinstance(
        exception.args[0], str) else ""
    return text or MESSAGES[status]


def _negotiated(response: HttpResponse) -> HttpResponse:
    patch_vary_headers(response, ("Accept",))
    return response


def page_not_found(request: HttpRequest, exception: BaseException | None = None
                   ) -> HttpResponse:
    """handler404: an unknown URL or a view's Http404."""
    message = _message(exception, 404)
    if wants_json(request):
        return _negotiated(json_answer(404, message))
    return _negotiated(render(request, ERROR_TEMPLATE, {
        "title": "Not found", "status": 404,
        "message": f"There is no page at {request.path}." if message == MESSAGES[404]
        else message}, status=404))


def permission_denied(request: HttpRequest, exception: BaseException | None = None
                      ) -> HttpResponse:
    """handler403: a role check (memoryui.roles); templates/403.html says
    which role the person has and who can grant more."""
    if wants_json(request):
        return _negotiated(json_answer(403, _message(exception, 403)))
    return _negotiated(render(request, "403.html", {"exception": _message(exception, 403)},
                              status=403))


def bad_request(request: HttpRequest, exception: BaseException | None = None) -> HttpResponse:
    """handler400: a request Django could not read (a bad Host, a broken multipart body).
    templates/400.html stands alone: this can happen before sessions or sign-in ran."""
    if wants_json(request):
        return _negotiated(json_answer(400, MESSAGES[400]))
    return _negotiated(HttpResponse(loader.get_template("400.html").render(), status=400))


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: errors outside a view (middleware, URL resolution). Django has already
    logged the exception; API clients get JSON, people the stand-alone 500 page."""
    if wants_json(request):
        return _negotiated(json_error(sys.exc_info()[1]))
    return _negotiated(HttpResponse(loader.get_template("500.html").render(), status=500))
