"""`{% proposals_count_badge %}` (the header, the Review tabs): how many proposals wait,
from one database count (never a walk of git); `{% scope_proposals scope %}` (the scope
page: its open proposals and its write policies); `{% proposals_summary %}` (the overview);
`{% proposal_events filters %}` (the activity page)."""

from __future__ import annotations

from urllib.parse import urlencode

from django import template
from django.template.loader import get_template
from django.urls import reverse

from memoryui import proposing
from memoryui.web.policies.marks import marks

from .events import day_of, events

register = template.Library()


def _signed_in(context: template.Context) -> bool:
    user = getattr(context.get("request"), "user", None)
    return user is not None and user.is_authenticated


@register.simple_tag(takes_context=True)
def proposals_count_badge(context: template.Context) -> str:
    """The open-proposal count as a badge, or nothing when none wait (or nobody signed in)."""
    n = proposing.open_count() if _signed_in(context) else 0
    return get_template("web/proposals/_count.html").render({"n": n}) if n else ""


@register.inclusion_tag("web/proposals/_scope.html")
def scope_proposals(scope: str) -> dict:
    return {"n": proposing.open_count(scope), "scope": scope, "marks": marks(scope),
            "inbox": reverse("review_proposals") + "?" + urlencode({"scope": scope})}


@register.inclusion_tag("web/proposals/_summary.html")
def proposals_summary() -> dict:
    return {"n": proposing.open_count(), "inbox": reverse("review_proposals")}


@register.inclusion_tag("web/proposals/_events.html")
def proposal_events(filters: object, limit: int = 10) -> dict:
    """The activity page's proposals (its first page only), under the page's filters."""
    get = lambda name: str(getattr(filters, name, "") or "")  # noqa: E731
    actor = get("actor").split(":", 1)[-1]
    return {"events": events(limit, scope=get("scope") or None, kind=get("kind") or None,
                             actor=actor or None, who=get("who") or None,
                             since=day_of(get("since")), until=day_of(get("until"))),
            "inbox": reverse("review_proposals")}
