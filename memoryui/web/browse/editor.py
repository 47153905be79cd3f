"""Editing memory: the editor with its live preview and conflict view, create, delete.

Names, paths, versions and conflicts are the store's rules (`path_for`, `read_versioned`,
`write(expect=...)`); the shared editing pieces (who writes, preview, conflict merge) are
`memoryui.web.common`. Every write is a commit attributed to the signed-in person.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from memoryui.roles import ADMIN, CURATOR, require_role
from memoryui.store import ABSENT, Conflict, NotFound, Store
from memoryui.store.layout import KIND_LABELS
from memoryui.store.merge import find_base, has_conflict_markers
from memoryui.web import hierarchy
from memoryui.web.common import (
    actor_of,
    conflict_context,
    error_page,
    fragment_or_page,
    normalize_text,
    preview_context,
    saved,
    web_errors,
)
from memoryui.web.diffview import text_diff
from memoryui.web.links import file_url, scope_url
from memoryui.web.secrets.views import flash_findings
from memoryui.workspace import get_store

from .forms import NAME_HELP, DeleteForm, EditForm, NewFileForm, PreviewForm
from .views import existing_file, missing, title_of, too_large_note

T = "web/browse/"
MARKERS = ("The text still contains conflict markers (<<<<<<<, =======, >>>>>>>). "
           "Resolve them, or tick “Save with the markers”.")


@require_role(CURATOR)
@require_http_methods(["GET", "POST"])
@web_errors
def edit(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    if request.method == "POST":
        return _save(request, store, path)
    text, version = store.read_versioned(path)
    if text is None:
        return missing(request, store, path)
    big = too_large_note(text)
    if big:  # no textarea and no preview: the file is offered raw and as a download
        return render(request, T + "edit_too_large.html",
                      {"path": path, "too_large": big, "title": title_of(path, None)})
    return _editor(request, store, path, EditForm(initial={"message": f"edit: {path}"}),
                   text=text, base=version or "")


def _editor(request: HttpRequest, store: Store, path: str, form: EditForm, *, text: str,
            base: str, status: int = 200, error: str = "", conflict: dict | None = None,
            markers: bool = False) -> HttpResponse:
    addr = store.address_of(path)
    item = hierarchy.Item(path, addr.kind if addr else None, addr.scope if addr else None,
                          addr.name if addr else None, len(text.encode()), 0.0, None)
    message = form["message"].value() if form.is_bound else form.initial.get("message", "")
    ctx = {
        "path": path, "item": item, "text": text, "base": base, "form": form,
        "message": message or f"edit: {path}", "error": error, "conflict": conflict,
        "markers": markers, "preview": preview_context(store, text, path=path),
        "title": title_of(path, item),
    }
    return render(request, T + "edit.html", ctx, status=status)


def _save(request: HttpRequest, store: Store, path: str) -> HttpResponse:
    store.abspath(path)  # an invalid path is a 400 before anything else
    form = EditForm(request.POST)
    valid = form.is_valid()
    text, base = form.text_value(), form.base_value()
    if form.wants_preview:
        return _editor(request, store, path, form, text=text, base=base)
    if not valid:
        return _editor(request, store, path, form, text=text, base=base, status=400,
                       error=form.first_error)
    d = form.cleaned_data
    message = d["message"].strip() or f"edit: {path}"
    if has_conflict_markers(text) and not d["allow_markers"]:
        return _editor(request, store, path, form, text=text, base=base, status=400,
                       markers=True, error=MARKERS)
    try:
        result = store.write(path, text, actor=actor_of(request), tool="edit", message=message,
                             expect=d["base"])
    except Conflict as exc:
        cv = conflict_context(store, path, mine=text, base=d["base"], exc=exc)
        return _editor(request, store, path, form, text=cv.text, base=cv.base, status=409,
                       conflict=cv.ctx, markers=cv.markers)
    if not result.changed:
        messages.info(request, f"No changes: {path} already has this text.")
        return HttpResponseRedirect(file_url(path))
    messages.success(request, saved(f"Saved {path}", result))
    flash_findings(request, store, path)  # people's writes are flagged, never refused
    return HttpResponseRedirect(file_url(path))


@require_role(CURATOR)
@require_POST
@web_errors
def preview(request: HttpRequest) -> HttpResponse:
    """Live preview: the `_preview.html` fragment for htmx, a page without JavaScript."""
    store = get_store()
    form = PreviewForm(request.POST)
    form.is_valid()  # every field is optional; an unusable path previews without a budget
    path = form.target(store)
    ctx = {"preview": preview_context(store, form.cleaned_data["text"], path=path),
           "path": path or ""}
    return fragment_or_page(request, T + "preview.html", T + "_preview.html", ctx)


def _kind_choices(store: Store) -> list[dict]:
    lay = store.layout
    out = []
    for kind in lay.kinds():
        pats = [p for p in lay.patterns if p.kind == kind]
        out.append({
            "value": kind.value, "label": KIND_LABELS[kind],
            "scoped": any(p.scoped for p in pats), "unscoped": any(not p.scoped for p in pats),
            "named": any(p.named for p in pats),
            "templates": [p.template for p in pats],
        })
    return out


@require_role(CURATOR)
@require_http_methods(["GET", "POST"])
@web_errors
def new_file(request: HttpRequest) -> HttpResponse:
    store = get_store()
    status, exists = 200, False
    if request.method == "GET":  # links prefill the fields (?kind=note&scope=...)
        form = NewFileForm(initial=request.GET.dict(), store=store)
    else:
        form = NewFileForm(request.POST, store=store)
        if not form.is_valid():
            status = 400
        elif not form.cleaned_data["preview"]:
            d = form.cleaned_data
            path = form.path
            try:
                result = store.write(path, d["text"], actor=actor_of(request), tool="edit",
                                     message=d["message"].strip() or f"create: {path}",
                                     expect=ABSENT)
            except Conflict:
                exists, status = True, 409
            else:
                messages.success(request, saved(f"Created {path}", result))
                return HttpResponseRedirect(file_url(path))
    text = normalize_text(form["text"].value() or "")
    ctx = {
        "form": form, "path": form.path, "exists": exists, "kinds": _kind_choices(store),
        "scopes": store.scopes(), "scope_term": store.layout.scope_term, "text": text,
        "name_help": {k.value: v for k, v in NAME_HELP.items()},
        "preview": preview_context(store, text, path=form.path or None),
    }
    return render(request, T + "new.html", ctx, status=status)


@require_role(ADMIN)
@require_http_methods(["GET", "POST"])
@web_errors
@existing_file
def delete_file(request: HttpRequest, store: Store, path: str, text: str,
                version: str | None) -> HttpResponse:
    addr = store.address_of(path)
    form = DeleteForm(request.POST or None, initial={"message": f"delete: {path}"})
    ctx: dict = {"path": path, "version": version, "text": text, "size": len(text.encode()),
                 "kind_label": KIND_LABELS.get(addr.kind) if addr else "Other file",
                 "form": form, "message": f"delete: {path}", "last": hierarchy.Change.from_dict(
                     hierarchy.last_change(store, path))}
    if request.method == "GET":
        return render(request, T + "delete.html", ctx)
    ctx["message"] = form["message"].value() or ""
    if not form.is_valid():
        ctx["error"] = "; ".join(str(e[0]) for e in form.errors.values())
        return render(request, T + "delete.html", ctx, status=400)
    d = form.cleaned_data
    message = d["message"].strip() or f"delete: {path}"
    try:
        result = store.delete(path, actor=actor_of(request), tool="delete", message=message,
                              expect=d["base"].strip())
    except Conflict:
        base_text, newer = find_base(store, path, d["base"].strip())
        ctx.update(conflict=True, commits=[hierarchy.Change(c.sha, c.author, c.actor, c.time,
                                                            c.subject) for c in newer],
                   theirs_diff=text_diff(base_text, text, path) if base_text is not None
                   else None)
        return render(request, T + "delete.html", ctx, status=409)
    except NotFound as exc:
        return error_page(request, str(exc), 404)
    messages.success(request, saved(f"Deleted {path}", result, "Its history keeps every "
                                    "version; restore it from there."))
    scope_name = addr.scope if addr else store.layout.scope_of(path)
    return HttpResponseRedirect(scope_url(scope_name) if scope_name else reverse("overview"))

