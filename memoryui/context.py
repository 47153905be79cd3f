"""Template context shared by every page."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from memoryui.roles import role_of


def memoryui(request: HttpRequest) -> dict:
    user = getattr(request, "user", None)
    return {
        "memoryui_layout": settings.MEMORYUI_LAYOUT,
        "user_role": role_of(user) if user is not None else None,
    }
