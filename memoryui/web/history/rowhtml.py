"""Commit rows as HTML, written in Python: the one hot loop of every history page.

A history or activity page lists up to 50 commits with their files; through the template
engine that loop was most of the page's cost (about 0.6 ms a row, the whole page's git
floor every 8 rows). The markup is the `_commit_list.html` structure, every value
escaped by `_html` (`format_html`'s rule).
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from django.utils.safestring import SafeString, mark_safe

from memoryui.store.writes import Write
from memoryui.web.common import timefmt
from memoryui.web.links import history_url

from .rows import MAX_WRITES_PER_ROW, ActorView, CommitRow


def _html(template: str, *args: object) -> SafeString:
    """`format_html` for the hot loop: every argument escaped unless it is HTML already,
    without the lazy-string wrapping `format_html` pays at each of its calls."""
    return mark_safe(template.format(*(a.__html__() if hasattr(a, "__html__") else escape(str(a))
                                       for a in args)))


def _html_join(sep: str, template: str, rows: Iterable[Iterable[object]]) -> SafeString:
    return mark_safe(sep.join(_html(template, *row) for row in rows))


STATUS_TITLE = {"A": "added", "D": "deleted", "R": "renamed"}
PATH_BADGE = {"A": ('badge-ok', "created"), "D": ("badge-danger", "deleted"),
              "R": ("", "renamed")}


def actor_badge(a: ActorView) -> SafeString:
    """`_actor.html` in Python: an actor's badge linking to its activity."""
    return _html('<a class="badge {} actor" href="{}" title="{}: {}">{}</a>',
                       a.badge, a.href, a.label, a.raw, a.name)


def time_tag(when: object) -> SafeString:
    """`_time.html` in Python: the relative time, the absolute one on hover."""
    return _html('<time datetime="{}" title="{}">{}</time>', timefmt.isotime(when),
                       timefmt.fulltime(when), timefmt.ago(when))


def writes_list(writes: list[Write], limit: int | None = None, more_href: str = ""
                ) -> SafeString:
    """The writes of a grouped commit, each with its time (UTC), tool and file: how an audit
    tells apart what one commit of an agent's tick holds."""
    if not writes:
        return mark_safe("")
    shown = writes if limit is None else writes[:limit]
    items = _html_join(
        "", '<li><time datetime="{}" title="{}">{}</time> <span class="badge '
            'badge-tool" title="Tool">{}</span> <a class="mono" href="{}">{}</a></li>',
        ((timefmt.isotime(w.when), timefmt.fulltime(w.when), f"{w.when:%H:%M:%S}", w.tool,
          history_url(w.path), w.path) for w in shown))
    if len(writes) > len(shown):
        more = len(writes) - len(shown)
        items += _html('<li><a href="{}">and {} more write{}</a></li>', more_href,
                             more, "" if more == 1 else "s")
    return _html('<ol class="commit-writes" aria-label="{} writes in this commit">{}'
                       '</ol>', len(writes), items)


def _fixed(row: CommitRow, with_files: bool) -> tuple[SafeString, SafeString, SafeString]:
    """(body, badges, files) of a commit: the same on every page and at any time."""
    info, a = row.info, row.actor
    body = _html('<details class="commit-body"><summary>More</summary><pre>{}</pre>'
                       "</details>", info.body) if info.body else mark_safe("")
    body += writes_list(row.writes, MAX_WRITES_PER_ROW, row.commit_href)
    badges = actor_badge(a)
    badges += _html_join("", '\n<span class="badge badge-tool" title="Tool">{}</span>',
                               ((t,) for t in row.tools))
    if a.kind != "git" and info.author != a.name:
        badges += _html('\n<span class="muted">as {}</span>', info.author)
    files = mark_safe("")
    if with_files and row.files_shown:
        items = _html_join(
            "", '<li><span class="file-status file-status-{}" title="{}">{}</span> '
                '<a class="mono" href="{}">{}</a></li>',
            ((f["status"], STATUS_TITLE.get(f["status"], "modified"), f["status"], f["href"],
              f["path"]) for f in row.files_shown))
        if row.files_more:
            items += _html('<li><a href="{}">and {} more file{}</a></li>',
                                 row.commit_href, row.files_more,
                                 "" if row.files_more == 1 else "s")
        files = _html('\n<ul class="commit-files">{}</ul>', items)
    return body, badges, files


