"""Proposals for the API, MCP and the pages: the shared record (`ProposalDecision`, one row
per proposal, so every instance shows one inbox) over the branches in git
(`store/proposals.py`), the decisions, and the webhook told of each new proposal.

Decisions take a row lock (`select_for_update`) so two curators never both decide one
proposal: the second gets `AlreadyDecided` with the state the first left (a 409).
"""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from dataclasses import dataclass
from functools import cached_property

from django.conf import settings
from django.db import transaction
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from memoryui.models import ProposalDecision, Token
from memoryui.policies import limited, policy_for, policy_for_path
from memoryui.store import Actor, Store, StoreError, proposals
from memoryui.store.agentview import AgentStore
from memoryui.store.approving import FileDeleted, MergeConflict, merge
from memoryui.store.diffs import diff_texts, unified_text
from memoryui.store.errors import Conflicting, Missing
from memoryui.store.proposals import Proposal, ProposalClosed, ProposalNotFound

log = logging.getLogger("memoryui.proposals")

WEBHOOK_TIMEOUT = 5.0  # seconds a webhook POST may take (it never holds up a write)
WEBHOOK_DIFF_LINES = 40  # lines of diff a webhook body carries
__all__ = ["AlreadyDecided", "FileDeleted", "MergeConflict", "NotFound", "ProposalView",
           "agent_store", "approve", "get", "open_count", "open_proposals", "reject"]


class NotFound(Missing, StoreError):
    """No proposal has that id."""


class AlreadyDecided(Conflicting, StoreError):
    """Somebody decided the proposal already; `state` says how (a 409 with it)."""

    code = "already_decided"

    def __init__(self, view: ProposalView):
        who = f" by {view.decided_by}" if view.decided_by else ""
        super().__init__(f"proposal {view.id} was {view.status} already{who}")
        self.state = view.status
        self.view = view


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


@dataclass
class ProposalView:
    """One proposal as the inbox shows it: the shared row, and its texts from git (read
    when asked: a list of a thousand open proposals reads none)."""

    row: ProposalDecision
    store: Store

    id = property(lambda self: self.row.proposal_id)
    path = property(lambda self: self.row.path)
    scope = property(lambda self: self.row.scope)
    kind = property(lambda self: self.row.kind)
    proposer = property(lambda self: self.row.proposer)
    created = property(lambda self: self.row.created_at)
    updated = property(lambda self: self.row.updated_at)
    status = property(lambda self: self.row.status)
    decided_by = property(lambda self: self.row.decided_by)
    decided_at = property(lambda self: self.row.decided_at)
    reason = property(lambda self: self.row.reason)
    merge_sha = property(lambda self: self.row.merge_sha)

    @cached_property
    def proposal(self) -> Proposal | None:
        """Its branch, None while this instance has not fetched it yet (sync)."""
        try:
            return proposals.get(self.store, self.id, self.scope)
        except ProposalNotFound:
            return None

    @property
    def available(self) -> bool:
        return self.proposal is not None

    @cached_property
    def base_text(self) -> str | None:
        p = self.proposal
        return None if p is None else _text(proposals.text_at(self.store, p.base, p.path))

    @cached_property
    def proposed_text(self) -> str | None:
        p = self.proposal
        return None if p is None else _text(proposals.proposed(p, self.store))

    @cached_property
    def current_text(self) -> str | None:
        return self.store.read(self.path)

    @property
    def stale(self) -> bool:
        """The file changed since the proposal's base."""
        return self.available and self.current_text != self.base_text

    @property
    def deleted(self) -> bool:
        """The file was there at the proposal's base and is gone now."""
        return self.available and self.base_text is not None and self.current_text is None

    @property
    def removes(self) -> bool:
        """The proposal deletes the file."""
        return self.available and self.proposed_text is None

    @cached_property
    def policy_now(self) -> str:
        return policy_for(self.scope, self.kind, self.row.token) if self.kind else "write"

    @property
    def policy_changed(self) -> bool:
        """The policy is no longer `propose`; the proposal stays open all the same."""
        return self.policy_now != "propose"

    @property
    def pushed_by(self) -> str:
        """The host token's name when the proposal came by `git push` to refs/for/."""
        tok = self.row.token
        return (tok.name or tok.prefix) if tok is not None and tok.is_host else ""

    @cached_property
    def proposer_revoked(self) -> bool:
        tok = self.row.token
        return tok is not None and tok.revoked_at is not None

    @property
    def commits(self) -> list[str]:
        p = self.proposal
        return [] if p is None else p.commits

    @cached_property
    def diff(self) -> str:
        """The proposal against the current file, unified."""
        if self.current_text == self.proposed_text:
            return ""
        return unified_text(diff_texts(self.current_text, self.proposed_text, self.path))

    def as_dict(self, texts: bool = False) -> dict:
        d = {"id": self.id, "path": self.path, "scope": self.scope, "kind": self.kind,
             "proposer": self.proposer, "status": self.status,
             "created": self.created.isoformat(), "updated": self.updated.isoformat(),
             "decided_by": self.decided_by or None,
             "decided_at": self.decided_at.isoformat() if self.decided_at else None,
             "reason": self.reason or None, "merge_commit": self.merge_sha or None,
             "policy_now": self.policy_now, "proposer_revoked": self.proposer_revoked}
        if texts:
            d.update({"available": self.available, "stale": self.stale,
                      "deleted": self.deleted, "removes": self.removes,
                      "commits": self.commits, "base_text": self.base_text,
                      "proposed_text": self.proposed_text, "current_text": self.current_text,
                      "diff": self.diff})
        return d


