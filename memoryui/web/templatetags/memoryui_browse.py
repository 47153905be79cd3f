"""Template helpers any page can load: the sidebar, relative times, links in long lists.

`{% load memoryui_browse %}` then `{% sidebar path=some_path %}` or
`{% sidebar scope=some_scope %}` renders the workspace hierarchy (web/_sidebar.html);
`{{ when|ago }}` prints "5 minutes ago" (a datetime or a Unix time), the one time format
of the UI (memoryui.web.common.timefmt); `{{ path|file_url }}` is `{% url 'file' path %}`
for lists of thousands of rows (one cached reverse per URL name, not one per row).
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from memoryui.web import hierarchy
from memoryui.web.common import timefmt
from memoryui.web.links import area_root, commit_url, file_url, scope_url
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
    ctx["request"] = request
    if request is not None:
        request._memoryui_sidebar = {**(cache or {}), key: ctx}
    return ctx


register.filter("ago", timefmt.ago)
register.filter("isotime", timefmt.isotime)
register.filter("fulltime", timefmt.fulltime)
register.filter("file_url", file_url)
register.filter("scope_url", scope_url)
register.filter("commit_url", commit_url)


@register.filter
def under(path: str, url_name: str) -> bool:
    """Whether a request path is inside the area whose root is the URL named `url_name`."""
    return str(path).startswith(area_root(url_name))


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
    link = format_html(' <a class="mono" href="{}" title="{}">{}</a>', commit_url(c.sha),
                       c.subject, c.sha[:8]) if subject else ""
    return format_html('<span class="change"><time datetime="{}" title="{}">{}</time> {}{}'
                       '</span>', timefmt.isotime(t), timefmt.fulltime(t), timefmt.ago(t),
                       actor(c), link)


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
