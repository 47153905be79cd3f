"""What a lead decides: promote entries into a target (one commit), dismiss, put back, undo.

A promotion is one commit on the target carrying a `Promoted-From: <path>#<entry-id>`
trailer per entry; the ledger records it after the write (entries are reserved first, so
two leads cannot promote one entry twice). Undo is a new commit with `Reverts: <sha>`,
never a rewrite: a three-way revert with the store's merge (`git merge-file`), refused
when later edits touch the promoted lines. A dismissal (and putting an entry back) is
recorded in the ledger and, as an empty commit with a `Dismissed:` / `Reopened:` trailer
per entry, in history, so `rebuild` restores it too.

Plain Python: no Django (the ledger is passed in).
"""

from __future__ import annotations

from collections.abc import Iterable

from memoryui.store import DELETE, Actor, Kind, NotFound, Store, promote, skills
from memoryui.store.merge import merge3

from .drafts import budget_info, default_message
from .entries import Item
from .errors import AlreadyReviewed, OverBudget, ReviewError, UndoConflict
from .ledger import PROMOTED, Decision, Ledger, PromotionRecord
from .queue import resolve
from .targets import Target


def describe(ledger: Ledger, state: Decision) -> str:
    """One sentence for a lead: who decided what about an entry, where to, and when."""
    where = ""
    if state.status == PROMOTED and state.promotion is not None:
        p = state.promotion
        where = f" to {p.target_path} (commit {p.commit_sha[:8]})"
    return (f"the {state.date} entry {state.entry_id} of {state.scope} was already "
            f"{state.status}{where} by {state.reviewed_by} on "
            f"{ledger.local_time(state.reviewed_at)}")


def refuse_promoted(ledger: Ledger, items: list[Item], then: str) -> None:
    """AlreadyReviewed naming the first promoted entry, with what to do `then`."""
    promoted = [it for it in items if it.status == PROMOTED]
    if promoted and promoted[0].state is not None:
        raise AlreadyReviewed(f"{describe(ledger, promoted[0].state)}; {then}")


# Seconds a decision waits for the committer to commit its write before committing it itself
# (a live committer commits within a second; a worker stands in for one that lets writes
# wait for 2 s).
COMMIT_WAIT = 10.0


def promote_entries(store: Store, ledger: Ledger, *, actor: Actor, keys: Iterable[str],
                    target: Target, text: str, base: str, message: str = "",
                    over_budget_ok: bool = False) -> PromotionRecord:
    """Write the edited target in one commit with a Promoted-From trailer per entry.

    `base` is the target's version the editor started from: a stale one is the store's
    Conflict (409) and nothing is written or recorded.
    """
    items = resolve(store, ledger, keys)
    if not items:
        raise ReviewError("choose at least one entry to promote")
    if not base:
        raise ReviewError("the editor's base version is missing; reopen the editor")
    text = text.replace("\r\n", "\n")
    if not text.strip():
        raise ReviewError("the new text of the target is empty")
    if target.kind == Kind.SKILL:
        skills.validate(text, target.name)
    info = budget_info(store, target.kind, text, target.text)
    if info.crosses and not over_budget_ok:
        raise OverBudget(f"{target.path} would be {info.limits}, over its budget "
                         f"({info.budget.label if info.budget else ''}); confirm to save "
                         "anyway, or shorten it")
    refuse_promoted(ledger, items, "undo that promotion first")
    token = ledger.reserve(items, actor.name)
    trailers = [promote.promoted_from(it.path, it.entry.id) for it in items]
    try:
        res = store.write(target.path, text, actor=actor, tool="promote",
                          message=message.strip() or default_message(target, items),
                          expect=base, trailers=trailers)
        if not res.changed:
            raise ReviewError(f"{target.path} already has exactly this text; change it to "
                              "include the entries")
        sha = store.commit_for(res, wait=COMMIT_WAIT, or_commit=True) or ""
    except BaseException:
        ledger.release(token)
        raise
    return ledger.record_promotion(token, target_path=target.path,
                                   target_kind=target.kind.value, commit_sha=sha,
                                   user=actor.name)


