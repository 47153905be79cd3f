"""Blame: each line of a file with the commit that last changed it, grouped in blocks.

`?rev=<commit id>` blames the file as it was at that commit; each block links to the blame
of the file at its commit's parent ("blame before this change"), at the matching line.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from memoryui.store import NotFound, Store
from memoryui.store.blame import BlameLine, lines_before
from memoryui.web.browse.views import too_large_note
from memoryui.web.common import render_page
from memoryui.web.hierarchy.model import Stamped
from memoryui.web.links import file_url, link
from memoryui.workspace import get_store

from .rowhtml import actor_badge, time_tag
from .rows import ActorView, about_file


@dataclass
class BlameBlock(Stamped):
    sha: str
    actor: ActorView
    time: int
    summary: str
    age: int  # 0 (oldest) .. 4 (newest), for the age bar
    lines: list[BlameLine]
    before_href: str = ""  # the blame at this commit's parent, at the matching line
    before_note: str = ""  # why there is no such link (the commit added the file)

    @property
    def uncommitted(self) -> bool:
        return self.sha.startswith("0000000")


def blocks_of(lines: list[BlameLine]) -> list[BlameBlock]:
    """Consecutive lines of one commit form a block; age is relative to the file's span."""
    times = [ln.time for ln in lines] or [0]
    oldest, newest = min(times), max(times)
    span = max(newest - oldest, 1)
    blocks: list[BlameBlock] = []
    for ln in lines:
        if blocks and blocks[-1].sha == ln.sha:
            blocks[-1].lines.append(ln)
            continue
        age = min(4, int(4 * (ln.time - oldest) / span)) if newest > oldest else 4
        blocks.append(BlameBlock(ln.sha, ActorView(ln.actor or f"git:{ln.author}"), ln.time,
                                 ln.summary, age, [ln]))
    return blocks


def block_rows(blocks: list[BlameBlock], path: str) -> SafeString:
    """The table's rows, written here (every value escaped): through the template engine a
    row per line and a commit cell per block were most of a daily log's blame page (a
    block per entry). The markup is what `blame.html` had."""
    out = []
    for b in blocks:
        first = b.lines[0]
        if b.uncommitted:
            cell = mark_safe('<span class="muted">Not committed yet</span>')
        else:
            href = reverse("commit", args=[b.sha])
            if b.before_href:
                before = format_html('<a class="blame-before" href="{}" title="Blame the file '
                                     'as it was before {}">↶ blame before this change</a>',
                                     b.before_href, b.short)
            elif b.before_note:
                before = format_html('<span class="blame-before muted">{}</span>',
                                     b.before_note)
            else:
                before = mark_safe("")
            cell = format_html(
                '<div class="blame-info">\n<a class="mono sha" href="{}?path={}" title="{}">{}'
                '</a>\n{}\n{}\n</div>\n<a class="blame-summary" href="{}" title="{}">{}</a>\n{}',
                href, quote(path, safe="/"), b.sha, b.short, actor_badge(b.actor),
                time_tag(b.when), href, b.summary, b.summary, before)
        out.append(format_html(
            '<tr id="L{0}" class="blame-start">\n<td class="blame-commit age-{1}" '
            'rowspan="{2}">\n{3}\n</td>\n<td class="ln"><a href="#L{0}">{0}</a></td>\n'
            '<td class="code">{4}</td>\n</tr>', first.line_no, b.age, len(b.lines), cell,
            first.text))
        out.extend(f'\n<tr id="L{ln.line_no}"><td class="ln"><a href="#L{ln.line_no}">'
                   f'{ln.line_no}</a></td><td class="code">{escape(ln.text)}</td></tr>\n'
                   for ln in b.lines[1:])
    return mark_safe("".join(out))


def link_before(store: Store, blocks: list[BlameBlock]) -> None:
    """Give each block its "blame before this change" link (one diff per commit)."""
    by_commit: dict[str, list[tuple[BlameBlock, BlameLine]]] = {}
    for b in blocks:
        first = b.lines[0]
        if b.uncommitted or first.boundary:
            continue  # a root commit: nothing before it
        if not first.prev_sha:
            b.before_note = "This change added the file"
            continue
        by_commit.setdefault(b.sha, []).append((b, first))
    for sha, group in by_commit.items():
        one = group[0][1]
        mapped = lines_before(store.git.repo, sha, one.orig_path, one.prev_sha,
                                         one.prev_path, [f.orig_line for _, f in group])
        base = link("blame", one.prev_path, query={"rev": one.prev_sha})
        for (b, _), n in zip(group, mapped, strict=True):
            b.before_href = f"{base}#L{n}"


@about_file
def blame(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    raw_rev = request.GET.get("rev", "")
    rev = store.resolve_commit(raw_rev) if raw_rev else "HEAD"
    text = store.file_at(path, rev) if store.head() is not None else None
    if text is None:
        raise NotFound(f"{path} is not in the committed workspace" if rev == "HEAD" else
                       f"{path} did not exist at commit {rev[:8]}")
    big = too_large_note(text)
    if big:  # git blame and a row per line: not over the render limit
        return render_page(request, "web/history/blame.html", {
            "path": path, "too_large": big, "file_href": file_url(path),
            "rev": None if rev == "HEAD" else rev,
            "exists": rev == "HEAD" or store.file_at(path, "HEAD") is not None}, path=path)
    lines = store.blame(path, rev)
    blocks = blocks_of(lines)
    link_before(store, blocks)
    return render_page(request, "web/history/blame.html", {
        "path": path, "rows": block_rows(blocks, path), "line_count": len(lines),
        "commit_count": len({b.sha for b in blocks}), "file_href": file_url(path),
        "address": store.address_of(path), "rev": None if rev == "HEAD" else rev,
        "exists": rev == "HEAD" or store.file_at(path, "HEAD") is not None,
    }, path=path)
