"""Edit then approve, and the conflict view: one editor for both.

The editor starts from the proposed text; for a stale proposal (the file changed since it
was proposed) from git's three-way merge of the proposal and the current file, with the
conflict component (`web/_conflict_sides.html`) and conflict markers where both changed
the same lines. Its live preview is the file editor's (`preview_context`).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from memoryui.proposing import ProposalView
from memoryui.store import ABSENT, version_of
from memoryui.store.merge import merge3
from memoryui.web.common import preview_context, render_page, vary
from memoryui.web.common.conflicts import Names, conflict_sides
from memoryui.workspace import get_store

from . import display

NAMES = Names("the proposal", "the version it was proposed against", "the current file",
              "proposal")
LABELS = ("the proposal", "proposed against", "the current file")
T = "web/proposals/"


def seen_version(p: ProposalView) -> str:
    """The current file's version as the editor shows it: an edited approval is the file's
    new text as it stands, so a change to the file meanwhile must stop it."""
    return version_of(p.current_text) or ABSENT


def editor_context(p: ProposalView, nxt: str, *, text: str | None = None) -> dict:
    """What edit.html draws; `text` is what the curator submitted (kept on a refusal)."""
    store = get_store()
    ours = p.proposed_text or ""
    stale = p.available and p.stale and p.current_text is not None
    merged, conflicts = None, 0
    if stale:
        result = merge3(p.base_text or "", ours, p.current_text or "", store.git.state_dir,
                        LABELS)
        if result is not None:
            merged, conflicts = result.text, result.conflicts
    body = text if text is not None else merged if merged is not None else ours
    return {
        "c": display.card(store, p, prose=False), "p": p, "text": body,
        "updated": display.stamp(p), "seen": seen_version(p), "next": nxt, "stale": stale,
        "merged": merged is not None, "conflicts": conflicts,
        "sides": conflict_sides(p.path, p.base_text, ours, p.current_text, NAMES)
        if stale else None,
        "preview": preview_context(store, body, path=p.path),
    }


def editor_page(request: HttpRequest, p: ProposalView, nxt: str, *, text: str | None = None,
                error: str = "", status: int = 200) -> HttpResponse:
    ctx = {**editor_context(p, nxt, text=text), "error": error}
    return render_page(request, T + "edit.html", ctx, status=status, path=p.path)


def _to_editor(p: ProposalView, nxt: str) -> HttpResponse:
    """htmx is sent to the editor page: a card is no place to resolve a conflict."""
    resp = HttpResponse("")
    resp["HX-Redirect"] = reverse("proposal_edit", args=[p.id]) + "?" + urlencode({"next": nxt})
    return vary(resp)


def conflict_page(request: HttpRequest, p: ProposalView, nxt: str, *,
                  text: str | None = None) -> HttpResponse:
    """A stale proposal git cannot merge (or a file changed while the curator edited):
    409 and its editor, where the curator resolves; their own text is kept."""
    if getattr(request, "htmx", False):
        return _to_editor(p, nxt)
    ctx = {**editor_context(p, nxt, text=text), "refused": (
        "The file changed while you edited: your text is below, beside the newer version. "
        "Check it, then approve." if text is not None else
        "Approving as proposed would overwrite a newer change: the file changed on the same "
        "lines since. Resolve below, then approve.")}
    return render_page(request, T + "edit.html", ctx, status=409, path=p.path)


def deleted_page(request: HttpRequest, p: ProposalView, nxt: str) -> HttpResponse:
    """The file was deleted since the proposal: 409, and a form to approve it back."""
    if getattr(request, "htmx", False):
        return _to_editor(p, nxt)
    ctx = {"c": display.card(get_store(), p, prose=False), "next": nxt,
           "updated": display.stamp(p)}
    return render_page(request, T + "deleted.html", ctx, status=409, path=p.path)
