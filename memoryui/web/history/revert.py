"""Revert one commit from its page: a thin view over `memoryui.store.revert`.

POST only, curators only, and only against the HEAD the page showed (a stale page: 409).
A file that cannot merge writes nothing and answers the conflict view, where the curator
edits each merged text (markers shown) and saves them all as the revert, or cancels.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from memoryui.roles import CURATOR
from memoryui.store import Store, names
from memoryui.store.revert import LABELS, CannotMerge, RevertFile, revert
from memoryui.web.common import BadInput, actor_of, cleaned, preview_context, render_page
from memoryui.web.common.conflicts import Names, conflict_sides
from memoryui.web.guards import role_view
from memoryui.workspace import get_store

from .forms import SHA_RE
from .rows import commit_id

MAX_RESOLVED = 200  # files a conflict form may carry


class RevertForm(forms.Form):
    """The HEAD the page was loaded at; `path`/`text` pairs resolve conflicting files."""

    head = forms.RegexField(regex=SHA_RE, error_messages={
        "required": "the form lacks the commit the page was loaded at; reload the page",
        "invalid": "the form lacks the commit the page was loaded at; reload the page"})


def _conflict_file(store: Store, n: int, f: RevertFile) -> dict:
    """One conflicting file of the conflict view: its merged text, the shared conflict
    component (the later change and the revert, each from the reverted commit's text) and
    the merged text's preview with its conflict regions drawn."""
    names = Names("the current file", LABELS[1], LABELS[2], ids=f"revert-{n}")
    return {"path": f.path, "text": f.text or "", "conflicts": f.conflicts, "n": n,
            "sides": conflict_sides(f.path, f.after, f.current, f.before, names),
            "preview": preview_context(store, f.text or "", path=f.path)}


def _resolved(request: HttpRequest) -> dict[str, str]:
    paths, texts = request.POST.getlist("path"), request.POST.getlist("text")
    if len(paths) != len(texts) or len(paths) > MAX_RESOLVED:
        raise BadInput("each resolved file needs its path and its text; reload the page")
    out = {}
    for path, text in zip(paths, texts, strict=True):
        names.validate_relpath(path)
        out[path] = text
    return out


@role_view(CURATOR, "POST")
def revert_commit(request: HttpRequest, sha: str) -> HttpResponse:
    store = get_store()
    full = commit_id(store, sha)
    head = commit_id(store, cleaned(RevertForm(request.POST))["head"])
    try:
        result = revert(store, full, actor=actor_of(request), expect_head=head,
                        resolved=_resolved(request))
    except CannotMerge as exc:
        return render_page(request, "web/history/revert_conflict.html", {
            "sha": full, "head": head, "message": str(exc),
            "files": [_conflict_file(store, n, f)
                      for n, f in enumerate((f for f in exc.files if f.conflicts), 1)],
            "clean": [f for f in exc.files if not f.conflicts and f.changes],
        }, status=409)
    if result.commit is None:
        messages.info(request, f"Nothing to revert: the changes of {full[:8]} are already "
                               "undone.")
        return redirect("commit", sha=full)
    messages.success(request, f"Reverted {full[:8]} in {len(result.paths)} file"
                              f"{'' if len(result.paths) == 1 else 's'} "
                              f"(new commit {result.commit[:8]}).")
    return redirect("commit", sha=result.commit)
