"""Bearer-token authentication and the JSON error body shared by every API endpoint."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path

from django.conf import settings
from django.db.models.signals import post_delete, post_save
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from memoryui.caches import TOKENS
from memoryui.models import Token, hash_token
from memoryui.throttle import Throttled, check_token_address, token_failed


def error(code: str, message: str, status: int, **extra: object) -> JsonResponse:
    """DESIGN.md section 4: `{"error": {"code", "message"}}` with a matching status."""
    body: dict = {"error": {"code": code, "message": message, **extra}}
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def unauthorized(message: str) -> JsonResponse:
    """401 with the `WWW-Authenticate: Bearer` challenge RFC 6750 asks for."""
    resp = error("unauthorized", message, 401)
    resp["WWW-Authenticate"] = 'Bearer realm="memoryui"'
    return resp


def too_many(exc: Throttled) -> JsonResponse:
    """429 with Retry-After: this address failed to authenticate too often."""
    resp = error("too_many_requests", str(exc), 429, retry_after=exc.retry_after)
    resp["Retry-After"] = str(exc.retry_after)
    return resp


def bearer(request: HttpRequest) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")  # (request.headers copies them all)
    kind, _, value = header.partition(" ")
    if kind.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


# Agents call a tool per step: looking the token up in the database each time was the
# largest piece of an API request after the tool itself (a connection and a query). Tokens
# are kept for MEMORYUI_TOKEN_CACHE seconds; a token created, changed or revoked in this
# instance bumps a generation file every worker checks (one stat), so a revocation here
# takes effect at once, and one made by another instance sharing the database within the TTL
# (the tokens are kept in `caches.TOKENS`).


def _generation_file() -> str:
    return os.path.join(settings.VAR_DIR, "tokens.generation")  # (a string: read per call)


def generation() -> int:
    """The tokens' (and write policies') generation: it moves when one changes here."""
    try:
        return os.stat(_generation_file()).st_mtime_ns
    except OSError:
        return 0


def bump_generation(**_: object) -> None:
    """Tokens changed: every worker of this instance forgets the tokens it kept."""
    path = Path(_generation_file())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{time.time_ns()}\n")
    except OSError:
        pass
    TOKENS.clear()


post_save.connect(bump_generation, sender=Token, dispatch_uid="memoryui-token-gen-save")
post_delete.connect(bump_generation, sender=Token, dispatch_uid="memoryui-token-gen-delete")


def _cached(raw: str) -> Token | None:
    """The token when this worker verified it within MEMORYUI_TOKEN_CACHE seconds."""
    ttl = settings.MEMORYUI_TOKEN_CACHE
    if ttl <= 0:
        return None
    hit = TOKENS.get(hash_token(raw))
    if hit is not None and hit[2] == generation() and time.monotonic() - hit[1] < ttl:
        return hit[0]
    return None


def _authenticate(raw: str) -> Token | None:
    ttl = settings.MEMORYUI_TOKEN_CACHE
    if ttl <= 0:
        return Token.authenticate(raw)
    key, now, gen = hash_token(raw), time.monotonic(), generation()
    tok = Token.authenticate(raw)
    if tok is None:
        TOKENS.pop(key)
    else:
        TOKENS.put(key, (tok, now, gen))
    return tok


def token_for(raw: str | None, request: HttpRequest) -> Token | None:
    """The active token for a raw bearer value (and note when it was last used).

    A value that does not verify counts against the request's address (memoryui.throttle);
    an address over the limit gets Throttled for any token not verified lately, the right
    one included, so guessing gains nothing.
    """
    if not raw:
        return None
    tok = _cached(raw)
    if tok is None:
        check_token_address(request)
        tok = _authenticate(raw)
        if tok is None:
            token_failed(request)
            return None
    now = timezone.now()
    if tok.last_used_at is None or (now - tok.last_used_at).total_seconds() > 60:
        Token.objects.filter(pk=tok.pk).update(last_used_at=now)
        tok.last_used_at = now
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
            try:
                tok = token_for(raw, request)
            except Throttled as exc:
                return too_many(exc)
            if tok is None:
                return unauthorized("invalid or revoked token")
            if admin and not tok.is_admin:
                return error("forbidden", "Insufficient permissions: this needs an admin token",
                             403)
            request.token = tok
            return view(request, *args, **kwargs)

        wrapped.csrf_exempt = True  # type: ignore[attr-defined]
        return wrapped

    return deco
