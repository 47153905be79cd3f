"""Cross-cutting HTTP guards: body size before parsing, CSP and security headers, and the
last word on unexpected errors (JSON for API clients, a readable page for people, a log
line with the traceback either way)."""

from __future__ import annotations

import errno
import logging
import sys
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


class BodyLimitMiddleware:
    """413 for bodies over MEMORYUI_MAX_BODY, decided from Content-Length before parsing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.MEMORYUI_MAX_BODY
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            return too_large(request, limit)
        return self.get_response(request)


def too_large(request: HttpRequest, limit: int) -> HttpResponse:
    message = f"request body is larger than {limit} bytes"
    if request.path.startswith("/api/") or request.path.startswith("/mcp"):
        return JsonResponse({"error": {"code": "payload_too_large", "message": message}},
                            status=413)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


class SecurityHeadersMiddleware:
    """A strict Content-Security-Policy on every response: no inline scripts or styles."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        return response


# -- unexpected errors ----------------------------------------------------------------------

request_log = logging.getLogger("django.request")
DISK_FULL = "the workspace disk is full"


def is_api(request: HttpRequest) -> bool:
    """Paths whose clients parse `{"error": {"code", "message"}}`, never an HTML page."""
    return request.path.startswith(("/api/", "/mcp"))


def is_disk_full(exc: BaseException | None) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def unexpected(exc: BaseException | None) -> tuple[int, str, str]:
    """(status, code, message) for an exception no view expected."""
    if is_disk_full(exc):
        return 507, "insufficient_storage", DISK_FULL
    return 500, "internal_error", ("internal server error: the server could not finish this "
                                   "request; the error is in the server log")


def log_unexpected(request: HttpRequest, exc: BaseException, status: int) -> None:
    """One line with the traceback on `django.request`: method and path, never the body,
    the query string or headers (tokens and memory text stay out of the log)."""
    request_log.error("%s %s failed (%d)", request.method, request.path, status,
                      exc_info=(type(exc), exc, exc.__traceback__),
                      extra={"status_code": status})


def json_error(exc: BaseException | None) -> JsonResponse:
    """The documented error body for an exception no view expected."""
    status, code, message = unexpected(exc)
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


class ApiErrorMiddleware:
    """Any exception escaping an API view becomes a JSON 500 (or 507 when the disk is
    full), logged with its traceback."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not is_api(request):
            return None  # Django logs it and renders templates/500.html
        response = json_error(exc)
        log_unexpected(request, exc, response.status_code)
        response._has_been_logged = True  # type: ignore[attr-defined] - no second line
        return response


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: errors outside a view (middleware, URL resolution). Django has already
    logged the exception; API paths get JSON, people the stand-alone 500 page."""
    if is_api(request):
        return json_error(sys.exc_info()[1])
    return HttpResponse(loader.get_template("500.html").render(), status=500)
