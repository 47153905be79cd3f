"""Review queue and promotion: thin HTTP over `memoryui.review`.

Every page works without JavaScript (plain GET forms and POST forms with redirects);
htmx only enhances: the editor opens inside the queue, and after an action the touched
entries are swapped out of band (`_entries_oob.html`), so one response can update
several entries of a multi-select. Viewers see everything; curators act.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from urllib.parse import quote, urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memoryui import review
from memoryui.models import Promotion
from memoryui.rendering import render_markdown
from memoryui.roles import CURATOR, VIEWER, has_role, require_role
from memoryui.store import ABSENT, Conflict, Kind, Store, StoreError
from memoryui.store import promote as promote_text
from memoryui.store.diffs import diff_texts
from memoryui.store.layout import KIND_LABELS
from memoryui.store.merge import find_base, has_conflict_markers, merge3
from memoryui.store.skills import SkillError
from memoryui.web import hierarchy
from memoryui.web.history.diffview import file_views
from memoryui.workspace import get_store

T = "web/review/"
QUEUE_URL = "/review/"
RECENT = 8


# -- helpers ------------------------------------------------------------------------------------

def _user(request: HttpRequest) -> str:
    return request.user.get_username()


def _next(request: HttpRequest) -> str:
    """Where to go back to: a same-site path only (never an open redirect)."""
    nxt = request.POST.get("next") or request.GET.get("next") or ""
    if nxt.startswith("/") and url_has_allowed_host_and_scheme(
            nxt, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return nxt
    return QUEUE_URL


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _fail(request: HttpRequest, exc: StoreError | str, status: int | None = None
          ) -> HttpResponse:
    """A 4xx the lead can read: a flash (htmx, swapped out of band) or an error page."""
    status = status or getattr(exc, "status", 400)
    message = str(exc)
    if request.htmx:
        messages.error(request, message)
        resp = render(request, "_messages.html", {"oob": True}, status=status)
        resp["HX-Reswap"] = "none"
        return resp
    title = {403: "Not allowed", 404: "Not found", 409: "Conflict"}.get(status,
                                                                       "Cannot do that")
    return render(request, T + "error.html", {"title": title, "message": message,
                                              "next": _next(request)}, status=status)


def review_errors(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A store or review error becomes a clear 4xx, never a 500."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except StoreError as exc:
            return _fail(request, exc)

    return wrapped


def _choices(store: Store) -> dict:
    """What the target choosers offer in this layout."""
    kinds = review.target_kinds(store)
    return {
        "target_kinds": [(k.value, "MEMORY.md of a scope" if k == Kind.MEMORY
                          else KIND_LABELS[k]) for k in kinds],
        "kind_values": [k.value for k in kinds],
        "default_kind": (Kind.MEMORY if Kind.MEMORY in kinds else Kind.GLOBAL).value
        if kinds else "",
        "scopes": store.scopes(),
        "world_names": review.existing_names(store, Kind.WORLD),
        "skill_names": review.existing_names(store, Kind.SKILL),
    }


def _done(request: HttpRequest, items: list[review.Item], *, bulk_done: bool = False,
          recent: bool = False) -> HttpResponse:
    """htmx: every touched entry (and the message area) swapped out of band."""
    nxt = _next(request)
    ctx = {"items": items, "can_act": True, "bulk_done": bulk_done, "next": nxt,
           "next_q": quote(nxt, safe=""), **_choices(get_store())}
    if recent:
        ctx["recent"] = Promotion.objects.all()[:RECENT]
        ctx["show_recent"] = True
    resp = render(request, T + "_entries_oob.html", ctx)
    resp["HX-Reswap"] = "none"
    return resp


# -- queue and neighbours ------------------------------------------------------------------------

@require_role(VIEWER)
@require_GET
def queue(request: HttpRequest) -> HttpResponse:
    store = get_store()
    error, status = "", 200
    try:
        filters = review.Filters.parse(request.GET)
    except review.ReviewError as exc:
        error, status = str(exc), 400
        filters = review.Filters.parse(QueryDict())
    q = review.build_queue(store, filters)
    for it, nxt in zip(q.items, q.items[1:], strict=False):
        it.next_dom = nxt.dom_id
    page = filters.page

    def link(**over: object) -> str:
        return "?" + urlencode(filters.as_query(**over))

    ctx = {
        "queue": q, "filters": filters, "error": error, "statuses": review.STATUSES,
        "can_act": has_role(request.user, CURATOR), "next": request.get_full_path(),
        "next_q": quote(request.get_full_path(), safe=""),
        "recent": Promotion.objects.all()[:RECENT],
        "prev_url": link(page=page - 1) if page > 1 else "",
        "next_url": link(page=page + 1) if page < q.pages else "",
        "scope_links": [(s, n, link(scope=s, page=1)) for s, n in q.counts],
        "all_scopes_url": link(scope="", page=1),
        **_choices(store),
    }
    return render(request, T + "queue.html", ctx, status=status)


@require_role(VIEWER)
@require_GET
@review_errors
def entry(request: HttpRequest) -> HttpResponse:
    """One entry with its neighbours: the htmx fragment, or a page of its own."""
    store = get_store()
    key = request.GET.get("entry", "")
    before, current, after = review.neighbours(store, key)
    nxt = _next(request)
    ctx = {"before": before, "current": current, "after": after,
           "can_act": has_role(request.user, CURATOR), "next": nxt,
           "next_q": quote(nxt, safe=""), **_choices(store)}
    if request.htmx:
        return render(request, T + "_neighbours.html", ctx)
    return render(request, T + "entry.html", ctx)


# -- promotion ------------------------------------------------------------------------------------

def _place(value: str | None) -> int | None:
    if not value or value == "end":
        return None
    try:
        return int(value)
    except ValueError:
        raise review.ReviewError(f"place must be 'end' or a heading number, not {value!r}"
                                 ) from None


def _target(store: Store, data: QueryDict, items: list[review.Item]) -> review.Target:
    kinds = review.target_kinds(store)
    default = (Kind.MEMORY if Kind.MEMORY in kinds else Kind.GLOBAL).value
    kind = data.get("kind") or default
    scope = data.get("scope") or (items[0].scope if items else None)
    return review.make_target(store, kind, scope, data.get("name"))


def _preview_ctx(store: Store, target: review.Target, text: str) -> dict:
    """The same context the browse editor's `/preview/` fragment renders."""
    size, lines = len(text.encode()), hierarchy.count_lines(text)
    budget = store.layout.budget(target.kind)
    return {
        "html": render_markdown(text),
        "cut": hierarchy.agent_cut(store.layout, target.kind, text),
        "budget": hierarchy.budget_view(budget, size, lines) if budget else None,
        "lines": lines, "size_text": hierarchy.fmt_bytes(size),
    }


