"""Compare any two versions: of one file, of a scope, or of the whole workspace.

`/compare/<path>?from=<sha>&to=<sha>` and `/compare/?from=&to=&scope=` are shareable. The
history and activity lists tick two rows in a plain GET form (`rev=<newer>&rev=<older>`, in
the order the list shows them, newest first); that is redirected to the `from`/`to` URL.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_GET

from memoryui.roles import VIEWER, require_role
from memoryui.store import NotFound, Store, names
from memoryui.store import history as githistory
from memoryui.web.common import BadInput, StoreRuleField, fragment_or_page, web_errors
from memoryui.web.diffsource import diff_source
from memoryui.web.diffview import file_views
from memoryui.web.links import file_url
from memoryui.workspace import get_store

from .forms import first_error
from .rows import about_file, commit_id, rows

PICK_MESSAGE = "tick exactly two versions to compare"


class CompareQuery(forms.Form):
    """`from`, `to` (commit ids), `view=split`, `scope` (whole-workspace compare only)."""

    view = forms.CharField(required=False)
    scope = StoreRuleField(names.validate_scope)


def _pair(request: HttpRequest, target: str, scope: str = "") -> tuple[str, str] | HttpResponse:
    """The two commit ids asked for, or a redirect from the ticked-rows form."""
    picked = [r for r in request.GET.getlist("rev") if r]
    if picked:
        if len(picked) != 2:
            raise BadInput(PICK_MESSAGE)
        query = {"from": picked[1], "to": picked[0]}  # rows are listed newest first
        if scope:
            query["scope"] = scope
        if request.GET.get("view") == "split":
            query["view"] = "split"
        return HttpResponseRedirect(target + "?" + urlencode(query))
    a, b = request.GET.get("from", ""), request.GET.get("to", "")
    if not a or not b:
        raise BadInput("choose two versions: ?from=<commit>&to=<commit>")
    return a, b


def _context(store: Store, a: str, b: str, split: bool) -> dict:
    full_a, full_b = commit_id(store, a), commit_id(store, b)
    by_sha = {r.info.sha: r for r in rows(githistory.commits(store.root, [full_a, full_b],
                                                     store.git.repo))}
    base = {"from": full_a, "to": full_b}
    return {
        "from_row": by_sha.get(full_a),
        "to_row": by_sha.get(full_b),
        "from_sha": full_a, "to_sha": full_b, "split": split,
        "unified_href": "?" + urlencode(base),
        "split_href": "?" + urlencode({**base, "view": "split"}),
        "swap_href": "?" + urlencode({"from": full_b, "to": full_a,
                                      **({"view": "split"} if split else {})}),
    }


def _query(request: HttpRequest) -> CompareQuery:
    query = CompareQuery(request.GET)
    if not query.is_valid():
        raise BadInput(first_error(query))
    return query


def _render(request: HttpRequest, ctx: dict, path: str | None = None) -> HttpResponse:
    files = file_views(ctx.pop("diffs"), split=ctx["split"], source=diff_source(
        request, get_store(), ctx["from_sha"], ctx["to_sha"]))
    drawn = [f for f in files if f.drawn]
    ctx.update({"files": drawn, "all_files": files, "undrawn": len(files) - len(drawn),
                "additions": sum(f.additions for f in files),
                "deletions": sum(f.deletions for f in files)})
    return fragment_or_page(request, "web/history/compare.html", "web/history/_compare.html",
                            ctx, sidebar=True, path=path)


@about_file
def compare_file(request: HttpRequest, path: str) -> HttpResponse:
    """Two versions of one file (a rename shows when either name matches)."""
    query = _query(request)
    pair = _pair(request, reverse("compare_file", args=[path]))
    if isinstance(pair, HttpResponse):
        return pair
    store = get_store()
    a, b = pair  # unpacked: the untyped HttpResponse check above narrows nothing for mypy
    ctx = _context(store, a, b, query.cleaned_data["view"] == "split")
    diffs = [d for d in store.diff(ctx["from_sha"], ctx["to_sha"], path)
             if path in (d.path, d.old_path)]
    if not diffs and store.file_at(path, ctx["from_sha"]) is None \
            and store.file_at(path, ctx["to_sha"]) is None:
        raise NotFound(f"{path} exists at neither commit")
    ctx.update({"path": path, "diffs": diffs, "file_href": file_url(path),
                "history_href": reverse("file_history", args=[path]),
                "address": store.address_of(path), "title": path})
    return _render(request, ctx, path=path)


@require_GET
@require_role(VIEWER)
@web_errors
def compare_all(request: HttpRequest) -> HttpResponse:
    """Every file changed between two commits, in the whole workspace or one scope."""
    query = _query(request)
    scope = query.cleaned_data["scope"] or ""
    pair = _pair(request, reverse("compare_all"), scope)
    if isinstance(pair, HttpResponse):
        return pair
    store = get_store()
    if scope and scope not in store.scopes():
        raise NotFound(f"there is no scope {scope!r}")
    a, b = pair
    ctx = _context(store, a, b, query.cleaned_data["view"] == "split")
    diffs = store.diff(ctx["from_sha"], ctx["to_sha"])
    if scope:
        owner = store.layout.scope_of
        diffs = [d for d in diffs
                 if scope in (owner(d.path), owner(d.old_path) if d.old_path else None)]
        for key in ("unified_href", "split_href", "swap_href"):
            ctx[key] += "&" + urlencode({"scope": scope})
    ctx.update({"path": None, "scope": scope, "diffs": diffs,
                "title": scope or "the workspace"})
    return _render(request, ctx)
