"""Remove a secret from a file's current text (a new commit; history keeps the old one), and
let an admin allow a value the detector got wrong."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from memoryui.roles import ADMIN, CURATOR
from memoryui.secrets import redact
from memoryui.store import Conflict, NotFound, Store, StoreError
from memoryui.web import hierarchy
from memoryui.web.common import BadInput, actor_of, cleaned, saved
from memoryui.web.guards import role_view
from memoryui.web.links import file_url
from memoryui.workspace import get_store

from .forms import AllowForm, DigestForm, RemoveForm

ROTATE = "History still has it: rotate the secret (revoke it where it was issued)."


def _where(found: list) -> str:
    """The first findings as a person reads them: kind and line, never the value."""
    return ", ".join(f"{f.kind} on line {f.line}" for f in found[:5])


def secret_question(found: list) -> str:
    """Why the promotion editor asks before it saves text holding a secret."""
    return (f"The text contains a secret ({_where(found)}). Promoting copies it into memory "
            "every agent reads: remove it, or tick the box to promote it anyway. Nothing was "
            "saved.")


def flash_findings(request: HttpRequest, store: Store, path: str) -> None:
    """After a person saves: say which secrets the file now holds (flagged, not refused)."""
    found = store.secrets.findings(path)
    if found:
        messages.warning(request, f"Saved, but {path} contains a secret ({_where(found)}). "
                                  "Remove it from the text and rotate it: git history keeps it.")


@role_view(CURATOR, "POST")
def remove(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    store.abspath(path)  # an invalid path is a 400 before anything else
    d = cleaned(RemoveForm(request.POST))
    lines = [f.line for f in store.secrets.findings(path)]
    if not lines:
        messages.info(request, f"{path} has no secret to remove.")
        return HttpResponseRedirect(file_url(path))
    result = store.update(path, lambda old: None if old is None else redact(old, lines),
                          actor=actor_of(request), tool="remove-secret",
                          message=f"Remove secret from {path}", expect=d["version"])
    if not result.changed:
        messages.info(request, f"Nothing to replace in {path}.")
        return HttpResponseRedirect(file_url(path))
    messages.success(request, saved(f"Removed the secret from the current text of {path}",
                                    result, ROTATE))
    return HttpResponseRedirect(file_url(path))


@role_view(ADMIN, "POST")
def allow(request: HttpRequest, path: str) -> HttpResponse:
    store = get_store()
    store.abspath(path)  # an invalid path is a 400 before anything else
    d = cleaned(AllowForm(request.POST))
    text, version = store.read_versioned(path)
    if text is None:
        raise NotFound(f"{path} does not exist")
    if version != d["version"]:
        raise Conflict(f"{path} changed since you loaded it; reload the page", path=path,
                       current=None, version=version)
    match = [f for f in store.secrets.findings(path) if f.digest == d["digest"]]
    if not match:
        raise BadInput(f"that value is not a secret recorded in {path}; reload the page")
    store.secrets.allow.add(d["digest"], kind=match[0].kind, by=request.user.get_username(),
                            path=path)
    store.rescan_secrets([path])
    messages.success(request, f"Allowed the {match[0].kind} on line {match[0].line} of {path}: "
                              "this value is no longer reported anywhere in the workspace.")
    return HttpResponseRedirect(file_url(path))


@role_view(ADMIN, "GET", "POST")
def allowed(request: HttpRequest) -> HttpResponse:
    """The admin's allow list: what was allowed, by whom, where; POST takes one back."""
    store = get_store()
    if request.method == "POST":
        digest = cleaned(DigestForm(request.POST))["digest"]
        entry = store.secrets.allow.entries().get(digest)
        if entry is None:
            raise BadInput("that value is not on the allow list; reload the page")
        store.secrets.allow.remove(digest)
        if entry.get("path"):
            try:
                store.rescan_secrets([entry["path"]])
            except StoreError:
                pass  # the file is gone or renamed: `manage.py scan_secrets` finds it
        messages.success(request, f"Took back the allowed {entry.get('kind', 'value')}: it is "
                                  "reported again.")
        return HttpResponseRedirect(reverse("secret_allowed"))
    rows = sorted(store.secrets.allow.entries().items(), key=lambda kv: kv[1].get("path", ""))
    return render(request, "web/secrets/allowed.html",
                  {"rows": rows, "mode": store.secrets.mode, **hierarchy.sidebar(store)})
