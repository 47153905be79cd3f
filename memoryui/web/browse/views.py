"""Reading and editing memory: overview, scope and file pages, the editor, create, delete.

Thin views over the store: names, paths, versions and conflicts are the store's rules
(`path_for`, `read_versioned`, `write(expect=...)`); these views only translate them to
pages. Every write is a commit attributed to the signed-in person.
"""

from __future__ import annotations

import datetime as dt
import functools
import threading
import time
from collections.abc import Callable
from urllib.parse import quote, urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_POST

from memoryui.rendering import render_markdown
from memoryui.roles import ADMIN, CURATOR, VIEWER, has_role, require_role
from memoryui.store import (
    ABSENT,
    Actor,
    Conflict,
    InvalidName,
    Kind,
    NotFound,
    Store,
    StoreError,
    parse_daily,
    version_of,
)
from memoryui.store import names as store_names
from memoryui.store.diffs import FileDiff, diff_texts
from memoryui.store.layout import KIND_LABELS
from memoryui.store.merge import find_base, has_conflict_markers, merge3
from memoryui.web import hierarchy
from memoryui.workspace import get_store

T = "web/browse/"
WORLD_SHOWN = 20  # the overview lists the most recently changed world topics, then a link
STALE_NOTE_AFTER = 10.0  # seconds: the overview says when its counts are older than this


# -- helpers ------------------------------------------------------------------------------


def file_url(path: str) -> str:
    return "/f/" + quote(path)


def _scope_url(scope: str) -> str:
    return f"/s/{quote(scope)}/"


def _error(request: HttpRequest, exc: StoreError | str, status: int = 400,
           title: str | None = None) -> HttpResponse:
    message = str(exc)
    if title is None:
        title = {400: "Invalid request", 404: "Not found", 409: "Conflict",
                 413: "Too large"}.get(status, "Error")
    return render(request, T + "error.html", {"title": title, "message": message},
                  status=status)


def store_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A store error becomes its own 4xx page (never a 500)."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except StoreError as exc:
            return _error(request, exc, exc.status)

    return wrapped


def _normalize(text: str) -> str:
    """Browsers submit textareas with CRLF line ends; memory files use LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _actor(request: HttpRequest) -> Actor:
    user = request.user
    return Actor.user(user.get_username(), getattr(user, "email", "") or None)


def _commit_of(store: Store, path: str, result_commit: str | None) -> str:
    if result_commit:
        return result_commit
    store.flush()
    last = store.last_changes().get(path)
    return last["sha"] if last else ""


def _breadcrumbs(store: Store, path: str, item: hierarchy.Item | None) -> list[tuple[str, str]]:
    """(label, href) pairs from the overview down to the file's parent."""
    crumbs = [("Overview", "/")]
    scope = (item.scope if item else None) or store.layout.scope_of(path)
    if scope:
        crumbs.append((f"{store.layout.scope_term} {scope}", _scope_url(scope)))
    return crumbs


def _title(path: str, item: hierarchy.Item | None) -> str:
    if item is None or item.kind is None:
        return path.rsplit("/", 1)[-1]
    if item.kind == Kind.DAILY:
        return f"Daily log {item.name}"
    if item.kind == Kind.WORLD:
        return f"World: {item.name}"
    if item.kind == Kind.GLOBAL:
        return "Global MEMORY.md"
    if item.kind == Kind.SKILL:
        return f"Skill: {item.name}"
    return item.label


def _raw_rows(text: str) -> list[tuple[int, str]]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return list(enumerate(lines, 1))


def _open_items(text: str | None) -> int:
    """Scratchpad open items: lines starting `- [ ]` or `* [ ]` after left-trimming."""
    return sum(1 for ln in (text or "").split("\n") if ln.lstrip().startswith(("- [ ]", "* [ ]")))


# -- overview, scope, file ----------------------------------------------------------------