def _store() -> Store:
    from memoryui.workspace import get_store
    return get_store()


def open_proposals(scope: str | None = None, proposer: str | None = None,
                   kind: str | None = None, status: str = ProposalDecision.OPEN,
                   path: str | None = None) -> list[ProposalView]:
    """The proposals in a state (open by default), oldest first, filtered."""
    rows = ProposalDecision.objects.filter(status=status).select_related("token")
    if scope:
        rows = rows.filter(scope=scope)
    if proposer:
        rows = rows.filter(proposer=proposer)
    if kind:
        rows = rows.filter(kind=kind)
    if path:
        rows = rows.filter(path=path)
    store = _store()
    return [ProposalView(row, store) for row in rows]


def get(pid: str) -> ProposalView:
    row = ProposalDecision.objects.select_related("token").filter(proposal_id=str(pid)[:12]) \
        .first()
    if row is None or row.proposal_id != pid:
        raise NotFound(f"no proposal {str(pid)[:40]!r}")
    return ProposalView(row, _store())


def open_count(scope: str | None = None) -> int:
    rows = ProposalDecision.objects.filter(status=ProposalDecision.OPEN)
    return (rows.filter(scope=scope) if scope else rows).count()


def _decide(pid: str) -> ProposalDecision:
    """The row, locked for this transaction; AlreadyDecided unless it is open."""
    row = ProposalDecision.objects.select_for_update().filter(proposal_id=pid).first()
    if row is None:
        raise NotFound(f"no proposal {str(pid)[:40]!r}")
    if row.status != ProposalDecision.OPEN:
        raise AlreadyDecided(ProposalView(row, _store()))
    return row


def approve(pid: str, approver_name: str, approver_email: str | None = None,
            edited_text: str | None = None, *, edited: bool | None = None,
            recreate: bool = False) -> str:
    """Approve (merge) a proposal; the merge commit's sha. `edited_text` (or `edited` with
    None: delete) is the curator's version, committed on the proposal first."""
    actor = Actor.user(approver_name, approver_email)
    store = _store()
    with transaction.atomic():
        row = _decide(pid)
        try:
            sha = merge(store, pid, approver=actor, edited_text=edited_text,
                        edited=edited if edited is not None else edited_text is not None,
                        recreate=recreate, scope=row.scope)
        except ProposalClosed as exc:  # decided in git meanwhile (another instance)
            row.status = exc.state if exc.state in ProposalDecision.STATUSES else row.status
            raise AlreadyDecided(ProposalView(row, store)) from None
        except ProposalNotFound:
            raise NotFound(f"proposal {pid} has not reached this instance yet; sync, then "
                           "try again") from None
        row.status, row.decided_by, row.decided_at = ProposalDecision.APPROVED, \
            approver_name, timezone.now()
        row.merge_sha, row.updated_at = sha, timezone.now()
        row.save()
    return sha


