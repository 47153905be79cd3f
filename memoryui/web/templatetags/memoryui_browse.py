"""Template helpers any page can load: the sidebar, relative times, links in long lists.

`{% load memoryui_browse %}` then `{% sidebar path=some_path %}` or
`{% sidebar scope=some_scope %}` renders the workspace hierarchy (web/_sidebar.html);
`{{ when|ago }}` prints "5 minutes ago" (a datetime or a Unix time), the one time format
of the UI (memoryui.web.common.timefmt); `{{ path|file_url }}` is `{% url 'file' path %}`
for lists of thousands of rows (one cached reverse per URL name, not one per row).
`{% file_crumbs path "History" %}` and `{% file_tabs path "history" %}` are the one
breadcrumb trail and the one set of tabs of every page about a file.
`{% scope_options selected %}` writes a scope menu's options (kept with the sidebar's
listing: 500 scopes on a large team). `{{ f.rows|unified_rows }}` and
`{{ f.split|split_rows }}` write a diff's rows (web/history/diffhtml.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from memoryui.caches import FILE_ROWS, SCOPE_ROWS
from memoryui.roles import ADMIN, CURATOR, has_role
from memoryui.store import Store
from memoryui.store.layout import KIND_LABELS, Address, Kind, Layout
from memoryui.web import hierarchy
from memoryui.web.common import timefmt
from memoryui.web.history import diffhtml
from memoryui.web.links import area_root, commit_url, file_url, link, scope_url
from memoryui.workspace import get_store

if TYPE_CHECKING:
    from memoryui.web.browse.overview import ScopeRow

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


@register.simple_tag(takes_context=True)
def sidebar_tree(context: template.Context) -> str:
    """web/_sidebar.html's markup: the hierarchy as `hierarchy.sidebar()` put it in the
    context, marked for the page's URL name."""
    request = context.get("request")
    match = getattr(request, "resolver_match", None)
    return hierarchy.sidebar_html(context["sidebar"], getattr(match, "url_name", None))


register.filter("ago", timefmt.ago)
register.filter("isotime", timefmt.isotime)
register.filter("fulltime", timefmt.fulltime)
register.filter("file_url", file_url)
register.filter("scope_url", scope_url)
register.filter("commit_url", commit_url)
register.filter("unified_rows", diffhtml.unified_rows)
register.filter("split_rows", diffhtml.split_rows)


@register.filter
def under(path: str, url_name: str) -> bool:
    """Whether a request path is inside the area whose root is the URL named `url_name`."""
    return str(path).startswith(area_root(url_name))


# Small markup pieces used in long lists (a table row per file): simple tags, because an
# {% include %} per row costs more than the rest of the row on a 20,000-file workspace.


@register.simple_tag(takes_context=True)
def commit_items(context: template.Context, rows: list) -> str:
    """The `<li>` of each commit row (`memoryui.web.history.rowhtml`), with the page's
    `path`, `compare_pick`, `can_curate`, `restore_action` and `base`."""
    from memoryui.web.history.rowhtml import commit_item

    path = context.get("path") or None
    compare_pick, can_curate = bool(context.get("compare_pick")), bool(context.get("can_curate"))
    restore_action, base = context.get("restore_action") or "", context.get("base") or ""
    csrf_token = str(context.get("csrf_token", ""))
    return mark_safe("".join(
        commit_item(row, path=path, compare_pick=compare_pick, can_curate=can_curate,
                    restore_action=restore_action, base=base, csrf_token=csrf_token)
        for row in rows))


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
def change(c: hierarchy.Change | None, subject: bool = False) -> str:
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
def budget(b: hierarchy.BudgetView | None, fallback: str = "") -> str:
    """A file's size against its framework's budget, as a coloured <meter> and a label."""
    if not b:
        return fallback
    over = " · over budget" if b.state == "over" else ""
    return format_html(
        '<span class="budget is-{}" title="{}"><meter min="0" max="1" low="0.8" high="1" '
        'optimum="0" value="{}">{}%</meter><span class="budget-label">{}{}</span></span>',
        b.state, b.label, b.meter, b.percent, b.text, over)




