"""Proposals over HTTP: list, show one with its diff, approve or reject (admin tokens).

A scope token sees its own scope's proposals only (another scope's answers 404, as if it
did not exist); deciding needs an admin token. A decision somebody made first answers 409
with the state it left (`state`), a conflict with the three texts to resolve.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from memoryui import proposing
from memoryui.api.auth import require_token
from memoryui.api.common import (
    ADMIN_ACTOR,
    ApiError,
    api_view,
    bad_request,
    forbidden,
    json_response,
    read_json_object,
)
from memoryui.models import ProposalDecision, Token
from memoryui.policies import KINDS
from memoryui.store import names

MAX_REASON = 2000
MAX_PROPOSER = 150


def _visible(tok: Token, view: proposing.ProposalView) -> bool:
    return tok.is_admin or (bool(tok.scope) and view.scope == tok.scope)


def _one(tok: Token, pid: str) -> proposing.ProposalView:
    view = proposing.get(pid)
    if not _visible(tok, view):
        raise ApiError("not_found", f"no proposal {pid[:40]!r}", 404)
    return view


def approver_of(tok: Token) -> str:
    """Who decides through an admin token, as the record and the commit name it."""
    return tok.name or ADMIN_ACTOR


@require_token()
@api_view("GET")
def list_proposals(request: HttpRequest) -> HttpResponse:
    """`{"proposals": [...]}`: open by default (`?status=`), filtered by scope, proposer, kind."""
    tok: Token = request.token
    status = request.GET.get("status") or ProposalDecision.OPEN
    if status not in ProposalDecision.STATUSES:
        raise bad_request(f"unknown status {status[:40]!r}; use one of: "
                          f"{', '.join(ProposalDecision.STATUSES)}")
    kind = request.GET.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise bad_request(f"unknown kind {kind[:40]!r}; use one of: {', '.join(KINDS)}")
    scope = request.GET.get("scope") or None
    if scope is not None:
        names.validate_scope(scope)
    proposer = request.GET.get("proposer") or None
    if proposer is not None and len(proposer) > MAX_PROPOSER:
        raise bad_request(f"proposer is at most {MAX_PROPOSER} characters")
    if not tok.is_admin:
        if scope and scope != tok.scope:
            raise forbidden(f"this token acts only for scope '{tok.scope}', not '{scope[:64]}'")
        scope = tok.scope or "\0"  # (a token bound to no scope sees none)
    views = proposing.open_proposals(scope=scope, proposer=proposer, kind=kind, status=status)
    return json_response({"proposals": [v.as_dict() for v in views],
                          "open": proposing.open_count(None if tok.is_admin else scope)})


@require_token()
@api_view("GET")
def proposal_detail(request: HttpRequest, pid: str) -> HttpResponse:
    """One proposal with its base, proposed and current texts and the diff."""
    view = _one(request.token, pid)
    return json_response({"proposal": view.as_dict(texts=True)})


@require_token(admin=True)
@api_view("POST")
def approve(request: HttpRequest, pid: str) -> HttpResponse:
    """Merge it (`text`: the curator's version instead; `recreate`: bring back a file
    deleted since). 200 with the merge commit."""
    tok: Token = request.token
    body = read_json_object(request, allowed=("text", "recreate"), empty={})
    text = body.get("text")
    if text is not None and not isinstance(text, str):
        raise bad_request("field 'text' must be a string")
    recreate = body.get("recreate", False)
    if not isinstance(recreate, bool):
        raise bad_request("field 'recreate' must be true or false")
    _one(tok, pid)
    try:
        sha = proposing.approve(pid, approver_of(tok), edited_text=text, recreate=recreate)
    except proposing.AlreadyDecided as exc:
        raise ApiError("already_decided", str(exc), 409, state=exc.state,
                       proposal=exc.view.as_dict()) from None
    except proposing.MergeConflict as exc:
        raise ApiError("merge_conflict", str(exc), 409, base=exc.base, current=exc.ours,
                       proposed=exc.theirs, merged=exc.merged) from None
    return json_response({"proposal": proposing.get(pid).as_dict(), "commit": sha})


@require_token(admin=True)
@api_view("POST")
def reject(request: HttpRequest, pid: str) -> HttpResponse:
    """Close it without merging, with a `reason`; its commits are kept."""
    tok: Token = request.token
    body = read_json_object(request, allowed=("reason",), empty={})
    reason = body.get("reason", "")
    if not isinstance(reason, str):
        raise bad_request("field 'reason' must be a string")
    if len(reason) > MAX_REASON:
        raise bad_request(f"the reason is at most {MAX_REASON} characters")
    _one(tok, pid)
    try:
        view = proposing.reject(pid, approver_of(tok), reason)
    except proposing.AlreadyDecided as exc:
        raise ApiError("already_decided", str(exc), 409, state=exc.state,
                       proposal=exc.view.as_dict()) from None
    return json_response({"proposal": view.as_dict()})