@require_role(VIEWER)
@store_errors
def overview(request: HttpRequest) -> HttpResponse:
    store = get_store()
    h = hierarchy.build(store)
    world_over = sum(1 for w in h.world if w.budget and w.budget.state == "over")
    world = h.world
    if len(world) > WORLD_SHOWN and request.GET.get("world") != "all":
        world = sorted(world, key=lambda w: (w.last_raw or {}).get("time", 0),
                       reverse=True)[:WORLD_SHOWN]
    stale = time.time() - h.built_at > STALE_NOTE_AFTER
    ctx = {"h": h, "scopes": h.scope_list(), "world_over": world_over, "stale": stale,
           "world": world, "world_all": len(world) == len(h.world),
           **hierarchy.sidebar(store)}
    return render(request, T + "overview.html", ctx)


_pending_cache: dict[str, tuple[float, str | None, int]] = {}
_pending_lock = threading.Lock()
PENDING_TTL = 10.0


@require_role(VIEWER)
@store_errors
def pending_count(request: HttpRequest) -> HttpResponse:
    """Fragment: how many files changed outside memoryui (`git status`, cached briefly)."""
    store = get_store()
    key, head, now = str(store.root), store.head(), time.monotonic()
    cached = _pending_cache.get(key)
    if cached and cached[1] == head and now - cached[0] < PENDING_TTL:
        count = cached[2]
    else:
        count = len(store.pending())
        with _pending_lock:
            _pending_cache[key] = (now, head, count)
    return render(request, T + "_pending_count.html", {"count": count})


@require_role(VIEWER)
@store_errors
def scope(request: HttpRequest, scope: str) -> HttpResponse:
    store = get_store()
    store_names.validate_scope(scope)
    node = hierarchy.scope_node(store, scope)
    lay = store.layout
    if node is None:
        return _error(request, f"There is no {lay.scope_term} named {scope!r} in this workspace.",
                      404, title=f"No such {lay.scope_term}")
    open_items = _open_items(store.read(node.scratchpad.path)) if node.scratchpad else 0
    months = [m.key for m in node.months]
    open_month = request.GET.get("month", "")
    if open_month not in months:
        open_month = months[0] if months else ""
    ctx = {"node": node, "open_month": open_month, "open_items": open_items, "layout": lay,
           "kinds": {k.value for k in lay.kinds()}, "can_create": has_role(request.user, CURATOR),
           **hierarchy.sidebar(store, scope=scope, node=node)}
    return render(request, T + "scope.html", ctx)