@register.simple_tag
def scope_rows(rows: list[ScopeRow], kinds: frozenset, review_url: str) -> str:
    """The overview's scope table rows (`_overview_scopes.html` has the header): written
    here because 50 rows of a dozen cells each were most of the overview's render time,
    and kept per scope (`caches.SCOPE_ROWS`): at 50 scopes rendering them was still 40 % of
    it. A row is rendered again only when its scope changed (a change copies the node it
    touches), its review count did or its age text."""
    out = []
    for r in rows:
        s = r.node
        key = (id(s), r.review, kinds, review_url,
               timefmt.ago(getattr(s.last, "time", 0)) if s.last else "")
        row = SCOPE_ROWS.get(key)
        if row is None or row[0] is not s:
            row = (s, _scope_row(r, kinds, review_url))
            SCOPE_ROWS.put(key, row)
        out.append(row[1])
    return mark_safe("".join(out))


@register.simple_tag
def file_rows(items: list, num: bool = False) -> str:
    """Table rows of files (name, size against its budget, last change; `num`: the size
    cell numeric): the overview's world topics, a scope page's daily logs and notes. Kept
    per file (`caches.FILE_ROWS`) as the scope rows are: a row is rendered again only when
    its item changed (the hierarchy is read again when the catalogue did) or its age text."""
    out = []
    size_cell = '<td class="num">{}</td>' if num else "<td>{}</td>"
    for it in items:
        last = it.last
        key = (id(it), num, timefmt.ago(last.time) if last else "")
        row = FILE_ROWS.get(key)
        if row is None or row[0] is not it:
            row = (it, format_html(
                '\n    <tr><th scope="row"><a href="{}">{}</a></th>' + size_cell
                + "<td>{}</td></tr>", file_url(it.path), it.name,
                budget(it.budget, it.size_text), change(last)))
            FILE_ROWS.put(key, row)
        out.append(row[1])
    return mark_safe("".join(out))


def _scope_row(r: ScopeRow, kinds: frozenset, review_url: str) -> str:
    none = mark_safe('<span class="muted">none</span>')
    s = r.node
    cells = [format_html('<th scope="row"><a href="{}">{}</a></th>', scope_url(s.name),
                         s.name)]
    # While the catalogue is first filled a scope is not counted yet: every cell says so.
    dots = mark_safe('<td class="muted" title="not counted yet">…</td>') \
        if s.files is None else None
    if "memory" in kinds:
        cells.append(dots or (format_html('<td><a href="{}" class="ov-mem">{}</a></td>',
                                          file_url(s.memory.path),
                                          budget(s.memory.budget, s.memory.size_text))
                              if s.memory else format_html("<td>{}</td>", none)))
    if "daily" in kinds:
        d = s.newest_daily
        cells.append(dots * 2 if dots else format_html(
            '<td class="num">{}</td><td>{}</td>', s.daily_count,
            format_html('<a href="{}">{}</a>', file_url(d.path), d.name) if d else none))
    if "note" in kinds:
        cells.append(dots or format_html('<td class="num">{}</td>', s.note_count))
    cells.append(dots * 3 if dots else format_html(
        '<td class="num">{}</td><td>{}</td><td class="num">{}</td>', s.files, change(s.last),
        s.size_text))
    if "daily" in kinds:
        cells.append(dots or (format_html('<td class="num"><a href="{}?scope={}">{}</a></td>',
                                          review_url, quote(s.name, safe=""), r.review)
                              if r.review else
                              mark_safe('<td class="num"><span class="muted">0</span></td>')))
    return format_html("\n    <tr>\n      {}\n    </tr>", mark_safe("\n      ".join(cells)))


# -- one navigation scheme: breadcrumbs and tabs of every page about one file -------------

# The top level of a file's crumbs for kinds outside any scope, as the sidebar names them.
_SHARED_LEVEL = {Kind.WORLD: "ov-world", Kind.GLOBAL: "ov-global", Kind.DIRECTIVE: "ov-directives"}
# Kinds that are several files of a scope get a level of their own under the scope.
_SCOPE_SECTION = {Kind.DAILY: "sc-daily", Kind.NOTE: "sc-notes", Kind.DIRECTIVE: "sc-directives"}


