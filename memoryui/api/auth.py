"""Bearer-token authentication and the JSON error body shared by every API endpoint."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from memoryui.models import Token


def error(code: str, message: str, status: int, **extra: object) -> JsonResponse:
    """DESIGN.md section 4: `{"error": {"code", "message"}}` with a matching status."""
    body: dict = {"error": {"code": code, "message": message, **extra}}
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def unauthorized(message: str) -> JsonResponse:
    """401 with the `WWW-Authenticate: Bearer` challenge RFC 6750 asks for."""
    resp = error("unauthorized", message, 401)
    resp["WWW-Authenticate"] = 'Bearer realm="memoryui"'
    return resp


def bearer(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    kind, _, value = header.partition(" ")
    if kind.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def token_for(raw: str | None) -> Token | None:
    """The active token for a raw bearer value (and note when it was last used)."""
    if not raw:
        return None
    tok = Token.authenticate(raw)
    if tok is not None:
        now = timezone.now()
        if tok.last_used_at is None or (now - tok.last_used_at).total_seconds() > 60:
            Token.objects.filter(pk=tok.pk).update(last_used_at=now)
    return tok


def require_token(admin: bool = False) -> Callable:
    """Decorator: 401 without a valid token; 403 when `admin` is needed and missing.

    The token is put on `request.token`. Scope checks belong to the view, which knows
    the scope it acts on (`token.may_act_for(scope)`).
    """

    def deco(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            raw = bearer(request)
            if raw is None:
                return unauthorized("Authentication required: send "
                                    "'Authorization: Bearer <token>'")
            tok = token_for(raw)
            if tok is None:
                return unauthorized("invalid or revoked token")
            if admin and not tok.is_admin:
                return error("forbidden", "Insufficient permissions: this needs an admin token",
                             403)
            request.token = tok  # type: ignore[attr-defined]
            return view(request, *args, **kwargs)

        wrapped.csrf_exempt = True  # type: ignore[attr-defined]
        return wrapped

    return deco