def commit_item(row: CommitRow, *, path: str | None, compare_pick: bool, can_curate: bool,
                restore_action: str = "", base: str = "", csrf_token: str = "") -> SafeString:
    """One `<li class="commit-item">`: a file's history row when `path` is given, else an
    activity or scope row listing the commit's files."""
    info = row.info
    body, badges, files = _fixed(row, with_files=not path)
    subject_href = row.compare_href if path else row.commit_href
    meta = badges
    if row.via_remote:
        meta += mark_safe('\n<span class="badge badge-remote" title="Made elsewhere: this '
                          'commit arrived via the git remote">via remote</span>')
    if row.via_push:
        meta += _html('\n<span class="badge badge-remote" title="Pushed to memoryui\'s '
                            'git remote by the host token {}">via git push ({})</span>',
                            row.via_push, row.via_push)
    meta += _html('\n<span class="muted">committed {}</span>', time_tag(row.when))
    if path and row.status in PATH_BADGE:
        cls, text = PATH_BADGE[row.status]
        meta += _html('\n<span class="badge{}">{}</span>', f" {cls}" if cls else "", text)
    if row.latest:
        meta += mark_safe('\n<span class="badge badge-ok">current version</span>')
    actions = mark_safe("")
    if compare_pick:
        actions += _html(
            '<label class="btn btn-sm compare-pick" title="Tick two versions, then Compare">'
            '<input type="checkbox" name="rev" value="{}" form="compare-form"> Pick<span '
            'class="visually-hidden"> {} to compare</span></label>\n',
            row.at_rev if path else info.sha, info.short)
    actions += _html('<a class="btn btn-sm mono sha" href="{}" title="{}">{}</a>',
                           row.commit_href, info.sha, info.short)
    inline = mark_safe("")
    if path:
        actions += _file_actions(row, path, can_curate, restore_action, base, csrf_token)
        inline = _html('\n<div class="commit-inline-diff" id="inline-{}" '
                             'aria-live="polite"></div>', info.sha)
    return _html(
        '<li class="commit-item" id="c-{}">\n<div class="commit-row">\n'
        '<div class="commit-main">\n<p class="commit-subject"><a href="{}">{}</a></p>\n{}'
        '<div class="commit-meta">\n{}\n</div>{}\n</div>\n'
        '<div class="commit-actions">\n{}\n</div>\n</div>{}\n</li>\n',
        info.sha, subject_href, info.subject, body, meta, files, actions, inline)


def _file_actions(row: CommitRow, path: str, can_curate: bool, restore_action: str,
                  base: str, csrf_token: str) -> SafeString:
    if row.deleted:
        view = ("View the file as it was before this commit deleted it", "View before deletion")
    else:
        view = ("View the file at this commit", "View file")
    html = _html('\n<a class="btn btn-sm" href="{}" title="{}">{}</a>', row.at_href, *view)
    html += _html(
        '\n<a class="btn btn-sm" href="{0}" hx-get="{0}" hx-target="#inline-{1}" '
        'hx-swap="innerHTML" title="Show what this commit changed in this file">Compare with '
        "previous</a>", row.compare_href, row.info.sha)
    if can_curate and not row.latest:
        label = "Restore before deletion" if row.deleted else "Restore"
        html += _html(
            '\n<form method="post" action="{}" class="inline-form restore-form" '
            'data-confirm="Restore {} as it was at {}? This makes a new commit; nothing is '
            'lost.">\n<input type="hidden" name="csrfmiddlewaretoken" value="{}">\n'
            '<input type="hidden" name="rev" value="{}">\n'
            '<input type="hidden" name="base" value="{}">\n'
            '<button type="submit" class="btn btn-sm" title="Bring this version back as a '
            'new commit">{}</button>\n</form>',
            restore_action, path, row.at_rev[:8], csrf_token, row.at_rev, base, label)
    return html
