"""Throttling failed authentication with django-axes (settings: MEMORYUI_LOGIN_FAILURES,
MEMORYUI_LOGIN_COOLOFF).

One record of failures serves both doors: a person's failed sign-in counts against the user
name and against the address; a bearer token that fails (on /api, /mcp, the Atom feed)
names no user and counts against the address alone. Once either count reaches the limit
within the cool-off, that name or address is refused, even with the right password or token,
until the cool-off has passed since its last failure. `manage.py axes_reset_username NAME`,
`axes_reset_ip ADDRESS` and `axes_reset` lift it (docs/operations.md).
"""

from __future__ import annotations

import math

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off
from django.conf import settings
from django.db.models import Max
from django.http import HttpRequest
from django.utils import timezone

# The credentials axes records for a bearer token: no user name, counted per address.
TOKEN = {"username": None, "bearer": True}


class Throttled(Exception):
    """Too many failed authentications: refused for `retry_after` more seconds."""

    def __init__(self, retry_after: int):
        super().__init__(f"too many failed authentications from this address; try again "
                         f"in {wait_text(retry_after)}")
        self.retry_after = retry_after


def lockout_parameters(request: object, credentials: dict | None) -> list[str]:
    """AXES_LOCKOUT_PARAMETERS: per user name and per address, each on its own; a token's
    failures (no user name) per address only (a name of None would match them all)."""
    if credentials and credentials.get("bearer"):
        return ["ip_address"]
    return ["username", "ip_address"]


def retry_after(request: HttpRequest, credentials: dict | None) -> int:
    """Seconds until the cool-off after the latest failure that counts against this
    request's name or address has passed (at least 1)."""
    handler = AxesProxyHandler.get_implementation()
    AxesProxyHandler.update_request(request)
    latest = [qs.aggregate(t=Max("attempt_time"))["t"]
              for qs in handler.get_user_attempts(request, credentials)]
    cool_off = get_cool_off(request)
    seen = [t for t in latest if t is not None]
    if not seen or cool_off is None:
        return 1
    return max(1, math.ceil((max(seen) + cool_off - timezone.now()).total_seconds()))


def wait_text(seconds: int) -> str:
    """"12 minutes", "40 seconds": how long a person waits, rounded up."""
    if seconds < 90:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minutes"


def check_token_address(request: HttpRequest) -> None:
    """Throttled when the request's address has failed too often with tokens or sign-ins."""
    if settings.AXES_ENABLED and AxesProxyHandler.is_locked(request, TOKEN):
        raise Throttled(retry_after(request, TOKEN))


def token_failed(request: HttpRequest) -> None:
    """Count a token that did not verify against the request's address; Throttled when
    that failure reaches the limit (as the failed sign-in that does gets the lockout page)."""
    if not settings.AXES_ENABLED:
        return
    AxesProxyHandler.user_login_failed(sender=__name__, credentials=TOKEN, request=request)
    if getattr(request, "axes_locked_out", False):
        request.axes_locked_out = False  # answered here, as JSON
        raise Throttled(retry_after(request, TOKEN))
