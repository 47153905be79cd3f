"""The decorators a view wears, composed once: an area names its guards in one place and each
view wears them in one line, in the same order every time."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpResponse
from django.views.decorators.http import require_http_methods

from memoryui.roles import require_role
from memoryui.web.common import vary_on_htmx, web_errors

View = Callable[..., HttpResponse]
Decorator = Callable[[View], View]


def stack(*decorators: Decorator) -> Decorator:
    """The decorators as one, outermost first: `@stack(a, b)` is `@a` written above `@b`."""

    def deco(view: View) -> View:
        for decorator in reversed(decorators):
            view = decorator(view)
        return view

    return deco


def role_view(role: str, *methods: str, htmx: bool = False) -> Decorator:
    """A page or an action, outermost first: the role (anonymous: the login page; lacking
    it: 403), the HTTP methods (else 405), `Vary: HX-Request` when `htmx` (the view answers
    htmx with a fragment), and refusals as error pages (`web_errors`)."""
    guards = [require_role(role), require_http_methods(list(methods))]
    if htmx:
        guards.append(vary_on_htmx)
    return stack(*guards, web_errors)
