"""`{% proposals_count_badge %}` (the header, the Review tabs, the scope page, the overview):
how many proposals wait, from one database count (never a walk of git)."""

from __future__ import annotations

from django import template
from django.template.loader import get_template

from memoryui import proposing

register = template.Library()


@register.simple_tag(takes_context=True)
def proposals_count_badge(context: template.Context, scope: str = "") -> str:
    """The open-proposal count as a badge, or nothing when none wait (or nobody signed in)."""
    user = getattr(context.get("request"), "user", None)
    if user is None or not user.is_authenticated:
        return ""
    n = proposing.open_count(scope or None)
    if not n:
        return ""
    return get_template("web/proposals/_count.html").render({"n": n, "scope": scope})
