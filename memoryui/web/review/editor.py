"""The promotion editor: rendering it (fragment in the queue, or a page) and saving it.

A save is refused with the editor shown again, the lead's text kept: a stale target
(409, with a merge of their change), broken SKILL.md rules, a budget crossed without
confirmation, merge markers left in the text.
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from memoryui import review
from memoryui.review import similar
from memoryui.review.drafts import refit_draft
from memoryui.review.state import LEDGER
from memoryui.store import Conflict, Store, StoreError
from memoryui.store import promote as promote_text
from memoryui.store.merge import has_conflict_markers
from memoryui.store.skills import SkillError
from memoryui.web import hierarchy
from memoryui.web.common import (
    actor_of,
    conflict_context,
    is_fragment,
    normalize_text,
    preview_context,
    vary,
)
from memoryui.web.secrets.views import secret_question

from .helpers import T, done


def editor(request: HttpRequest, store: Store, ctx: dict, data: dict, *,
           items: list[review.Item], target: review.Target | None, text: str = "",
           base: str = "", place: int | None = None, message: str = "", status: int = 200,
           error: str = "", name_error: str = "", problems: list[str] | None = None,
           conflict: dict | None = None, over_budget: bool = False, markers: bool = False,
           kind: str = "", started: str | None = None, carried: str = "") -> HttpResponse:
    """The editor; `target` is None while the lead still has to name a topic or skill
    (then `carried` is the path the lead's text was for, kept for the next refit).

    `started` is the draft as built, before the lead's edits (sent back by a refit)."""
    slot = data["slot"]
    if started is None:
        started = data.get("started") or text
    ctx = {
        **ctx, "items": items, "target": target, "text": text, "base": base, "place": place,
        "started": started, "carried": carried,
        "description": data["description"].strip(), "message": message, "error": error,
        "name_error": name_error, "problems": problems or [], "conflict": conflict,
        "markers": markers, "already": [it for it in items if it.status == "promoted"],
        "slot": slot, "entry_keys": [it.key for it in items], "once": data.get("once"),
        "kind": target.kind.value if target else kind,
        "name": (target.name if target else data["name"].strip()) or "",
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
            "preview": preview_context(store, text, kind=target.kind), "path": target.path,
            "known_lines": sorted({k.line for k in similar.known_in(  # already in the target
                store, target.path, [it.entry.text for it in items]) if k}),
        })
    # htmx swaps the editor section itself, in the queue or on the editor's own page.
    name = "_promote_editor.html" if is_fragment(request) else "promote.html"
    return vary(render(request, T + name, ctx, status=status))


def provenance() -> bool:
    """MEMORYUI_PROVENANCE: a dated marker linking back to each entry, or none."""
    return getattr(settings, "MEMORYUI_PROVENANCE", "marker") == "marker"


def _target_of(store: Store, path: str) -> review.Target | None:
    """The target the editor's text was for (its posted path), None when it is not one."""
    try:
        addr = store.address_of(path) if path else None
        if addr is None:
            return None
        return review.make_target(store, addr.kind.value, addr.scope, addr.name)
    except StoreError:
        return None


def open_draft(request: HttpRequest, store: Store, ctx: dict, data: dict,
               items: list[review.Item], target: review.Target) -> HttpResponse:
    """The draft for the chosen target and place; a refit keeps the lead's edits."""
    review.refuse_promoted(LEDGER, items, "undo that promotion first")
    description = data["description"].strip()
    drafted = items[-1:] if data.get("once") else items  # newest (resolve: oldest first)
    fresh = review.make_draft(target, drafted, data["place"], description,
                              provenance=provenance())
    draft = fresh
    if data["refit"] and data["text"]:
        draft = refit_draft(_target_of(store, data["path"]), target, drafted,
                            text=normalize_text(data["text"]),
                            started=normalize_text(data["started"]), place=data["place"],
                            description=description, provenance=provenance())
    return editor(request, store, ctx, data, items=items, target=target, text=draft.text,
                  base=target.base, place=draft.place, started=fresh.text)


def save(request: HttpRequest, store: Store, ctx: dict, data: dict,
         items: list[review.Item], target: review.Target) -> HttpResponse:
    """One commit on the target, or the editor again saying why not (nothing written)."""
    text = review.fill_description(target, normalize_text(data["text"]),
                                   normalize_text(data["started"]), data["description"])
    base = data["base"].strip()
    again = functools.partial(editor, request, store, ctx, data, items=items, target=target,
                              text=text, base=base, place=data["place"],
                              message=data["message"].strip())
    posted_path = data["path"]
    if posted_path and posted_path != target.path:
        return again(status=400, error=f"The target changed from {posted_path} to "
                     f"{target.path} in the form; check the text and save again.",
                     base=target.base)
    if has_conflict_markers(text) and not data["allow_markers"]:
        return again(status=400, markers=True,
                     error="The text still has merge markers (<<<<<<<, =======, >>>>>>>); "
                     "resolve them, or tick the box to save them as they are.")
    if not data["secret_ok"] and (found := store.secrets.scan(text)):  # memoryui/web/secrets
        return editor(request, store, {**ctx, "secret_found": found}, data, items=items,
                      target=target, text=text, base=base, place=data["place"],
                      message=data["message"].strip(), status=400,
                      error=secret_question(found))
    try:
        promo = review.promote_entries(store, LEDGER, actor=actor_of(request),
                                       keys=[it.key for it in items], target=target,
                                       text=text, base=base, message=data["message"],
                                       over_budget_ok=data["over_budget_ok"])
    except Conflict as exc:
        view = conflict_context(store, target.path, mine=text, base=base, exc=exc)
        fresh = review.make_target(store, target.kind.value, target.scope, target.name)
        return again(status=409, target=fresh, text=view.text, base=view.base,
                     conflict=view.ctx, markers=view.markers,
                     error=f"{target.path} changed since you opened the editor; nothing was "
                     "saved.")
    except SkillError as exc:
        return again(status=400, problems=exc.problems,
                     error="The SKILL.md front matter breaks the Agent Skills rules:")
    except review.OverBudget as exc:
        return again(status=400, over_budget=True, error=str(exc))
    except StoreError as exc:
        return again(status=exc.status, error=str(exc))
    n = len(items)
    messages.success(request, f"Promoted {'1 entry' if n == 1 else f'{n} entries'} into "
                     f"{promo.target_path} (commit {promo.commit_sha[:8]}).")
    if not is_fragment(request):
        return HttpResponseRedirect(ctx["next"])
    if data["slot"] == "page":  # the editor's own page: go back to where the lead came from
        return vary(HttpResponse(headers={"HX-Redirect": ctx["next"]}))
    touched = review.resolve(store, LEDGER, [it.key for it in items], missing_ok=True)
    return done(request, touched, ctx["next"], bulk_done=data["slot"] == "bulk", recent=True)