def _editor(request: HttpRequest, store: Store, *, items: list[review.Item],
            target: review.Target | None, text: str = "", base: str = "",
            place: int | None = None, description: str = "", message: str = "",
            status: int = 200, error: str = "", problems: list[str] | None = None,
            conflict: dict | None = None, over_budget: bool = False, markers: bool = False,
            kind: str = "", name: str = "") -> HttpResponse:
    """The editor; `target` is None while the lead still has to name a topic or skill."""
    slot = request.POST.get("slot") or request.GET.get("slot") or "page"
    if slot != "bulk" and not slot.startswith("entry-"):
        slot = "page"
    ctx = {
        "items": items, "target": target, "text": text, "base": base, "place": place,
        "description": description, "message": message, "error": error,
        "problems": problems or [], "conflict": conflict, "markers": markers,
        "already": [it for it in items if it.status == "promoted"],
        "slot": slot, "next": _next(request), "entry_keys": [it.key for it in items],
        "kind": target.kind.value if target else kind,
        "name": (target.name if target else name) or "",
        **_choices(store),
    }
    if target is not None:
        info = review.budget_info(store, target.kind, text, target.text)
        before = None
        if info.budget and target.text is not None:
            before = hierarchy.budget_view(info.budget, info.old_size or 0, info.old_lines or 0)
        ctx.update({
            "budget_before": before,
            "headings": promote_text.headings(target.text or ""),
            "budget": info, "over_budget": over_budget or info.crosses,
            "default_message": review.default_message(target, items),
            "preview": _preview_ctx(store, target, text), "path": target.path,
        })
    name_ = "_promote_editor.html" if request.htmx and slot != "page" else "promote.html"
    return render(request, T + name_, ctx, status=status)


@require_role(CURATOR)
@require_http_methods(["GET", "POST"])
@review_errors
def promote(request: HttpRequest) -> HttpResponse:
    """GET: the editor prefilled with the entries in place. POST: save = one commit."""
    store = get_store()
    data = request.POST if request.method == "POST" else request.GET
    items = review.resolve(store, data.getlist("entry"))
    if not items:
        raise review.ReviewError("choose at least one entry to promote")
    place = _place(data.get("place"))
    description = data.get("description", "").strip()
    kind, name = data.get("kind", ""), data.get("name", "").strip()
    try:
        target = _target(store, data, items)
    except StoreError as exc:
        if request.method == "GET" and kind in (Kind.WORLD.value, Kind.SKILL.value):
            # Let the lead type (or fix) the name right in the editor.
            return _editor(request, store, items=items, target=None, kind=kind, name=name,
                           error=str(exc) if name else "", status=400 if name else 200)
        raise
    if request.method == "GET":
        promoted = [it for it in items if it.status == "promoted"]
        if promoted:
            raise review.AlreadyReviewed(review.describe(promoted[0].state)
                                         + "; undo that promotion first")
        draft = review.make_draft(target, items, place, description)
        return _editor(request, store, items=items, target=target, text=draft.text,
                       base=target.base, place=draft.place, description=description)
    return _save(request, store, items, target, place, description)