def reject(pid: str, approver: str, reason: str = "", approver_email: str | None = None
           ) -> ProposalView:
    """Reject a proposal with a reason; its commits stay under refs/memoryui/rejected/."""
    store = _store()
    with transaction.atomic():
        row = _decide(pid)
        try:
            proposals.reject(store, pid, actor=Actor.user(approver, approver_email),
                             reason=reason, scope=row.scope)
        except ProposalNotFound:
            pass  # not fetched here yet: the record decides, the branch follows at sync
        except ProposalClosed as exc:
            row.status = exc.state if exc.state in ProposalDecision.STATUSES else row.status
            raise AlreadyDecided(ProposalView(row, store)) from None
        row.status, row.decided_by, row.decided_at = ProposalDecision.REJECTED, approver, \
            timezone.now()
        row.reason, row.updated_at = reason, timezone.now()
        row.save()
        return ProposalView(row, store)


# -- the agents' side ------------------------------------------------------------------------

def recorded(p: Proposal, created: bool, token: Token | None, store: Store, *,
             webhook: bool = True) -> None:
    """Note a proposal made or extended by an agent; a new one is announced (webhook),
    unless the caller announces it itself (`webhook=False`: a short-lived process)."""
    addr = store.address_of(p.path)
    kind = str(addr.kind) if addr else ""
    now = timezone.now()
    row, made = ProposalDecision.objects.get_or_create(
        proposal_id=p.id, defaults={"path": p.path, "scope": p.scope, "kind": kind,
                                    "proposer": p.proposer.name, "token": token,
                                    "created_at": now, "updated_at": now})
    if not made:
        ProposalDecision.objects.filter(pk=row.pk).update(updated_at=now)
    if made and webhook:
        announce(ProposalView(row, store))


def agent_store(store: Store, scope: str, token: Token | None) -> Store | AgentStore:
    """The store as an agent acting for `scope` ("" for none) with `token` sees it: the
    store itself when no policy of the workspace is `propose` or `read` and the token may
    write, else an `AgentStore` (a read-only token: every path `read`)."""

    if token is not None and token.read_only:
        return AgentStore(store, scope, lambda _path: "read")
    if not limited(token):
        return store

    def policy(path: str) -> str:
        return policy_for_path(store, path, scope or None, token)

    def on_proposed(p: Proposal, created: bool) -> None:
        recorded(p, created, token, store)
    return AgentStore(store, scope, policy, on_proposed)


# -- the webhook ---------------------------------------------------------------------------------

def inbox_url(pid: str) -> str:
    """Where the proposal's card is: the site's origin (CSRF_TRUSTED_ORIGINS' first) and
    the inbox's path."""
    try:
        path = reverse("proposal", args=[pid])
    except NoReverseMatch:  # (a deployment without the web UI's inbox)
        path = f"/review/proposals/{pid}/"
    origins = getattr(settings, "CSRF_TRUSTED_ORIGINS", [])
    return (origins[0].rstrip("/") if origins else "") + path


def webhook_body(view: ProposalView) -> dict:
    lines = view.diff.splitlines()
    diff = "\n".join(lines[:WEBHOOK_DIFF_LINES])
    if len(lines) > WEBHOOK_DIFF_LINES:
        diff += f"\n… {len(lines) - WEBHOOK_DIFF_LINES} more lines"
    return {"event": "proposal.created", "id": view.id, "path": view.path,
            "scope": view.scope, "kind": view.kind, "proposer": view.proposer,
            "created": view.created.isoformat(), "url": inbox_url(view.id), "diff": diff,
            "text": f"{view.proposer} proposes a change to {view.path}"}


def announce(view: ProposalView) -> threading.Thread | None:
    """POST the new proposal to MEMORYUI_PROPOSAL_WEBHOOK in a thread of its own (a slow or
    failing hook is logged, never felt by the agent's write)."""
    url = getattr(settings, "MEMORYUI_PROPOSAL_WEBHOOK", "")
    if not url:
        return None

    def post() -> None:
        try:
            body = json.dumps(webhook_body(view), ensure_ascii=False).encode()
        except Exception:  # noqa: BLE001 - a body that cannot be built only loses the hook
            log.exception("proposal webhook: could not describe proposal %s", view.id)
            return
        req = urllib.request.Request(url, data=body, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": "memoryui"})
        try:
            with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT) as resp:  # noqa: S310
                resp.read(1024)
        except Exception as exc:  # noqa: BLE001
            log.warning("proposal webhook to %s failed for %s: %s", url, view.id, exc)
    thread = threading.Thread(target=post, name=f"proposal-webhook-{view.id}", daemon=True)
    thread.start()
    return thread
