"""One commit (all its files, or one of them: compare-with-previous) and a file at a commit.

One `git show` pair per commit page; with `?path=` only that file's patch is read, so a
commit of thousands of files does not parse its whole patch for one of them.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from memoryui.rendering import render_markdown, too_large
from memoryui.roles import VIEWER, require_role
from memoryui.store import ABSENT, InvalidName, NotFound, names
from memoryui.store import history as githistory
from memoryui.store.commitinfo import CommitInfo
from memoryui.store.writes import TRAILER as WRITE
from memoryui.store.writes import writes_of
from memoryui.web.common import cleaned, fragment_or_page, is_fragment, render_page, web_errors
from memoryui.web.diffsource import diff_source
from memoryui.web.diffview import file_views
from memoryui.web.links import file_url
from memoryui.workspace import get_store

from .forms import SHA_RE, CommitQuery, ViewQuery
from .rowhtml import writes_list
from .rows import EMPTY_TREE, checked_path, commit_id, rows


def _trailer_rows(info: CommitInfo) -> list[dict]:
    out = []
    for key, values in info.trailers.items():
        if key == WRITE:
            continue  # listed as the commit's writes
        for value in values:
            href = None
            if key in ("Restored-From", "Reverts") and SHA_RE.fullmatch(value):
                href = reverse("commit", args=[value])
            elif key == "Promoted-From":
                src, _, entry = value.partition("#")
                try:
                    names.validate_relpath(src)
                    # the file page anchors each daily entry as `e-<entry id>`
                    href = file_url(src) + (f"#e-{quote(entry)}" if entry else "")
                except InvalidName:
                    href = None
            out.append({"key": key, "value": value, "href": href})
    return out


@require_GET
@require_role(VIEWER)
@web_errors
def commit(request: HttpRequest, sha: str) -> HttpResponse:
    store = get_store()
    full = commit_id(store, sha)
    query = cleaned(CommitQuery(request.GET))
    split = query["view"] == "split"
    only = query["path"]
    if only:
        # The commit read by libgit2 and its one file's diff: a history page's "compare
        # with previous" fragment starts no git process (starting one cost more than the
        # diff). The full page's commit row lists every file: that one comes from git log.
        found = githistory.commits(store.root, [full], store.git.repo)
        if not found:
            raise Http404("no such commit")
        detail = found[0]
        parent = detail.parents[0] if detail.parents else EMPTY_TREE
        diffs = [d for d in githistory.diff(store.root, parent, detail.sha, only)
                 if only in (d.path, d.old_path)]
        if not diffs:
            raise NotFound(f"commit {detail.short} does not change {only}")
        if not is_fragment(request):
            detail.files = githistory.log(store.root, [], rev=full, limit=1)[0].files
    else:
        whole = store.commit(full)
        if whole is None:
            raise Http404("no such commit")
        detail, diffs = whole, whole.diffs
    files = file_views(diffs, split=split, source=diff_source(
        request, store, detail.parents[0] if detail.parents else None, detail.sha))
    drawn = [f for f in files if f.drawn]
    ctx = {
        "commit": detail, "row": rows([detail])[0], "files": drawn, "all_files": files,
        "undrawn": len(files) - len(drawn), "split": split, "only": only,
        "trailers": _trailer_rows(detail), "head": store.head(),
        "writes": writes_list(writes_of(detail.trailers)),
        "additions": sum(f.additions for f in files),
        "deletions": sum(f.deletions for f in files),
        "unified_href": "?" + urlencode({"path": only} if only else {}),
        "split_href": "?" + urlencode({"view": "split", **({"path": only} if only else {})}),
    }
    if not only:
        return render_page(request, "web/history/commit.html", ctx)
    fragment = "web/history/_diff_split.html" if split else "web/history/_diff_unified.html"
    return fragment_or_page(request, "web/history/commit.html", fragment, ctx, sidebar=True,
                            path=only)


@require_GET
@require_role(VIEWER)
@web_errors
def file_at(request: HttpRequest, sha: str, path: str) -> HttpResponse:
    store = get_store()
    full = commit_id(store, sha)
    path = checked_path(path)
    text = store.file_at(path, full)
    if text is None:
        raise NotFound(f"{path} did not exist at commit {full[:8]}")
    infos = githistory.log(store.root, [], rev=full, limit=1, with_files=False)
    current, version = store.read_versioned(path)
    raw = ViewQuery(request.GET).raw
    if raw and too_large(text):  # the text itself, not a page as large as it
        return HttpResponse(text, content_type="text/plain; charset=utf-8")
    return render_page(request, "web/history/file_at.html", {
        "path": path, "sha": full, "row": rows(infos)[0] if infos else None,
        "text": text, "html": None if raw else render_markdown(text), "raw": raw,
        "same_as_current": text == current, "exists": current is not None,
        "base": version or ABSENT, "file_href": file_url(path),
        "address": store.address_of(path),
    }, path=path)