def _save(request: HttpRequest, store: Store, items: list[review.Item],
          target: review.Target, place: int | None, description: str) -> HttpResponse:
    text = _normalize(request.POST.get("text", ""))
    base = request.POST.get("base", "").strip()
    message = request.POST.get("message", "").strip()
    over_ok = request.POST.get("over_budget_ok") == "1"
    again = functools.partial(_editor, request, store, items=items, target=target, text=text,
                              base=base, place=place, description=description,
                              message=message)
    posted_path = request.POST.get("path")
    if posted_path and posted_path != target.path:
        return again(status=400, error=f"The target changed from {posted_path} to "
                     f"{target.path} in the form; check the text and save again.",
                     base=target.base)
    if has_conflict_markers(text) and not request.POST.get("allow_markers"):
        return again(status=400, markers=True,
                     error="The text still has merge markers (<<<<<<<, =======, >>>>>>>); "
                     "resolve them, or tick the box to save them as they are.")
    try:
        promo = review.promote_entries(store, user=_user(request),
                                       keys=[it.key for it in items], target=target,
                                       text=text, base=base, message=message,
                                       over_budget_ok=over_ok)
    except Conflict as exc:
        return _conflict(request, store, items, target, text, base, exc, again)
    except SkillError as exc:
        return again(status=400, problems=exc.problems,
                     error="The SKILL.md front matter breaks the Agent Skills rules:")
    except review.OverBudget as exc:
        return again(status=400, over_budget=True, error=str(exc))
    except StoreError as exc:
        return again(status=exc.status, error=str(exc))
    n = len(items)
    what = "1 entry" if n == 1 else f"{n} entries"
    messages.success(request, f"Promoted {what} into {promo.target_path} "
                     f"(commit {promo.commit_sha[:8]}).")
    if request.htmx:
        done = review.resolve(store, [it.key for it in items], missing_ok=True)
        slot = request.POST.get("slot") or ""
        return _done(request, done, bulk_done=slot == "bulk", recent=True)
    return HttpResponseRedirect(_next(request))


def _conflict(request: HttpRequest, store: Store, items: list[review.Item],
              target: review.Target, mine: str, base: str, exc: Conflict,
              again: Callable[..., HttpResponse]) -> HttpResponse:
    """409: nothing was written; their change, and a merge of it with the lead's text."""
    current = exc.current
    base_text, newer = find_base(store, target.path, base)
    merged, conflicts = None, 0
    if base_text is not None and current is not None:
        result = merge3(base_text, mine, current, store.git.state_dir)
        if result is not None:
            merged, conflicts = result.text, result.conflicts
    theirs = diff_texts(base_text if base_text is not None else mine, current, target.path)
    fresh = review.make_target(store, target.kind.value, target.scope, target.name)
    conflict = {
        "deleted": current is None, "commits": newer[:5],
        "theirs": file_views([theirs]), "base_known": base_text is not None,
        "merged": merged is not None, "conflicts": conflicts,
        "clean": merged is not None and conflicts == 0,
    }
    text = merged if merged is not None else mine
    return again(status=409, target=fresh, text=text, base=exc.version or ABSENT,
                 conflict=conflict, markers=conflicts > 0,
                 error=f"{target.path} changed since you opened the editor; nothing was "
                 "saved.")


# -- dismiss, reopen, undo ------------------------------------------------------------------------

@require_role(CURATOR)
@require_POST
@review_errors
def dismiss(request: HttpRequest) -> HttpResponse:
    store = get_store()
    items = review.dismiss(store, request.POST.getlist("entry"), _user(request))
    n = len(items)
    messages.success(request, "Dismissed 1 entry." if n == 1 else f"Dismissed {n} entries.")
    if request.htmx:
        return _done(request, items)
    return HttpResponseRedirect(_next(request))


@require_role(CURATOR)
@require_GET
@review_errors
def dismiss_confirm(request: HttpRequest) -> HttpResponse:
    """Without JavaScript, "dismiss selected" asks here (a GET form cannot POST)."""
    store = get_store()
    items = review.resolve(store, request.GET.getlist("entry"))
    if not items:
        raise review.ReviewError("select at least one entry first")
    return render(request, T + "dismiss_confirm.html", {"items": items, "next": _next(request)})


@require_role(CURATOR)
@require_POST
@review_errors
def reopen(request: HttpRequest) -> HttpResponse:
    store = get_store()
    items = review.reopen(store, request.POST.getlist("entry"))
    n = len(items)
    messages.success(request, "1 entry is back in the queue." if n == 1
                     else f"{n} entries are back in the queue.")
    if request.htmx:
        return _done(request, items)
    return HttpResponseRedirect(_next(request))


@require_role(CURATOR)
@require_POST
@review_errors
def undo(request: HttpRequest, pk: int) -> HttpResponse:
    store = get_store()
    promo = review.undo(store, pk, _user(request))
    where = f" (commit {promo.undo_commit_sha[:8]})" if promo.undo_commit_sha else ""
    messages.success(request, f"Undid the promotion into {promo.target_path}{where}; its "
                     "entries are back in the queue.")
    if request.htmx:
        # Entries come back into the queue wherever they belong: reload the page (the
        # message is shown there) rather than guess which of them this page holds.
        resp = HttpResponse("")
        resp["HX-Refresh"] = "true"
        return resp
    return HttpResponseRedirect(_next(request))
