"""Hidden unchanged lines of a diff (expand context) and the Source | Rendered switch.

`/diff/context/<path>?rev=&start=&end=&shift=&pos=&show=up|down|all&anchor=[&view=split]`
answers htmx with table rows that replace an expand row: the lines of `path` at `rev` (the
new side; both sides are the same there), numbered on both sides, plus a smaller expand
row for what is still hidden. Without htmx the same rows come inside a page.
`/diff/view?mode=source|rendered&next=` remembers the choice in a cookie and goes back.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from memoryui.roles import VIEWER, require_role
from memoryui.store import NotFound
from memoryui.web.common import BadInput, cleaned, error_page, fragment_or_page
from memoryui.web.diffsource import CHUNK, COOKIE, context_rows, make_gap, text_lines
from memoryui.workspace import get_store

from .forms import SHA_RE
from .rows import about_file, commit_id

MAX_LINE = 10_000_000
COOKIE_AGE = 365 * 86_400


def _number(name: str, what: str) -> dict:
    msg = f"{name} must be {what}"
    return {key: msg for key in ("required", "invalid", "min_value", "max_value")}


def _choice(name: str, what: str) -> dict:
    msg = f"{name} must be {what}"
    return {"required": msg, "invalid_choice": msg}


class ContextQuery(forms.Form):
    """Which hidden lines to show; every number bounded, every word from a short list."""

    rev = forms.RegexField(regex=SHA_RE, error_messages={
        "required": "rev (the commit id of the new side) is required",
        "invalid": "rev must be a commit id"})
    start = forms.IntegerField(min_value=1, max_value=MAX_LINE,
                               error_messages=_number("start", "a line number from 1"))
    end = forms.IntegerField(min_value=1, max_value=MAX_LINE,
                             error_messages=_number("end", "a line number from 1"))
    shift = forms.IntegerField(min_value=-MAX_LINE, max_value=MAX_LINE,
                               error_messages=_number("shift", "a whole number"))
    pos = forms.ChoiceField(choices=[(p, p) for p in ("top", "middle", "bottom")],
                            error_messages=_choice("pos", "top, middle or bottom"))
    show = forms.ChoiceField(choices=[(s, s) for s in ("up", "down", "all")],
                             error_messages=_choice("show", "up, down or all"))
    anchor = forms.RegexField(regex=r"^[A-Za-z0-9_-]{1,1100}$", error_messages={
        "required": "anchor (the file's id on the page) is required",
        "invalid": "anchor must be letters, digits, - and _"})
    view = forms.CharField(required=False)

    def clean(self) -> dict:
        d = super().clean()
        if "start" in d and "end" in d and d["start"] > d["end"]:
            raise forms.ValidationError("start must not be after end")
        if "start" in d and "shift" in d and d["start"] + d["shift"] < 1:
            raise forms.ValidationError("shift puts the old line numbers before line 1")
        return d


def _page(request: HttpRequest) -> tuple[QueryDict | None, str]:
    """The query and path of the diff page htmx is on (for links that work without JS)."""
    current = urlsplit(request.headers.get("HX-Current-URL", ""))
    if not current.path.startswith("/") or current.path.startswith("//"):
        return None, ""
    return QueryDict(current.query, mutable=True), current.path


@about_file
def context(request: HttpRequest, path: str) -> HttpResponse:
    d = cleaned(ContextQuery(request.GET))
    store = get_store()
    rev = commit_id(store, d["rev"])
    text = store.file_at(path, rev)
    if text is None:
        raise NotFound(f"{path} does not exist at commit {rev[:8]}")
    lines = text_lines(text)
    start, end, shift, show = d["start"], d["end"], d["shift"], d["show"]
    if end > len(lines):
        raise BadInput(f"{path} has {len(lines)} lines at {rev[:8]}; end={end} is past them")
    split = d["view"] == "split"
    first, last = start, end
    if show == "down":
        last = min(end, start + CHUNK - 1)
    elif show == "up":
        first = max(start, end - CHUNK + 1)
    nonl = bool(text) and not text.endswith("\n")
    rows = context_rows(lines, first, last, shift, nonl, split)
    before = after = None
    page, page_path = _page(request)
    if first > start:  # still hidden above what is shown
        pos = d["pos"] if d["pos"] != "bottom" else "middle"
        before = make_gap(path, d["anchor"], rev, start, first - 1, shift, pos, split=split,
                          page=page, page_path=page_path)
    if last < end:
        pos = d["pos"] if d["pos"] != "top" else "middle"
        after = make_gap(path, d["anchor"], rev, last + 1, end, shift, pos, split=split,
                         page=page, page_path=page_path)
    ctx = {"rows": rows, "before": before, "after": after, "split": split, "path": path,
           "rev": rev, "first": first, "last": last}
    return fragment_or_page(request, "web/history/_diff_context_page.html",
                            "web/history/_diff_context.html", ctx, sidebar=True, path=path)


@require_GET
@require_role(VIEWER)
def view_mode(request: HttpRequest) -> HttpResponse:
    """Remember Source or Rendered for markdown diffs, then go back to the diff."""
    mode = request.GET.get("mode", "")
    if mode not in ("source", "rendered"):
        return error_page(request, "mode must be source or rendered", 400)
    nxt = request.GET.get("next", "")
    if not nxt.startswith("/") or not url_has_allowed_host_and_scheme(
            nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        nxt = "/"
    response = HttpResponseRedirect(nxt)
    response.set_cookie(COOKIE, mode, max_age=COOKIE_AGE, samesite="Lax", httponly=True,
                        secure=request.is_secure())
    return response
