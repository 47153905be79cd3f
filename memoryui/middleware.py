"""Cross-cutting HTTP guards: body size before parsing, CSP and security headers."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

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
