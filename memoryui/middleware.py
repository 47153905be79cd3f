"""Cross-cutting HTTP guards: body size before parsing, CSP and security headers, and the
last word on unexpected errors (JSON for API clients, a readable page for people, a log
line with the traceback either way)."""

from __future__ import annotations

import errno
import logging
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse, JsonResponse
from django_htmx.middleware import HtmxMiddleware
from whitenoise.middleware import WhiteNoiseMiddleware

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


# -- the browser's middleware, for pages only ---------------------------------------------


def pages_only(middleware: type) -> type:
    """`middleware` that API and MCP requests go straight past: they carry a bearer token and
    read JSON, so static files, sessions, sign-in, flash messages and htmx have nothing to do
    there, and an agent's call does not pay for them. The middleware it wraps have no view,
    exception or template hooks (the handler would call those on every path)."""

    class PagesOnly(middleware):
        def __call__(self, request: HttpRequest) -> HttpResponse:
            if is_api(request):
                return self.get_response(request)
            return super().__call__(request)

    PagesOnly.__name__ = PagesOnly.__qualname__ = middleware.__name__
    PagesOnly.__doc__ = middleware.__doc__
    return PagesOnly


PageStaticFiles = pages_only(WhiteNoiseMiddleware)
PageSessions = pages_only(SessionMiddleware)
PageAuthentication = pages_only(AuthenticationMiddleware)
PageMessages = pages_only(MessageMiddleware)
PageHtmx = pages_only(HtmxMiddleware)


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


# The code an API client reads for each status Django (or a view's decorator) answers with.
CODES = {400: "invalid_arguments", 401: "unauthorized", 403: "forbidden", 404: "not_found",
         405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type",
         429: "too_many_requests", 507: "insufficient_storage"}


def json_answer(status: int, message: str) -> JsonResponse:
    """`{"error": {"code", "message"}}` for a status, its code from CODES."""
    code = CODES.get(status, "invalid_arguments" if status < 500 else "internal_error")
    return JsonResponse({"error": {"code": code, "message": message}}, status=status,
                        json_dumps_params={"ensure_ascii": False})


# Headers an error answer keeps when its body is turned into JSON.
KEPT = ("Allow", "WWW-Authenticate", "Retry-After", "Vary", "Cache-Control")


def as_json(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """An error answer Django made without a view (a 405 from a method decorator, a plain
    text refusal) as the API's JSON body, with the same status and headers that matter."""
    if response.status_code == 405:
        message = (f"{request.method} is not allowed here; use "
                   f"{response.get('Allow', 'another method')}")
    elif response.get("Content-Type", "").startswith("text/plain") and not response.streaming:
        message = response.content.decode("utf-8", "replace").strip()[:500]
    else:
        message = response.reason_phrase.lower()
    answer = json_answer(response.status_code, message or response.reason_phrase.lower())
    for name in KEPT:
        if name in response:
            answer[name] = response[name]
    return answer


class ApiErrorMiddleware:
    """Every answer under /api/ and /mcp is JSON: an exception escaping an API view becomes
    a JSON 500 (or 507 when the disk is full), logged with its traceback; an error answer
    in another shape (Django's 405, a plain-text refusal) is given the JSON body."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code >= 400 and is_api(request) and not response.get(
                "Content-Type", "").startswith("application/json"):
            return as_json(request, response)
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not is_api(request):
            return None  # Django logs it and renders templates/500.html
        response = json_error(exc)
        log_unexpected(request, exc, response.status_code)
        response._has_been_logged = True  # no second line
        return response
