"""People's roles: viewer < curator < admin. One check used by every view and fragment."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django_htmx.http import HttpResponseClientRedirect

VIEWER, CURATOR, ADMIN = "viewer", "curator", "admin"
RANK = {VIEWER: 1, CURATOR: 2, ADMIN: 3}
ROLES = (VIEWER, CURATOR, ADMIN)


def role_of(user: object) -> str | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    if getattr(user, "is_superuser", False):
        return ADMIN
    profile = getattr(user, "memoryui_profile", None)
    return profile.role if profile is not None else VIEWER


def has_role(user: object, role: str) -> bool:
    have = role_of(user)
    return have is not None and RANK[have] >= RANK[role]


def require_role(role: str) -> Callable:
    """Decorator: anonymous -> login page; signed in without the role -> 403."""

    def deco(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
            if not request.user.is_authenticated:
                login = redirect_to_login(request.get_full_path())
                if getattr(request, "htmx", False):
                    # A 302 would swap the login page into a fragment; send the browser.
                    return HttpResponseClientRedirect(login["Location"])
                return login
            if not has_role(request.user, role):
                raise PermissionDenied(f"this needs the {role} role")
            return view(request, *args, **kwargs)

        wrapped.required_role = role  # type: ignore[attr-defined]
        return wrapped

    return deco