@require_role(VIEWER)
@store_errors
def file_page(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    text, version = store.read_versioned(path)
    if text is None:
        return _missing(request, store, path)
    size = len(text.encode())
    item = hierarchy.item_for(store, path, size, store.last_changes().get(path))
    lines = hierarchy.count_lines(text)
    budget = store.layout.budget(item.kind) if item.kind else None
    cut = hierarchy.agent_cut(store.layout, item.kind, text)
    view = "raw" if request.GET.get("view") == "raw" else "rendered"
    ctx = {
        "path": path, "item": item, "text": text, "version": version, "view": view,
        "size": size, "size_text": hierarchy.fmt_bytes(size), "lines": lines,
        "budget": hierarchy.budget_view(budget, size, lines) if budget else None,
        "cut": cut, "title": _title(path, item),
        "crumbs": _breadcrumbs(store, path, item),
        "can_edit": has_role(request.user, CURATOR), "can_delete": has_role(request.user, ADMIN),
        **hierarchy.sidebar(store, current_path=path),
    }
    if view == "raw":
        ctx["rows"] = _raw_rows(text)
    elif item.kind == Kind.DAILY:
        ctx["entries"] = [{"e": e, "html": render_markdown(e.text)} for e in parse_daily(text)]
    else:
        ctx["html"] = render_markdown(text)
    return render(request, T + "file.html", ctx)


def _missing(request: HttpRequest, store: Store, path: str) -> HttpResponse:
    """404 for a file that does not exist, with a way to create it when the layout knows it."""
    addr = store.address_of(path)
    create = None
    if addr is not None and has_role(request.user, CURATOR):
        q = {"kind": addr.kind.value}
        if addr.scope:
            q["scope"] = addr.scope
        if addr.name:
            q["name"] = addr.name
        create = "/new/?" + urlencode(q)
    ctx = {"path": path, "create": create, "addr": addr,
           "kind_label": KIND_LABELS.get(addr.kind) if addr else None}
    return render(request, T + "missing.html", ctx, status=404)


@require_role(VIEWER)
@store_errors
def raw(request: HttpRequest, path: str) -> HttpResponse:
    data = get_store().read_bytes(path)
    if data is None:
        return HttpResponse(f"{path} does not exist\n", status=404,
                            content_type="text/plain; charset=utf-8")
    resp = HttpResponse(data, content_type="text/plain; charset=utf-8")
    resp["ETag"] = f'"{version_of(data)}"'
    return resp


# -- the editor -----------------------------------------------------------------------------


@require_role(CURATOR)
@require_http_methods(["GET", "POST"])
@store_errors
def edit(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    if request.method == "POST":
        return _save(request, store, path)
    text, version = store.read_versioned(path)
    if text is None:
        return _missing(request, store, path)
    return _editor(request, store, path, text=text, base=version or "",
                   message=f"edit: {path}")


def _editor(request: HttpRequest, store: Store, path: str, *, text: str, base: str,
            message: str, status: int = 200, error: str = "", conflict: dict | None = None,
            markers: bool = False) -> HttpResponse:
    addr = store.address_of(path)
    kind = addr.kind if addr else None
    item = hierarchy.Item(path, kind, addr.scope if addr else None, addr.name if addr else None,
                          len(text.encode()), 0.0, None)
    ctx = {
        "path": path, "item": item, "text": text, "base": base, "message": message,
        "error": error, "conflict": conflict, "markers": markers,
        "preview": _preview_ctx(store, path, text),
        "title": _title(path, item), "crumbs": _breadcrumbs(store, path, item),
    }
    return render(request, T + "edit.html", ctx, status=status)


def _preview_ctx(store: Store, path: str | None, text: str) -> dict:
    kind = None
    if path:
        try:
            addr = store.address_of(path)
        except StoreError:
            addr = None
        kind = addr.kind if addr else None
    size, lines = len(text.encode()), hierarchy.count_lines(text)
    budget = store.layout.budget(kind) if kind else None
    return {
        "html": render_markdown(text),
        "cut": hierarchy.agent_cut(store.layout, kind, text),
        "budget": hierarchy.budget_view(budget, size, lines) if budget else None,
        "lines": lines, "size_text": hierarchy.fmt_bytes(size),
    }


def _save(request: HttpRequest, store: Store, path: str) -> HttpResponse:
    store.abspath(path)  # an invalid path is a 400 before anything else
    text = _normalize(request.POST.get("text", ""))
    base = request.POST.get("base", "").strip()
    message = request.POST.get("message", "").strip() or f"edit: {path}"
    if "preview" in request.POST:  # the no-JavaScript preview button
        return _editor(request, store, path, text=text, base=base, message=message)
    if not base:
        return _editor(request, store, path, text=text, base=base, message=message,
                       status=400, error="The form lost the version you started from; "
                       "nothing was saved. Copy your text and reload the editor.")
    if has_conflict_markers(text) and not request.POST.get("allow_markers"):
        return _editor(request, store, path, text=text, base=base, message=message,
                       status=400, markers=True,
                       error="The text still contains conflict markers (<<<<<<<, =======, "
                             ">>>>>>>). Resolve them, or tick “Save with the markers”.")
    try:
        result = store.write(path, text, actor=_actor(request), tool="edit", message=message,
                             expect=base)
    except Conflict as exc:
        return _conflict(request, store, path, mine=text, base=base, exc=exc, message=message)
    if not result.changed:
        messages.info(request, f"No changes: {path} already has this text.")
        return HttpResponseRedirect(file_url(path))
    sha = _commit_of(store, path, result.commit)
    messages.success(request, f"Saved {path} in commit {sha[:8]}." if sha else f"Saved {path}.")
    return HttpResponseRedirect(file_url(path))


def _changes(commits: list) -> list[hierarchy.Change]:
    return [hierarchy.Change(c.sha, c.author, c.actor, c.time, c.subject) for c in commits]


def _conflict(request: HttpRequest, store: Store, path: str, *, mine: str, base: str,
              exc: Conflict, message: str) -> HttpResponse:
    """409: nothing was written; show their change and a merge to start from."""
    current = exc.current
    base_text, newer = find_base(store, path, base)
    theirs_diff: FileDiff | None = None
    mine_diff: FileDiff | None = None
    merged, conflicts = None, 0
    if base_text is not None:
        theirs_diff = diff_texts(base_text, current, path)
        mine_diff = diff_texts(base_text, mine, path)
        if current is not None:
            result = merge3(base_text, mine, current, store.git.state_dir)
            if result is not None:
                merged, conflicts = result.text, result.conflicts
    else:
        theirs_diff = diff_texts(mine, current, path)
    uncommitted = current is not None and (
        not newer or version_of(store.file_at(path, newer[0].sha)) != exc.version)
    conflict = {
        "deleted": current is None, "current": current, "mine": mine,
        "theirs_diff": theirs_diff, "mine_diff": mine_diff, "base_known": base_text is not None,
        "commits": _changes(newer), "merged": merged is not None, "conflicts": conflicts,
        "clean": merged is not None and conflicts == 0, "uncommitted": uncommitted,
        "current_html": render_markdown(current) if current is not None else "",
    }
    text = merged if merged is not None else mine
    return _editor(request, store, path, text=text, base=exc.version or ABSENT,
                   message=message, status=409, conflict=conflict,
                   markers=conflicts > 0)


@require_role(CURATOR)
@require_POST
@store_errors
def preview(request: HttpRequest) -> HttpResponse:
    """Live preview: the `_preview.html` fragment for htmx, a page without JavaScript."""
    store = get_store()
    text = _normalize(request.POST.get("text", ""))
    path = request.POST.get("path") or None
    if path:
        try:
            store_names.validate_relpath(path)
        except InvalidName:
            path = None
    elif request.POST.get("kind"):  # the new-file form: where the file would go
        form = {k: request.POST.get(k, "").strip() for k in ("kind", "scope", "name")}
        try:
            path = store.path_for(form["kind"], form["scope"] or None, form["name"] or None)
        except (StoreError, ValueError):
            path = None
    ctx = {"preview": _preview_ctx(store, path, text), "path": path or ""}
    if request.htmx:
        return render(request, T + "_preview.html", ctx)
    return render(request, T + "preview.html", ctx)


# -- create and delete -------------------------------------------------------------------------


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


NAME_HELP = {
    Kind.WORLD: "topic: lowercase letters, digits, '-' and '_'",
    Kind.DAILY: "date: YYYY-MM-DD",
    Kind.NOTE: "note name: no slashes or dots",
    Kind.SKILL: "skill name: lowercase letters, digits and single hyphens",
    Kind.DIRECTIVE: "directive name: no slashes or dots",
}


@require_role(CURATOR)
@require_http_methods(["GET", "POST"])
@store_errors
def new_file(request: HttpRequest) -> HttpResponse:
    store = get_store()
    src = request.POST if request.method == "POST" else request.GET
    form = {
        "kind": src.get("kind", "").strip(), "scope": src.get("scope", "").strip(),
        "name": src.get("name", "").strip(), "text": _normalize(src.get("text", "")),
        "message": src.get("message", "").strip(),
    }
    errors: dict[str, str] = {}
    status = 200
    path = ""
    if request.method == "POST":
        path, errors = _new_path(store, form)
        if not errors and "preview" not in request.POST:
            message = form["message"] or f"create: {path}"
            try:
                result = store.write(path, form["text"], actor=_actor(request), tool="edit",
                                     message=message, expect=ABSENT)
            except Conflict:
                errors["name"] = "exists"
                status = 409
            else:
                sha = _commit_of(store, path, result.commit)
                messages.success(request, f"Created {path} in commit {sha[:8]}."
                                 if sha else f"Created {path}.")
                return HttpResponseRedirect(file_url(path))
        elif errors:
            status = 400
    kinds = _kind_choices(store)
    ctx = {
        "form": form, "errors": errors, "path": path, "kinds": kinds,
        "scopes": store.scopes(), "scope_term": store.layout.scope_term,
        "name_help": {k.value: v for k, v in NAME_HELP.items()},
        "preview": _preview_ctx(store, path or None, form["text"]),
    }
    return render(request, T + "new.html", ctx, status=status)


def _new_path(store: Store, form: dict) -> tuple[str, dict[str, str]]:
    errors: dict[str, str] = {}
    try:
        kind = Kind(form["kind"])
    except ValueError:
        return "", {"kind": "Choose what kind of file to create."}
    if not store.layout.supports(kind):
        return "", {"kind": f"The {store.layout.key} layout has no {KIND_LABELS[kind]}."}
    name = form["name"] or None
    if kind == Kind.DAILY and name is None:
        name = form["name"] = dt.date.today().isoformat()
    try:
        path = store.path_for(kind, form["scope"] or None, name)
    except InvalidName as exc:
        msg = str(exc)
        field = "scope" if "scope" in msg else "name" if name or "name" in msg else "kind"
        if kind == Kind.WORLD and name:
            try:
                msg += f" — for example {store_names.sanitize_world_topic(name)!r}"
            except InvalidName:
                pass
        errors[field] = msg
        return "", errors
    store.abspath(path)
    return path, errors


@require_role(ADMIN)
@require_http_methods(["GET", "POST"])
@store_errors
def delete_file(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    text, version = store.read_versioned(path)
    if text is None:
        return _missing(request, store, path)
    addr = store.address_of(path)
    ctx: dict = {"path": path, "version": version, "text": text, "size": len(text.encode()),
                 "kind_label": KIND_LABELS.get(addr.kind) if addr else "Other file",
                 "message": f"delete: {path}", "last": hierarchy.Change.from_dict(
                     store.last_changes().get(path)), "crumbs": _breadcrumbs(store, path, None)}
    if request.method == "GET":
        return render(request, T + "delete.html", ctx)
    base = request.POST.get("base", "").strip()
    message = request.POST.get("message", "").strip() or f"delete: {path}"
    ctx["message"] = message
    if not base:
        ctx["error"] = "The form lost the version you confirmed; nothing was deleted."
        return render(request, T + "delete.html", ctx, status=400)
    try:
        result = store.delete(path, actor=_actor(request), tool="delete", message=message,
                              expect=base)
    except Conflict:
        base_text, newer = find_base(store, path, base)
        ctx.update(conflict=True, commits=_changes(newer),
                   theirs_diff=diff_texts(base_text, text, path) if base_text is not None
                   else None)
        return render(request, T + "delete.html", ctx, status=409)
    except NotFound as exc:
        return _error(request, exc, 404)
    sha = _commit_of(store, path, result.commit)
    messages.success(request, f"Deleted {path} in commit {sha[:8]}. Its history keeps every "
                              "version; restore it from there.")
    scope_name = addr.scope if addr else store.layout.scope_of(path)
    return HttpResponseRedirect(_scope_url(scope_name) if scope_name else "/")