def crumbs_of(store: Store, path: str) -> list[tuple[str, str]]:
    """(label, href) from the workspace down to `path` itself (the last pair): the one
    breadcrumb trail of the file page, its history, blame, compare, old versions and editor.

    Workspace › kind › scope › file, kind labels from the store's KIND_LABELS; a skill's
    folder is its level (Workspace › Skills › <skill> › file)."""
    overview, layout = reverse("overview"), store.layout
    out = [("Workspace", overview)]
    addr = store.address_of(path)
    scope = addr.scope if addr else layout.scope_of(path)
    if scope:
        out.append((f"{layout.scope_term}s".capitalize(), overview + "#ov-scopes"))
        out.append((scope, scope_url(scope)))
        if addr and addr.kind in _SCOPE_SECTION:
            section = f"{scope_url(scope)}#{_SCOPE_SECTION[addr.kind]}"
            out.append((KIND_LABELS[addr.kind] + "s", section))
    elif skill := _skill_of(layout, path, addr):
        out.append(("Skills", overview + "#ov-skills"))
        out.append((skill, file_url(layout.path(Address(Kind.SKILL, None, skill)))))
    elif addr and addr.kind in _SHARED_LEVEL:
        label = KIND_LABELS[addr.kind] + ("" if addr.kind == Kind.GLOBAL else "s")
        out.append((label, f"{overview}#{_SHARED_LEVEL[addr.kind]}"))
    else:
        out.append(("Other files", overview + "#ov-other"))
    out.append((path.rsplit("/", 1)[-1], file_url(path)))
    return out


def _skill_of(layout: Layout, path: str, addr: Address | None) -> str | None:
    """The skill `path` is (SKILL.md) or lies in (a file of the skill's folder)."""
    if addr is not None:
        return addr.name if addr.kind == Kind.SKILL else None
    parts = path.split("/")
    return parts[1] if layout.is_shared(path) and parts[0] == "skills" else None


@register.inclusion_tag("web/history/_crumbs.html")
def file_crumbs(path: str, leaf: str = "") -> dict:
    """`{% file_crumbs path "History" %}`: the file's breadcrumbs, then `leaf` if given."""
    return {"crumbs": crumbs_of(get_store(), path), "leaf": leaf}


# Tabs every page about one file shows: (key, label, URL name, query, role needed).
_TABS = (("view", "View", "file", "", None), ("source", "Source", "file", "?view=raw", None),
         ("edit", "Edit", "edit", "", CURATOR), ("history", "History", "file_history", "", None),
         ("blame", "Blame", "blame", "", None))


@register.inclusion_tag("web/history/_file_tabs.html", takes_context=True)
def file_tabs(context: template.Context, path: str, tab: str, exact: bool = True,
              exists: bool = True) -> dict:
    """`{% file_tabs path "blame" %}`: View · Source · Edit (curators) · History · Blame.

    The current tab is `aria-current="page"`; a page inside a tab (compare, an old version:
    `exact=False`) marks it `aria-current="true"`. A deleted file keeps only its history."""
    request = context.get("request")
    user = getattr(request, "user", None)
    tabs = []
    for key, label, name, query, role in _TABS:
        if role and not has_role(user, role):
            continue
        if not exists and key != "history":
            continue
        current = ("page" if exact else "true") if key == tab else ""
        tabs.append({"key": key, "label": label, "href": link(name, path) + query,
                     "current": current})
    return {"tabs": tabs, "path": path}


@register.filter
def is_admin(user: object) -> bool:
    """Whether the signed-in person is an admin (the header's Tokens link)."""
    return has_role(user, ADMIN)


@register.simple_tag
def scope_options(selected: str = "", keep_unknown: bool = False) -> str:
    """Every scope as an `<option>` (`selected` marked), from the sidebar's kept listing."""
    return hierarchy.scope_options(hierarchy.shared(get_store()), selected or "",
                                   keep_unknown)
