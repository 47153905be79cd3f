"""The sign-in page when django-axes refuses a sign-in (AXES_LOCKOUT_CALLABLE)."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from memoryui.throttle import retry_after, wait_text


def locked_out(request: HttpRequest, original_response: HttpResponse | None = None,
               credentials: dict | None = None) -> HttpResponse:
    """The sign-in page again (429, Retry-After), saying when to try again; the form stays
    filled in, so the person signs in from the same page once the time has passed."""
    wait = retry_after(request, credentials)
    until = timezone.localtime(timezone.now() + dt.timedelta(seconds=wait))
    ctx = dict(getattr(original_response, "context_data", None) or {})
    ctx.setdefault("form", AuthenticationForm(request, data=request.POST))
    ctx.setdefault("next", request.POST.get("next", ""))
    ctx["locked"] = (f"Too many failed sign-ins for this user name or from this address. "
                     f"Try again in {wait_text(wait)}, after {until:%H:%M} "
                     f"({until.tzname()}), or ask an admin to unlock it.")
    response = render(request, "registration/login.html", ctx, status=429)
    response["Retry-After"] = str(wait)
    return response