def _decision_message(verb: str, items: list[Item]) -> str:
    scopes = ", ".join(sorted({it.scope for it in items}))
    n = len(items)
    if n == 1:
        it = items[0]
        return f"{verb} the {it.date}{' ' + it.time if it.time else ''} entry of {scopes}"
    return f"{verb} {n} entries of {scopes}"


def record(store: Store, actor: Actor, verb: str, trailer: str, items: list[Item]) -> str:
    """The decision about these entries as an empty commit, one trailer per entry."""
    if not items:
        return ""
    return promote.record_decision(store, actor, _decision_message(verb, items),
                                   [(trailer, it.key) for it in items],
                                   f"review-{verb.lower()}")


def dismiss(store: Store, ledger: Ledger, keys: Iterable[str], actor: Actor | str
            ) -> list[Item]:
    """Dismiss entries (the ledger, and an empty commit in history); promoted ones must be
    undone first. `actor` may be a bare user name (recorded as that user)."""
    if isinstance(actor, str):
        actor = Actor.user(actor)
    items = resolve(store, ledger, keys)
    if not items:
        raise ReviewError("choose at least one entry to dismiss")
    refuse_promoted(ledger, items, "undo the promotion first")
    fresh = [it for it in items if it.state is None]
    ledger.dismiss(items, actor.name)
    record(store, actor, "Dismiss", promote.DISMISSED, fresh)
    return items


def reopen(store: Store, ledger: Ledger, keys: Iterable[str], actor: Actor | None = None
           ) -> list[Item]:
    """Put dismissed entries back into the queue (recorded in history when an actor is
    given, as every view does)."""
    items = resolve(store, ledger, keys)
    refuse_promoted(ledger, items, "undo the promotion instead")
    were = [it for it in items if it.state is not None]
    ledger.reopen(items)
    for it in items:
        it.state = None
    if actor is not None:
        record(store, actor, "Reopen", promote.REOPENED, were)
    return items


def revert_text(store: Store, before: str, after: str, current: str) -> str | None:
    """Take a change (before -> after) back out of `current`; None when later edits
    touch the same lines."""
    if current == after:
        return before
    result = merge3(after, current, before, store.git.state_dir)
    if result is None or result.conflicts:
        return None
    return result.text


def undo(store: Store, ledger: Ledger, promotion_id: int, actor: Actor) -> PromotionRecord:
    """Revert a promotion with a new commit; its entries become undecided again.

    A promotion that created its file deletes it again (when nothing else was added).
    """
    promo = ledger.promotion(promotion_id)
    if promo is None:
        raise NotFound(f"no promotion {promotion_id}")
    if promo.undone_at is not None:
        raise AlreadyReviewed(f"this promotion was already undone by {promo.undone_by} on "
                              f"{ledger.local_time(promo.undone_at)}")
    path, sha = promo.target_path, promo.commit_sha
    current, version = store.read_versioned(path)
    undo_sha = ""
    if current is not None:
        after = store.file_at(path, sha) if store.resolve(sha) else None
        if after is None:
            raise UndoConflict(f"commit {sha[:8]} of this promotion is not in the history")
        parent = store.resolve(f"{sha}^")
        before = store.file_at(path, parent) if parent else None
        new = revert_text(store, before or "", after, current)
        if new is None:
            raise UndoConflict(
                f"{path} was changed since the promotion on the same lines, so it cannot be "
                f"reverted automatically; edit it by hand (promotion commit {sha[:8]})")
        trailers = [(promote.REVERTS, sha)]
        message = f"Undo promotion into {path}\n\nThis reverts the promotion commit {sha}."
        result: object = DELETE if before is None and not new.strip() else new
        res = store.update(path, lambda _old: result, actor=actor, tool="promote-undo",
                           message=message, expect=version, trailers=trailers)
        if res.changed:
            undo_sha = store.commit_for(res, wait=COMMIT_WAIT, or_commit=True) or ""
    ledger.mark_undone(promo, undo_commit_sha=undo_sha, user=actor.name)
    return promo
