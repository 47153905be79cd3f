"""Browse-area template helpers any page can load: the sidebar and relative times.

`{% load memoryui_browse %}` then `{% sidebar path=some_path %}` or
`{% sidebar scope=some_scope %}` renders the workspace hierarchy (web/_sidebar.html);
`{{ when|ago }}` prints "5 minutes ago" (a datetime or a Unix time).
"""

from __future__ import annotations

import datetime as dt

from django import template
from django.utils import timezone
from django.utils.html import format_html

from memoryui.web import hierarchy
from memoryui.workspace import get_store

register = template.Library()


@register.inclusion_tag("web/_sidebar.html", takes_context=True)
def sidebar(context: template.Context, path: str | None = None,
            scope: str | None = None) -> dict:
    """The hierarchy sidebar with `path`'s file (or `scope`) expanded."""
    request = context.get("request")
    cache = getattr(request, "_memoryui_sidebar", None) if request is not None else None
    key = (path or "", scope or "")
    if cache and key in cache:
        return cache[key]
    ctx = hierarchy.sidebar(get_store(), current_path=path, scope=scope)
    if request is not None:
        request._memoryui_sidebar = {**(cache or {}), key: ctx}
    return ctx


def _as_datetime(value: object) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if timezone.is_aware(value) else value.replace(tzinfo=dt.UTC)
    if isinstance(value, int | float) and value > 0:
        return dt.datetime.fromtimestamp(value, tz=dt.UTC)
    return None


@register.filter
def ago(value: object) -> str:
    """A short relative time ("3 hours ago"); older than a month: the date."""
    when = _as_datetime(value)
    if when is None:
        return ""
    seconds = (timezone.now() - when).total_seconds()
    if seconds < 0:
        return "in the future" if seconds < -60 else "just now"
    if seconds < 45:
        return "just now"
    for limit, size, unit in ((3600, 60, "minute"), (86400, 3600, "hour"),
                              (86400 * 30, 86400, "day")):
        if seconds < limit:
            n = max(1, round(seconds / size))
            if unit == "day" and n == 1:
                return "yesterday"
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return f"on {when:%Y-%m-%d}"


@register.filter
def isotime(value: object) -> str:
    """ISO 8601 for `<time datetime=...>`."""
    when = _as_datetime(value)
    return when.isoformat() if when else ""


@register.filter
def fulltime(value: object) -> str:
    when = _as_datetime(value)
    return f"{when:%Y-%m-%d %H:%M} UTC" if when else ""


# Small markup pieces used in long lists (a table row per file): simple tags, because an
# {% include %} per row costs more than the rest of the row on a 20,000-file workspace.


@register.simple_tag
def actor(c: object) -> str:
    """An actor badge for anything with `.actor` ("agent:x", "user:y", "git:z")."""
    value = getattr(c, "actor", "") or ""
    kind, _, name = value.partition(":")
    name = name or value
    if kind == "agent":
        return format_html('<span class="badge badge-agent" title="agent {}">{}</span>',
                           name, name)
    if kind == "user":
        return format_html('<span class="badge badge-person" title="person {}">{}</span>',
                           name, name)
    return format_html('<span class="badge" title="{}">{}</span>', value, name)


@register.simple_tag
def change(c: object, subject: bool = False) -> str:
    """When and by whom a file last changed, optionally with a link to the commit."""
    if not c:
        return format_html('<span class="muted">{}</span>', "not committed yet")
    t = getattr(c, "time", 0)
    link = format_html(' <a class="mono" href="/commit/{}/" title="{}">{}</a>', c.sha,
                       c.subject, c.sha[:8]) if subject else ""
    return format_html('<span class="change"><time datetime="{}" title="{}">{}</time> {}{}'
                       '</span>', isotime(t), fulltime(t), ago(t), actor(c), link)


@register.simple_tag
def budget(b: object, fallback: str = "") -> str:
    """A file's size against its framework's budget, as a coloured <meter> and a label."""
    if not b:
        return fallback
    over = " · over budget" if b.state == "over" else ""
    return format_html(
        '<span class="budget is-{}" title="{}"><meter min="0" max="1" low="0.8" high="1" '
        'optimum="0" value="{}">{}%</meter><span class="budget-label">{}{}</span></span>',
        b.state, b.label, b.meter, b.percent, b.text, over)
